package io.hadronio.platform;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import io.hadronio.ucx.WordCalls;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;

/**
 * The same call as {@link NativeGrant}'s, made without a library of our own: through FFM we call
 * the JVM's invocation interface ({@code JNI_GetCreatedJavaVMs}, {@code GetEnv}) and, via JNI
 * (which is not subject to module checks), {@code java.base}'s private {@code Module} method.
 * Every JNI local reference is turned into a global one in the very next call, as FFM downcalls
 * have no JNI frame. The fallback where the jar has no JNI library for this machine: in a cold
 * JVM its first downcall bootstraps the foreign linker (~110-160 ms). A class of its own so that
 * {@link JdkInternals} loads none of FFM when it is not needed.
 */
final class JniThroughFfm {
    // JNI_VERSION_1_8
    private static final int JNI_VERSION = 0x00010008;
    // slots in JNIInvokeInterface_ / JNINativeInterface_ (checked against jni.h by a test)
    static final int VM_GET_ENV = 6;
    static final int ENV_FIND_CLASS = 6;
    static final int ENV_EXCEPTION_DESCRIBE = 16;
    static final int ENV_EXCEPTION_CLEAR = 17;
    static final int ENV_NEW_GLOBAL_REF = 21;
    static final int ENV_GET_METHOD_ID = 33;
    static final int ENV_CALL_OBJECT_METHOD_A = 36;
    static final int ENV_CALL_VOID_METHOD_A = 63;
    static final int ENV_NEW_STRING_UTF = 167;
    static final int ENV_EXCEPTION_CHECK = 228;
    // the one descriptor every JNI call here uses (see call)
    private static final FunctionDescriptor JNI_CALL = WordCalls.call(4);

    private JniThroughFfm() {
    }

