package io.hadronio;

import io.hadronio.config.HadronioConfig;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Properties;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

// its providers come from its own Properties, never the JVM's: test.sh's eager pass leaves it out
@Tag("own-properties")
class HadronioConfigTest {
    private static HadronioConfig with(String name, String value) {
        Properties p = new Properties();
        p.setProperty(name, value);
        return HadronioConfig.from(p);
    }

    @Test
    void hugePagesTakeASizeAndZeroTurnsThemOff() {
        assertEquals(32L << 20, HadronioConfig.from(new Properties()).hugePagesBytes());
        assertEquals(0, with("hadronio.hugepages", "0").hugePagesBytes());
        assertEquals(16L << 20, with("hadronio.hugepages", "16m").hugePagesBytes());
    }

    @Test
    void sendBufferTakesASize() {
        assertEquals(2L << 20, HadronioConfig.from(new Properties()).sendBufferBytes());
        assertEquals(0, with("hadronio.send.buffer", "0").sendBufferBytes());
        assertEquals(512L << 10, with("hadronio.send.buffer", "512k").sendBufferBytes());
        for (String bad : new String[] {"-1", "2048m", "much"}) {
            var e = assertThrows(IllegalArgumentException.class, () -> with("hadronio.send.buffer", bad));
            assertTrue(e.getMessage().contains("hadronio.send.buffer") && e.getMessage().contains(bad), e.getMessage());
        }
    }

    @Test
    void aBadValueNamesThePropertyAndTheValue() {
        for (String bad : new String[] {"-1", "lots", "2g"}) {
            var e = assertThrows(IllegalArgumentException.class, () -> with("hadronio.hugepages", bad));
            assertTrue(e.getMessage().contains("hadronio.hugepages") && e.getMessage().contains(bad), e.getMessage());
        }
        var e = assertThrows(IllegalArgumentException.class, () -> with("hadronio.hugepage", "1m"));
        assertTrue(e.getMessage().contains("unknown hadroNIO property hadronio.hugepage=1m"), e.getMessage());
    }
}
