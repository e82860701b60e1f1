package io.hadronio.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Map;
import org.junit.jupiter.api.Test;

class UcxMemoryDefaultsTest {
    @Test
    void shouldApplyTheDefaultsTheUserLeftToUs() {
        assertEquals(Map.of("MM_RX_BUFS_GROW", "128"), UcxMemoryDefaults.unsetBy(Map.of(), Map.of()));
        assertEquals(Map.of("MM_RX_BUFS_GROW", "128"),
                UcxMemoryDefaults.unsetBy(Map.of("MM_FIFO_SIZE", "32"), Map.of("UCX_LOG_LEVEL", "info")));
    }

    @Test
    void shouldLeaveAKeyTheUserSetInAPropertyOrTheEnvironmentInAnyOfItsForms() {
        for (String form : new String[] {"MM_RX_BUFS_GROW", "SYSV_RX_BUFS_GROW", "POSIX_RX_BUFS_GROW"}) {
            assertEquals(Map.of(), UcxMemoryDefaults.unsetBy(Map.of(form, "512"), Map.of()), form);
            assertEquals(Map.of(), UcxMemoryDefaults.unsetBy(Map.of(), Map.of("UCX_" + form, "512")), "UCX_" + form);
        }
    }

    @Test
    void shouldSetNothingWhereTheUserChoseTheTransports() {
        // a key none of the chosen transports uses would have UCX warn about it at start-up
        assertEquals(Map.of(), UcxMemoryDefaults.unsetBy(Map.of("TLS", "tcp"), Map.of()));
        assertEquals(Map.of(), UcxMemoryDefaults.unsetBy(Map.of(), Map.of("UCX_TLS", "tcp")));
    }
}
