package io.hadronio.app.evaluate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import org.junit.jupiter.api.Test;

/** A client's CPU time per thread as its measurement window opens, written on a line and read back. */
class ProcessCpuTest {
    @Test
    void shouldReadBackWhatTheClientWrote() {
        Map<Long, Long> written = ProcessCpu.parse(ProcessCpu.ownThreads());
        assertNotNull(written);
        // the process's first thread has the process's id
        assertTrue(written.containsKey(ProcessHandle.current().pid()), written.toString());
        assertEquals(Map.of(1L, 25L, 17L, 3_000_000_000L), ProcessCpu.parse("1:25,17:3000000000"));
    }

    @Test
    void shouldMeasureTheCpuSpentAfterTheWrittenOpen() {
        Map<Long, Long> open = ProcessCpu.parse(ProcessCpu.ownThreads());
        long sink = 0;
        long until = System.nanoTime() + 20_000_000;
        while (System.nanoTime() - until < 0) {
            sink += Long.numberOfTrailingZeros(sink + System.nanoTime());
        }
        long window = ProcessCpu.window(open, ProcessCpu.threads(ProcessHandle.current().pid()));
        assertTrue(window > 0, window + " ns (" + sink + ")");
    }

    @Test
    void shouldRefuseWhatIsNotAListOfThreads() {
        assertNull(ProcessCpu.parse(""));
        assertNull(ProcessCpu.parse(null));
        assertNull(ProcessCpu.parse("12"));
        assertNull(ProcessCpu.parse("a:1"));
    }
}
