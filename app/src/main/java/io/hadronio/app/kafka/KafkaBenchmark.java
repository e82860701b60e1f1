package io.hadronio.app.kafka;

import io.hadronio.app.CallLoop;
import io.hadronio.app.LoopOptions;
import io.hadronio.app.ProviderSelection;
import io.hadronio.app.Role;
import io.hadronio.app.SocketAddressConverter;
import io.hadronio.app.Transports;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.utils.AppInfoParser;
import picocli.CommandLine;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code hadronio kafka benchmark}: the server (-s) is a {@link KafkaNode}; the client (-r)
 * runs Kafka's producer with {@code acks=all} and {@code linger.ms=0} (a record is stored
 * before its send completes): records of {@code --size} bytes with {@code --in-flight}
 * outstanding ({@code concurrent}), then one at a time ({@code sequential}, with latency);
 * then, with {@code --fetch-mib}, a consumer (Kafka's defaults) reads a partition of that
 * many MiB in records of {@code --fetch-record} bytes from its start, {@code --fetch-passes}
 * times (the first half unmeasured: the JIT compiles the fetch path then, as the loops' warm-up does theirs): the broker sends it from the log with
 * {@code FileChannel.transferTo} into the socket channel. Every record's length and index
 * are checked. One {@code RESULT app=kafka mode=...} line per loop and for the fetch.
 */
@Command(name = "benchmark", mixinStandardHelpOptions = true,
        description = {"Kafka acks=all records/s with records in flight and one at a time (with latency), then "
                + "a consumer's fetch of --fetch-mib MiB from the log (MB/s); the server (-s) is a KRaft node.",
            "DISABLE_HADRONIO=true: on the JDK's provider."})
public final class KafkaBenchmark implements Callable<Integer> {
    private static final String TOPIC = "hadronio-records";
    private static final String FETCH_TOPIC = "hadronio-fetch";

    @ArgGroup(exclusive = true, multiplicity = "1")
    Role role;

    @Spec
    CommandSpec spec;

    @Option(names = {"-a", "--address"}, paramLabel = "HOST:PORT", converter = SocketAddressConverter.class,
            defaultValue = "127.0.0.1:0", description = "Server: where the broker listens (default: ${DEFAULT-VALUE}).")
    InetSocketAddress address;

    @Option(names = {"-l", "--size"}, defaultValue = "64",
            description = "Client: bytes of every produced record's value (default: ${DEFAULT-VALUE}).")
    int size;

    @Option(names = {"-i", "--in-flight"}, defaultValue = "32",
            description = "Client: records outstanding in the concurrent loop (default: ${DEFAULT-VALUE}).")
    int inFlight;

    @Option(names = "--fetch-mib", defaultValue = "256",
            description = "Client: MiB the consumer fetches per pass, 0 for no fetch (default: ${DEFAULT-VALUE}).")
    int fetchMib;

    @Option(names = "--fetch-record", defaultValue = "65536",
            description = "Client: bytes of each record of the fetched partition (default: ${DEFAULT-VALUE}).")
    int fetchRecord;

    @Option(names = "--fetch-passes", defaultValue = "16",
            description = "Client: reads of the whole partition, the first half unmeasured (default: ${DEFAULT-VALUE}).")
    int fetchPasses;

    @Mixin
    LoopOptions loops;

    @Override
    public Integer call() throws Exception {
        loops.validate(spec.commandLine());
        if (size < 8 || inFlight < 1 || fetchMib < 0 || fetchRecord < 8 || fetchRecord > KafkaNode.MAX_MESSAGE_BYTES / 2
                || fetchPasses < 2) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--size must be >= 8, --in-flight >= 1, "
                    + "--fetch-mib >= 0, --fetch-record 8.." + KafkaNode.MAX_MESSAGE_BYTES / 2 + ", --fetch-passes >= 2");
        }
        ProviderSelection.apply();
        return role.server ? serve() : run(role.remote);
    }

    private int serve() throws Exception {
        Path dir = Files.createTempDirectory("hadronio-kafka");
        KafkaNode node = KafkaNode.start(address, dir);
        // the server runs until it is stopped (SIGTERM, then SIGKILL from bench-apps.sh 2 s later): the
        // log goes first, since a broker's controlled shutdown can take longer than that
        Runtime.getRuntime().addShutdownHook(new Thread(() -> delete(dir)));
        System.out.println("listening on " + address.getHostString() + ":" + node.port() + " (Kafka "
                + AppInfoParser.getVersion() + ", KRaft node, " + Transports.provider() + ")");
        System.out.flush();
        Thread.currentThread().join();
        return 0;
    }

    private int run(InetSocketAddress broker) throws Exception {
        String servers = broker.getHostString() + ":" + broker.getPort();
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", servers))) {
            admin.createTopics(List.of(new NewTopic(TOPIC, 1, (short) 1), new NewTopic(FETCH_TOPIC, 1, (short) 1)))
                    .all().get();
        }
        System.out.println("Kafka " + AppInfoParser.getVersion() + " producer (acks=all) and consumer, broker " + servers
                + " (" + Transports.provider() + ")");
        long failures = 0;
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(producerConfig(servers))) {
            AtomicLong sent = new AtomicLong();
            for (LoopOptions.Mode mode : loops.modes()) {
                CallLoop.Outcome outcome = switch (mode) {
                    case concurrent -> CallLoop.concurrent(done -> producer.send(
                            new ProducerRecord<>(TOPIC, record(sent.getAndIncrement(), size)),
                            (metadata, e) -> done.complete(e == null)), inFlight, loops.warmup(), loops.duration());
                    case sequential -> CallLoop.sequential(() -> producer.send(
                            new ProducerRecord<>(TOPIC, record(sent.getAndIncrement(), size))).get().offset() >= 0,
                            loops.warmup(), loops.duration());
                };
                failures += outcome.failures();
                System.out.println(mode + ": " + outcome.describe());
                System.out.println("RESULT app=kafka mode=" + mode + " provider=" + Transports.provider() + " size=" + size
                        + " " + outcome.resultFields() + " transport=" + Transports.byEndpoints());
                System.out.flush();
            }
            if (fetchMib > 0) {
                failures += fetch(servers, producer);
            }
        }
        return failures == 0 ? 0 : 1;
    }

    /** Fills the fetch partition, then reads it {@link #fetchPasses} times; the failures. */
    private long fetch(String servers, KafkaProducer<byte[], byte[]> producer) throws Exception {
        long records = Math.max(1, ((long) fetchMib << 20) / fetchRecord);
        AtomicLong failed = new AtomicLong();
        for (long i = 0; i < records; i++) {
            producer.send(new ProducerRecord<>(FETCH_TOPIC, record(i, fetchRecord)), (m, e) -> {
                if (e != null) {
                    failed.incrementAndGet();
                }
            });
        }
        producer.flush();
        if (failed.get() > 0) {
            System.out.println("fetch: " + failed.get() + " of " + records + " records not stored");
            return failed.get();
        }
        TopicPartition partition = new TopicPartition(FETCH_TOPIC, 0);
        int unmeasured = fetchPasses / 2;
        double[] mbs = new double[fetchPasses - unmeasured];
        long wrong = 0;
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(consumerConfig(servers))) {
            consumer.assign(List.of(partition));
            String transport = "?";
            for (int pass = 0; pass < fetchPasses; pass++) {
                consumer.seekToBeginning(List.of(partition));
                long next = 0;
                long bytes = 0;
                long start = System.nanoTime();
                long deadline = start + Duration.ofSeconds(60).toNanos();
                while (next < records && System.nanoTime() - deadline < 0) {
                    for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
                        if (r.value().length != fetchRecord || ByteBuffer.wrap(r.value()).getLong() != next) {
                            wrong++;
                        }
                        bytes += r.value().length;
                        next++;
                    }
                }
                double seconds = (System.nanoTime() - start) / 1e9;
                wrong += records - next;
                transport = Transports.byEndpoints();
                System.out.printf(Locale.ROOT, "fetch pass %d%s: %d records, %.1f MB/s%n", pass,
                        pass < unmeasured ? " (unmeasured)" : "", next, bytes / seconds / 1e6);
                if (pass >= unmeasured) {
                    mbs[pass - unmeasured] = bytes / seconds / 1e6;
                }
            }
            Arrays.sort(mbs);
            System.out.printf(Locale.ROOT, "RESULT app=kafka mode=fetch provider=%s size=%d bytes=%d passes=%d failures=%d "
                    + "mb_s=%.1f transport=%s%n", Transports.provider(), fetchRecord, records * fetchRecord,
                    mbs.length, wrong, mbs[mbs.length / 2], transport);
            System.out.flush();
        }
        return wrong;
    }

    /** A record's value: {@code bytes} bytes that start with its index. */
    private static byte[] record(long index, int bytes) {
        byte[] value = new byte[bytes];
        ByteBuffer.wrap(value).putLong(index);
        return value;
    }

    private static Properties producerConfig(String servers) {
        Properties p = new Properties();
        p.put("bootstrap.servers", servers);
        p.put("acks", "all");
        p.put("linger.ms", "0");
        p.put("max.request.size", String.valueOf(KafkaNode.MAX_MESSAGE_BYTES));
        p.put("key.serializer", ByteArraySerializer.class.getName());
        p.put("value.serializer", ByteArraySerializer.class.getName());
        return p;
    }

    private static Properties consumerConfig(String servers) {
        Properties c = new Properties();
        c.put("bootstrap.servers", servers);
        c.put("enable.auto.commit", "false");
        c.put("key.deserializer", ByteArrayDeserializer.class.getName());
        c.put("value.deserializer", ByteArrayDeserializer.class.getName());
        return c;
    }

    private static void delete(Path dir) {
        try (Stream<Path> paths = Files.walk(dir)) {
            paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException | UncheckedIOException e) {
            System.err.println("could not delete " + dir + ": " + e);
        }
    }
}
