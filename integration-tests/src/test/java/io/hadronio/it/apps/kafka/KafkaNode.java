package io.hadronio.it.apps.kafka;

import io.hadronio.it.apps.ProviderProbe;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.Writer;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;
import kafka.server.KafkaConfig;
import kafka.server.KafkaRaftServer;
import kafka.tools.StorageTool;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.utils.AppInfoParser;
import org.apache.kafka.common.utils.Time;

/**
 * An unmodified Kafka node in KRaft mode, broker and controller in one JVM (its own quorum of
 * one), on 127.0.0.1 with a fresh log directory: formatted as {@code kafka-storage format}
 * does, then started as {@code kafka-server-start} does. The broker sends fetched log
 * segments to its consumers with {@code FileChannel.transferTo} into the socket channel.
 * Prints {@code VERSION v} and {@code PORT n} (the broker's listener); on {@code STATS} from
 * stdin prints {@code STATS transport} (whether this JVM holds UCX endpoints); shuts the node
 * down when stdin closes.
 */
public final class KafkaNode {
    /** Bodies up to 10 MiB, as the HTTP echo tests send (Kafka's default limit is 1 MiB). */
    public static final int MAX_MESSAGE_BYTES = 16 << 20;

    private KafkaNode() {
    }

    public static void main(String[] args) throws Exception {
        ProviderProbe.announce();
        Path dir = Files.createTempDirectory("kafka-node");
        int port = freePort();
        int controllerPort = freePort();
        Properties config = new Properties();
        config.put("process.roles", "broker,controller");
        config.put("node.id", "1");
        config.put("controller.quorum.voters", "1@127.0.0.1:" + controllerPort);
        config.put("listeners", "PLAINTEXT://127.0.0.1:" + port + ",CONTROLLER://127.0.0.1:" + controllerPort);
        config.put("advertised.listeners", "PLAINTEXT://127.0.0.1:" + port);
        config.put("controller.listener.names", "CONTROLLER");
        config.put("listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT");
        config.put("log.dirs", dir.resolve("logs").toString());
        config.put("offsets.topic.replication.factor", "1");
        config.put("transaction.state.log.replication.factor", "1");
        config.put("transaction.state.log.min.isr", "1");
        config.put("group.initial.rebalance.delay.ms", "0");
        config.put("message.max.bytes", String.valueOf(MAX_MESSAGE_BYTES));
        Path file = dir.resolve("server.properties");
        try (Writer w = Files.newBufferedWriter(file, StandardCharsets.UTF_8)) {
            config.store(w, "hadroNIO's Kafka compatibility test");
        }
        int formatted = StorageTool.execute(new String[] {"format", "-t", Uuid.randomUuid().toString(), "-c",
            file.toString()}, System.out);
        if (formatted != 0) {
            throw new IllegalStateException("kafka-storage format exited " + formatted);
        }
        KafkaRaftServer server = new KafkaRaftServer(KafkaConfig.fromProps(config, false), Time.SYSTEM);
        server.startup();
        System.out.println("VERSION " + AppInfoParser.getVersion());
        System.out.println("PORT " + port);
        System.out.flush();
        BufferedReader stdin = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = stdin.readLine()) != null) {
            if (line.equals("STATS")) {
                System.out.println("STATS " + ProviderProbe.transportByEndpoints());
                System.out.flush();
            }
        }
        server.shutdown();
        server.awaitShutdown();
    }

    // Kafka's controller quorum is configured with fixed ports: take two the kernel has just
    // handed out (the JDK's own socket, whatever the provider)
    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }
}
