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
import java.nio.channels.spi.AsynchronousChannelProvider;
import java.nio.channels.spi.SelectorProvider;

/**
 * Access to the JDK's own NIO implementation ({@code sun.nio.ch}), which a replacement
 * provider needs and the JDK offers no public API for: once
 * {@code -Djava.nio.channels.spi.SelectorProvider} names our class,
 * {@link SelectorProvider#provider()} returns us, and the platform's provider (for the
 * kernel TCP bootstrap, {@code DatagramChannel}, {@code Pipe}) is only reachable as
 * {@code sun.nio.ch.DefaultSelectorProvider.get()}, in a package {@code java.base}
 * does not export.
 *
 * <p>When the application was started with
 * {@code --add-exports java.base/sun.nio.ch=ALL-UNNAMED}, plain reflection works.
 * Otherwise we export the package ourselves, so that one system property is all an
 * application needs: through FFM we call the JVM's invocation interface
 * ({@code JNI_GetCreatedJavaVMs}, {@code GetEnv}) and, via JNI (which is not subject
 * to module checks), {@code java.base}'s {@code Module.implAddExportsToAllUnnamed("sun.nio.ch")}
 * - what the launcher itself does for {@code --add-exports}. Every JNI local reference
 * is turned into a global one in the very next call, as FFM downcalls have no JNI frame.
 */
public final class JdkInternals {
    private static final String PACKAGE = "sun.nio.ch";
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
    // the one descriptor every JNI call here uses (see callModuleMethodThroughJni)
    private static final FunctionDescriptor JNI_CALL = WordCalls.call(4);

    private JdkInternals() {
    }

    /** The platform's default provider, or throws explaining why it is out of reach. */
    public static synchronized SelectorProvider platformProvider() {
        try {
            ensureExported();
            Object provider = Class.forName(PACKAGE + ".DefaultSelectorProvider").getMethod("get").invoke(null);
            return (SelectorProvider) provider;
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("cannot reach the JDK's default SelectorProvider; start the JVM with "
                    + "--add-exports java.base/sun.nio.ch=ALL-UNNAMED", e);
        }
    }

    /**
     * The platform's default {@code AsynchronousChannelProvider} (its own epoll port, kernel
     * sockets only), or throws explaining why it is out of reach: what NIO.2 falls back to.
     */
    public static synchronized AsynchronousChannelProvider platformAsynchronousProvider() {
        try {
            ensureExported();
            Object provider = Class.forName(PACKAGE + ".DefaultAsynchronousChannelProvider").getMethod("create")
                    .invoke(null);
            return (AsynchronousChannelProvider) provider;
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("cannot reach the JDK's default AsynchronousChannelProvider; start the JVM "
                    + "with --add-exports java.base/sun.nio.ch=ALL-UNNAMED", e);
        }
    }

    /** Exports sun.nio.ch to the unnamed modules unless it already is. */
    public static void ensureExported() {
        ensureExported(PACKAGE);
    }

    /**
     * Exports {@code java.base}'s package {@code pkg} to the unnamed modules unless it
     * already is ({@code --add-exports java.base/pkg=ALL-UNNAMED}).
     */
    static void ensureExported(String pkg) {
        grantToAllUnnamed(pkg, false);
    }

    /**
     * Opens {@code java.base}'s package {@code pkg} to the unnamed modules unless it already
     * is ({@code --add-opens java.base/pkg=ALL-UNNAMED}): for a package-private method that a
     * lookup must reach ({@link VirtualThreadParking}).
     */
    static void ensureOpened(String pkg) {
        grantToAllUnnamed(pkg, true);
    }

    /** Exports ({@code open} false) or opens {@code pkg} to the unnamed modules, as the launcher's option would. */
    private static void grantToAllUnnamed(String pkg, boolean open) {
        Module base = Object.class.getModule();
        Module us = JdkInternals.class.getModule();
        if (open ? base.isOpen(pkg, us) : base.isExported(pkg, us)) {
            return;
        }
        String method = open ? "implAddOpensToAllUnnamed" : "implAddExportsToAllUnnamed";
        String option = (open ? "--add-opens" : "--add-exports") + " java.base/" + pkg + "=ALL-UNNAMED";
        try {
            callModuleMethodThroughJni(pkg, method);
        } catch (Throwable t) {
            throw new IllegalStateException(method + "(" + pkg + ") failed: " + t + "; start the JVM with " + option, t);
        }
        if (!(open ? base.isOpen(pkg, us) : base.isExported(pkg, us))) {
            throw new IllegalStateException(pkg + " still not " + (open ? "open" : "exported")
                    + "; start the JVM with " + option);
        }
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
    private static void callModuleMethodThroughJni(String pkg, String method) throws Throwable {
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
