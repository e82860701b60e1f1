package io.hadronio.ucx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The JVM keeps the signals it owns once UCX is loaded. libucs installs handlers for
 * SIGSEGV, SIGBUS, SIGILL, SIGFPE and SIGHUP when it is loaded, which kill the process at
 * the next safepoint poll in compiled code, implicit null check or stack-guard hit (a JVM
 * started with JFR's sampling died that way while it loaded UCX). The binding tells libucs
 * not to install them before loading it; these tests check that libucs read that, and that
 * the JVM's own uses of SIGSEGV work afterwards (a failure here kills the test JVM, which
 * surefire reports as a crashed fork).
 */
class UcxSignalsTest {

    @BeforeAll
    static void load() {
        Ucx.ensureAvailable();
    }

    @Test
    void shouldLoadUcxWithoutItsSignalHandlers() throws Throwable {
        assertEquals("", globalOption("ERROR_SIGNALS"), "UCX must not handle the JVM's error signals");
        assertTrue(Set.of("0", "SIGNAL0").contains(globalOption("DEBUG_SIGNO")),
                "UCX must not handle SIGHUP (the JVM's shutdown signal): " + globalOption("DEBUG_SIGNO"));
    }

    @Test
    void shouldLeaveTheJvmsOwnUsesOfSigsegvToTheJvm() throws Exception {
        // a worker made and progressed, so UCX is fully initialised
        try (UcxContext context = UcxContext.builder().open();
             UcxWorker worker = context.newWorker(ThreadMode.SINGLE, "signals")) {
            worker.progress();

            // stack guard pages: a deep recursion ends in StackOverflowError, not in UCX's handler
            assertThrows(StackOverflowError.class, () -> recurse(0));

            // implicit null checks in compiled code: NullPointerExceptions in a hot loop
            long npes = 0;
            for (int i = 0; i < 2_000_000; i++) {
                try {
                    npes += length((i & 1023) == 0 ? null : "x");
                } catch (NullPointerException e) {
                    npes++;
                }
            }
            assertTrue(npes > 0);

            // safepoint polls in compiled loops: a thread spins while the main thread forces safepoints
            AtomicBoolean stop = new AtomicBoolean();
            AtomicLong spins = new AtomicLong();
            Thread spinner = new Thread(() -> {
                long n = 0;
                while (!stop.get()) {
                    n = n * 31 + 7;
                    spins.lazySet(n);
                }
            }, "spinner");
            spinner.start();
            for (int i = 0; i < 50; i++) {
                System.gc();
                Thread.sleep(2);
            }
            stop.set(true);
            spinner.join();
            worker.progress();
        }
    }

    private static int recurse(int depth) {
        return recurse(depth + 1) + 1;
    }

    private static int length(String s) {
        return s.length();
    }

    /** A global UCX option's value as libucs parsed it (ucs_global_opts_get_value). */
    private static String globalOption(String name) throws Throwable {
        MethodHandle get = NativeLibraries.downcall("ucs_global_opts_get_value",
                FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.ADDRESS,
                        ValueLayout.JAVA_LONG));
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment value = arena.allocate(256);
            int status = (int) get.invokeExact(arena.allocateFrom(name), value, 256L);
            assertEquals(0, status, "ucs_global_opts_get_value(" + name + ")");
            return value.getString(0);
        }
    }
}
