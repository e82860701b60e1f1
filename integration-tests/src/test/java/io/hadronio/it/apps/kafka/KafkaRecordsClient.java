package io.hadronio.it.apps.kafka;

import io.hadronio.it.apps.EchoBodies;
import io.hadronio.it.apps.ProviderProbe;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * Kafka's own clients against a {@link KafkaNode}: an {@code Admin} creates the topic, a
 * producer with {@code acks=all} sends every body of {@link EchoBodies} one at a time, then
 * {@code small} records of 0..4 KiB with many in flight, then {@code sync} 8-byte records one
 * at a time (timed); a consumer reads the partition from its start and checks every record
 * byte for byte and in order (the broker sends them from its log with
 * {@code FileChannel.transferTo}). Prints {@code CHECKED n} after the consumer has checked
 * them, {@code TRANSPORT t} (whether this JVM holds UCX endpoints, producer and consumer
 * still connected), {@code RESULT records/s p50_µs p99_µs} of the timed records, then
 * {@code DONE}; {@code ERROR ...} on a failed send or a wrong record.
 *
 * <p>Arguments: broker port, small records, timed records.
 */
public final class KafkaRecordsClient {
    private static final String TOPIC = "hadronio-compat";

    private KafkaRecordsClient() {
    }

    /** Record {@code i}'s value: a body of {@code size} bytes that differs from record to record. */
    private static byte[] value(int i, int size) {
        return EchoBodies.body(i, size);
    }

    public static void main(String[] args) throws Exception {
        ProviderProbe.announce();
        String servers = "127.0.0.1:" + Integer.parseInt(args[0]);
        int small = Integer.parseInt(args[1]);
        int timed = Integer.parseInt(args[2]);
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", servers))) {
            admin.createTopics(List.of(new NewTopic(TOPIC, 1, (short) 1))).all().get();
        }
        Properties p = new Properties();
        p.put("bootstrap.servers", servers);
        p.put("acks", "all");
        p.put("linger.ms", "0");
        p.put("max.request.size", String.valueOf(KafkaNode.MAX_MESSAGE_BYTES));
        p.put("buffer.memory", String.valueOf(64 << 20));
        p.put("key.serializer", ByteArraySerializer.class.getName());
        p.put("value.serializer", ByteArraySerializer.class.getName());
        // record i's size, in the order sent
        List<Integer> sizes = new ArrayList<>();
        long[] nanos = new long[timed];
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p)) {
            for (int size : EchoBodies.SIZES) {
                send(producer, sizes, size).get();
            }
            AtomicLong failed = new AtomicLong();
            AtomicReference<Exception> first = new AtomicReference<>();
            for (int i = 0; i < small; i++) {
                int size = (int) ((i * 2654435761L) % 4097);
                int id = sizes.size();
                sizes.add(size);
                producer.send(new ProducerRecord<>(TOPIC, key(id), value(id, size)), (metadata, e) -> {
                    if (e != null) {
                        failed.incrementAndGet();
                        first.compareAndSet(null, e);
                    }
                });
            }
            producer.flush();
            if (failed.get() > 0) {
                System.out.println("ERROR " + failed.get() + " sends failed: " + first.get());
                return;
            }
            long start = System.nanoTime();
            for (int i = 0; i < timed; i++) {
                long t = System.nanoTime();
                send(producer, sizes, 8).get();
                nanos[i] = System.nanoTime() - t;
            }
            double seconds = (System.nanoTime() - start) / 1e9;
            try (KafkaConsumer<byte[], byte[]> consumer = consumer(servers)) {
                int checked = consumeAndCheck(consumer, sizes);
                if (checked < 0) {
                    return;
                }
                System.out.println("CHECKED " + checked);
                System.out.println("TRANSPORT " + ProviderProbe.transportByEndpoints());
            }
            Arrays.sort(nanos);
            System.out.printf(Locale.ROOT, "RESULT %.0f %.1f %.1f%n", timed / seconds, nanos[timed / 2] / 1e3,
                    nanos[(int) (timed * 0.99)] / 1e3);
            System.out.println("DONE");
        } catch (ExecutionException e) {
            System.out.println("ERROR send failed: " + e.getCause());
        }
        System.out.flush();
    }

    private static java.util.concurrent.Future<?> send(KafkaProducer<byte[], byte[]> producer, List<Integer> sizes,
                                                       int size) {
        int id = sizes.size();
        sizes.add(size);
        return producer.send(new ProducerRecord<>(TOPIC, key(id), value(id, size)));
    }

    private static byte[] key(int id) {
        return ByteBuffer.allocate(Integer.BYTES).putInt(id).array();
    }

    private static KafkaConsumer<byte[], byte[]> consumer(String servers) {
        Properties c = new Properties();
        c.put("bootstrap.servers", servers);
        c.put("key.deserializer", ByteArrayDeserializer.class.getName());
        c.put("value.deserializer", ByteArrayDeserializer.class.getName());
        c.put("enable.auto.commit", "false");
        return new KafkaConsumer<>(c);
    }

    /** Reads the partition from offset 0; the number of records checked, or -1 after an ERROR line. */
    private static int consumeAndCheck(KafkaConsumer<byte[], byte[]> consumer, List<Integer> sizes) {
        TopicPartition partition = new TopicPartition(TOPIC, 0);
        consumer.assign(List.of(partition));
        consumer.seekToBeginning(List.of(partition));
        int next = 0;
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (next < sizes.size()) {
            if (System.nanoTime() - deadline > 0) {
                System.out.println("ERROR consumed " + next + " of " + sizes.size() + " records in 60 s");
                return -1;
            }
            for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
                int id = ByteBuffer.wrap(r.key()).getInt();
                if (id != next || r.offset() != next || !Arrays.equals(r.value(), value(id, sizes.get(id)))) {
                    System.out.println("ERROR record at offset " + r.offset() + ": key " + id + ", " + r.value().length
                            + " bytes, expected record " + next + " of " + sizes.get(next) + " bytes");
                    return -1;
                }
                next++;
            }
        }
        return next;
    }
}
