package io.hadronio.ucx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.LinkedHashSet;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** UCX's verdict on configuration keys, heard while a worker is created. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class UcxUnusedKeysTest {

    @Test
    void shouldReportTheKeysNoTransportUsedAndOnlyThose() throws Exception {
        try (UcxContext context = UcxContext.builder().features(Feature.TAG, Feature.WAKEUP)
                .config("NO_SUCH_KEY_AT_ALL", "1").config("ANOTHER_ONE", "a,b").config("MM_FIFO_SIZE", "64").open()) {
            Set<String> reports = new LinkedHashSet<>();
            try (UcxWorker worker = UcxUnusedKeys.watch(() -> context.newWorker(ThreadMode.SINGLE, "w"), reports)) {
                assertTrue(reports.stream().anyMatch(r -> UcxUnusedKeys.names(r, "NO_SUCH_KEY_AT_ALL")), reports::toString);
                assertTrue(reports.stream().anyMatch(r -> UcxUnusedKeys.names(r, "ANOTHER_ONE")), reports::toString);
                // shared memory's FIFO size is used by the sysv and posix transports
                assertFalse(reports.stream().anyMatch(r -> UcxUnusedKeys.names(r, "MM_FIFO_SIZE")), reports::toString);
            }
            // the handler is gone after the watch: a second worker's report reaches nobody
            Set<String> before = new LinkedHashSet<>(reports);
            try (UcxWorker second = context.newWorker(ThreadMode.SINGLE, "w2")) {
                assertEquals(before, reports);
            }
        }
    }

    @Test
    void shouldSayNothingWhenEveryKeyIsUsed() throws Exception {
        try (UcxContext context = UcxContext.builder().features(Feature.TAG).config("MM_FIFO_SIZE", "64").open()) {
            Set<String> reports = new LinkedHashSet<>();
            try (UcxWorker worker = UcxUnusedKeys.watch(() -> context.newWorker(ThreadMode.SINGLE, "w"), reports)) {
                assertTrue(reports.isEmpty(), reports::toString);
            }
        }
    }

    @Test
    void shouldFindAKeyInUcxsCommaJoinedReport() {
        String report = "OTHER_THING=a,b,BOGUS=1";
        assertTrue(UcxUnusedKeys.names(report, "OTHER_THING"));
        assertTrue(UcxUnusedKeys.names(report, "BOGUS"));
        assertFalse(UcxUnusedKeys.names(report, "b"));
        assertFalse(UcxUnusedKeys.names(report, "THING"));
        assertFalse(UcxUnusedKeys.names(report, "BOGUS=1"));
    }
}