    /**
     * Calls {@code java.base}'s {@code Module.<method>(pkg)} (a private method: JNI does not check access).
     * Every JNI function is called with one shared word descriptor ({@link WordCalls}): its
     * pointers as addresses, its {@code jint} widened, its {@code jboolean} the low byte of the result.
     * One descriptor for all, four arguments ({@link #JNI_CALL}): each new call shape costs a cold JVM
     * a class and its lambda forms, and this runs in front of the JVM's first {@code connect}. A
     * function of fewer parameters gets zeros for the rest, which it never reads (on x86-64 System V
     * and AArch64 the first four integer arguments travel in registers, and none of these functions
     * is variadic); a {@code void} function's result register is ignored.
     */
    static void call(String pkg, String method) throws Throwable {
        Linker linker = Linker.nativeLinker();
        SymbolLookup jvm = SymbolLookup.libraryLookup(
                System.getProperty("java.home") + "/lib/server/libjvm.so", Arena.global());
        MethodHandle getVms = linker.downcallHandle(jvm.find("JNI_GetCreatedJavaVMs").orElseThrow(), JNI_CALL);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment vmOut = arena.allocate(ADDRESS);
            MemorySegment count = arena.allocate(JAVA_INT);
            check((int) (long) getVms.invokeExact(vmOut.address(), 1L, count.address(), 0L) == 0
                    && count.get(JAVA_INT, 0) == 1, "JNI_GetCreatedJavaVMs");
            MemorySegment vm = vmOut.get(ADDRESS, 0).reinterpret(8);
            MemorySegment vmFunctions = vm.get(ADDRESS, 0).reinterpret(8L * 8);
            MethodHandle getEnv = linker.downcallHandle(vmFunctions.getAtIndex(ADDRESS, VM_GET_ENV), JNI_CALL);
            MemorySegment envOut = arena.allocate(ADDRESS);
            check((int) (long) getEnv.invokeExact(vm.address(), envOut.address(), (long) JNI_VERSION, 0L) == 0, "GetEnv");
            MemorySegment envSegment = envOut.get(ADDRESS, 0).reinterpret(8);
            long env = envSegment.address();
            MemorySegment fns = envSegment.get(ADDRESS, 0).reinterpret(8L * 240);

            MethodHandle findClass = fn(linker, fns, ENV_FIND_CLASS, JNI_CALL);
            MethodHandle newGlobalRef = fn(linker, fns, ENV_NEW_GLOBAL_REF, JNI_CALL);
            MethodHandle getMethodId = fn(linker, fns, ENV_GET_METHOD_ID, JNI_CALL);
            MethodHandle callObject = fn(linker, fns, ENV_CALL_OBJECT_METHOD_A, JNI_CALL);
            MethodHandle callVoid = fn(linker, fns, ENV_CALL_VOID_METHOD_A, JNI_CALL);
            MethodHandle newString = fn(linker, fns, ENV_NEW_STRING_UTF, JNI_CALL);
            MethodHandle exceptionCheck = fn(linker, fns, ENV_EXCEPTION_CHECK, JNI_CALL);
            MethodHandle exceptionClear = fn(linker, fns, ENV_EXCEPTION_CLEAR, JNI_CALL);

            long objectName = arena.allocateFrom("java/lang/Object").address();
            long className = arena.allocateFrom("java/lang/Class").address();
            long moduleName = arena.allocateFrom("java/lang/Module").address();
            long getModule = arena.allocateFrom("getModule").address();
            long getModuleSig = arena.allocateFrom("()Ljava/lang/Module;").address();
            long addExports = arena.allocateFrom(method).address();
            long addExportsSig = arena.allocateFrom("(Ljava/lang/String;)V").address();
            long packageName = arena.allocateFrom(pkg).address();
            MemorySegment args = arena.allocate(ADDRESS);

            long objectClass = (long) newGlobalRef.invokeExact(env,
                    (long) findClass.invokeExact(env, objectName, 0L, 0L), 0L, 0L);
            long classClass = (long) newGlobalRef.invokeExact(env,
                    (long) findClass.invokeExact(env, className, 0L, 0L), 0L, 0L);
            long moduleClass = (long) newGlobalRef.invokeExact(env,
                    (long) findClass.invokeExact(env, moduleName, 0L, 0L), 0L, 0L);
            check(objectClass != 0 && classClass != 0 && moduleClass != 0, "FindClass");
            long getModuleId = (long) getMethodId.invokeExact(env, classClass, getModule, getModuleSig);
            long addExportsId = (long) getMethodId.invokeExact(env, moduleClass, addExports, addExportsSig);
            if ((byte) (long) exceptionCheck.invokeExact(env, 0L, 0L, 0L) != 0 || addExportsId == 0) {
                long ignored = (long) exceptionClear.invokeExact(env, 0L, 0L, 0L);
                throw new IllegalStateException("Module." + method + " not found");
            }
            long javaBase = (long) newGlobalRef.invokeExact(env,
                    (long) callObject.invokeExact(env, objectClass, getModuleId, 0L), 0L, 0L);
            long name = (long) newGlobalRef.invokeExact(env,
                    (long) newString.invokeExact(env, packageName, 0L, 0L), 0L, 0L);
            args.set(JAVA_LONG, 0, name);
            long ignored = (long) callVoid.invokeExact(env, javaBase, addExportsId, args.address());
            if ((byte) (long) exceptionCheck.invokeExact(env, 0L, 0L, 0L) != 0) {
                ignored = (long) exceptionClear.invokeExact(env, 0L, 0L, 0L);
                throw new IllegalStateException("Module." + method + " threw");
            }
            // the global references (two classes, a module, a string) are kept: a few bytes, once per JVM
        }
    }

    private static MethodHandle fn(Linker linker, MemorySegment functions, int slot, FunctionDescriptor fd) {
        return linker.downcallHandle(functions.getAtIndex(ADDRESS, slot), fd);
    }

    private static void check(boolean ok, String what) {
        if (!ok) {
            throw new IllegalStateException(what + " failed");
        }
    }
}
