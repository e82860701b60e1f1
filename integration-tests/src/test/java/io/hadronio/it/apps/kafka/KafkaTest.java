package io.hadronio.it.apps.kafka;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hadronio.it.ChildJvm;
import io.hadronio.it.apps.AppJvm;
import io.hadronio.it.apps.CompatRecord;
import io.hadronio.it.apps.EchoBodies;
import io.hadronio.it.apps.Pairing;
import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * An unmodified Kafka node (KRaft, broker and controller in one JVM) and Kafka's own Admin,
 * producer ({@code acks=all}) and consumer in another JVM, in every {@link Pairing}: records of
 * 0 B..10 MiB one at a time, many small ones in flight, timed 8-byte ones; the consumer reads
 * them back from the log (the broker sends it with {@code FileChannel.transferTo}) and checks
 * each byte for byte and in order.
 */
@Tag("slow")
@Timeout(120)
class KafkaTest {
    private static final int SMALL_RECORDS = 2000;
    private static final int TIMED_RECORDS = 500;
    private static final List<String> QUIET = List.of("-Dorg.slf4j.simpleLogger.defaultLogLevel=warn");

    static Stream<Pairing> pairings() {
        return Pairing.all();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("pairings")
    void shouldStoreAndFetchEveryRecordByteForByte(Pairing pairing) throws Exception {
        try (CompatRecord record = CompatRecord.start("Kafka (KRaft node) + Kafka clients", pairing);
             ChildJvm node = AppJvm.start(pairing.server(), KafkaNode.class, QUIET)) {
            record.version("Kafka " + node.expect("VERSION ", Duration.ofSeconds(60)));
            int port = node.port();
            int records = EchoBodies.SIZES.length + SMALL_RECORDS + TIMED_RECORDS;
            record.exercised("acks=all producer: records 0 B..10 MiB + " + SMALL_RECORDS + " × 0..4 KiB in flight + "
                    + TIMED_RECORDS + " × 8 B one at a time; consumer reads all back (transferTo on the broker)");
            try (ChildJvm client = AppJvm.start(pairing.client(), KafkaRecordsClient.class, QUIET,
                    String.valueOf(port), String.valueOf(SMALL_RECORDS), String.valueOf(TIMED_RECORDS))) {
                assertEquals(String.valueOf(records), client.expect("CHECKED ", Duration.ofSeconds(90)),
                        () -> client.report() + "\n" + node.report());
                String transport = client.expect("TRANSPORT ");
                String[] result = client.expect("RESULT ").split(" ");
                client.expect("DONE");
                record.figure("records/s one at a time", result[0]).figure("p50 µs", result[1]).figure("p99 µs", result[2]);
                record.transport(transport);
                if (pairing.accelerated()) {
                    assertTrue(transport.startsWith("ucx"), () -> transport + "\n" + client.report());
                } else {
                    assertEquals("tcp", transport, client::report);
                }
                assertEquals(0, client.awaitExit(), client::report);
            }
            record.pass();
        }
    }
}
