package io.hadronio.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hadronio.config.HadronioConfig;
import io.hadronio.HadronioProvider;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A {@code hadronio.ucx.KEY} that none of UCX's transports uses is named at start-up, as a
 * warning with the property and its value; a key UCX uses is not.
 */
// its providers come from its own Properties, never the JVM's: test.sh's eager pass leaves it out
@Tag("own-properties")
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class UnusedUcxKeyTest {

    @Test
    void shouldWarnAboutTheKeyNoTransportUsesAndNoOther() {
        Logger logger = Logger.getLogger(UcxRuntime.class.getName());
        List<LogRecord> records = new CopyOnWriteArrayList<>();
        Handler handler = new Handler() {
            @Override
            public void publish(LogRecord record) {
                records.add(record);
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        };
        logger.addHandler(handler);
        try {
            Properties p = new Properties();
            p.setProperty("hadronio.ucx.MM_FIFO_SZIE", "256"); // misspelt
            p.setProperty("hadronio.ucx.MM_FIFO_SIZE", "128");
            HadronioProvider provider = new HadronioProvider(HadronioConfig.from(p));
            assertTrue(provider.isAccelerated(), "a key UCX does not use is not a reason to run unaccelerated");
            List<String> warnings = records.stream().filter(r -> r.getLevel() == Level.WARNING)
                    .map(LogRecord::getMessage).toList();
            assertEquals(1, warnings.size(), warnings::toString);
            assertTrue(warnings.get(0).contains("hadronio.ucx.MM_FIFO_SZIE='256'"), warnings::toString);
        } finally {
            logger.removeHandler(handler);
        }
    }
}
