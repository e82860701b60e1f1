package io.hadronio.platform;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Both routes to java.base's private Module methods that export or open a package to the
 * unnamed modules: our JNI library, built into the classes by this build, and the fallback
 * through FFM with the JVM's JNI function tables, whose slot numbers must match jni.h.
 * Each case uses a package of java.base that nothing else in the test JVM exports or opens.
 */
class JdkInternalsTest {
    private static final Module BASE = Object.class.getModule();
    private static final Module US = JdkInternalsTest.class.getModule();

    @Test
    void shouldCarryTheJniLibraryForThisMachineAndExportThroughIt() {
        assertNotNull(NativeGrant.class.getResource(NativeGrant.RESOURCE),
                "the build put no " + NativeGrant.RESOURCE + " into the classes (no C compiler? install gcc)");
        assertTrue(NativeGrant.available(), "the library did not load: " + NativeGrant.failure());
        String pkg = "jdk.internal.math";
        assertFalse(BASE.isExported(pkg, US), pkg + " was exported before the test");
        NativeGrant.call(BASE, "implAddExportsToAllUnnamed", pkg);
        assertTrue(BASE.isExported(pkg, US));
        assertFalse(BASE.isOpen(pkg, US), "exported, not opened");
    }

    @Test
    void shouldReportAMethodThatDoesNotExist() {
        assertTrue(NativeGrant.available(), "the library did not load: " + NativeGrant.failure());
        assertThrows(NoSuchMethodError.class, () -> NativeGrant.call(BASE, "noSuchMethod", "jdk.internal.util"));
    }

    @Test
    void shouldOpenThroughFfmWhereThereIsNoLibrary() throws Throwable {
        String pkg = "jdk.internal.icu.text";
        assertFalse(BASE.isOpen(pkg, US), pkg + " was open before the test");
        JniThroughFfm.call(pkg, "implAddOpensToAllUnnamed");
        assertTrue(BASE.isOpen(pkg, US));
    }

    @Test
    void shouldGrantThroughTheProvidersEntry() {
        String pkg = "jdk.internal.icu.util";
        JdkInternals.ensureExported(pkg);
        assertTrue(BASE.isExported(pkg, US));
        // again: a no-op
        JdkInternals.ensureExported(pkg);
        assertTrue(JdkInternals.platformProvider().getClass().getName().startsWith("sun.nio.ch."));
    }

    @Test
    void shouldUseTheJniSlotsOfJniH() throws IOException {
        Path header = Path.of(System.getProperty("java.home"), "include", "jni.h");
        String h = Files.readString(header);
        List<String> invoke = members(h, "JNIInvokeInterface_");
        List<String> natives = members(h, "JNINativeInterface_");
        assertEquals(JniThroughFfm.VM_GET_ENV, invoke.indexOf("GetEnv"));
        assertEquals(JniThroughFfm.ENV_FIND_CLASS, natives.indexOf("FindClass"));
        assertEquals(JniThroughFfm.ENV_EXCEPTION_DESCRIBE, natives.indexOf("ExceptionDescribe"));
        assertEquals(JniThroughFfm.ENV_EXCEPTION_CLEAR, natives.indexOf("ExceptionClear"));
        assertEquals(JniThroughFfm.ENV_NEW_GLOBAL_REF, natives.indexOf("NewGlobalRef"));
        assertEquals(JniThroughFfm.ENV_GET_METHOD_ID, natives.indexOf("GetMethodID"));
        assertEquals(JniThroughFfm.ENV_CALL_OBJECT_METHOD_A, natives.indexOf("CallObjectMethodA"));
        assertEquals(JniThroughFfm.ENV_CALL_VOID_METHOD_A, natives.indexOf("CallVoidMethodA"));
        assertEquals(JniThroughFfm.ENV_NEW_STRING_UTF, natives.indexOf("NewStringUTF"));
        assertEquals(JniThroughFfm.ENV_EXCEPTION_CHECK, natives.indexOf("ExceptionCheck"));
    }

    /** The function-pointer members of a C struct of jni.h in order ("reservedN" for the void pointers). */
    private static List<String> members(String header, String struct) {
        int start = header.indexOf("struct " + struct + " {");
        assertTrue(start >= 0, "no struct " + struct + " in jni.h");
        String body = header.substring(start, header.indexOf("};", start));
        Matcher m = Pattern.compile("\\(JNICALL \\*(\\w+)\\)|void \\*(reserved\\d+);").matcher(body);
        List<String> names = new ArrayList<>();
        while (m.find()) {
            names.add(m.group(1) != null ? m.group(1) : m.group(2));
        }
        return names;
    }
}
