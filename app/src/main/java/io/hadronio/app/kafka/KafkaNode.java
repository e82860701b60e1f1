package io.hadronio.app.kafka;

import java.io.IOException;
import java.io.Writer;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;
import kafka.server.KafkaConfig;
import kafka.server.KafkaRaftServer;
import kafka.tools.StorageTool;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.utils.Time;

/**
 * One Kafka node in KRaft mode, broker and controller in one JVM (a quorum of one), with a
 * fresh log directory: formatted as {@code kafka-storage format} does and started as
 * {@code kafka-server-start} does, Kafka's defaults otherwise (a consumer's fetch is sent from
 * the log with {@code FileChannel.transferTo}).
 */
final class KafkaNode {
    /** Records up to this size (Kafka's default limit is 1 MiB). */
    static final int MAX_MESSAGE_BYTES = 16 << 20;

    private final int port;

    private KafkaNode(int port) {
        this.port = port;
    }

    /** Starts a node whose broker listens on {@code address} (port 0: a free one), in {@code dir}. */
    static KafkaNode start(InetSocketAddress address, Path dir) throws Exception {
        String host = address.getHostString();
        int port = address.getPort() == 0 ? freePort(host) : address.getPort();
        int controllerPort = freePort(host);
        Properties config = new Properties();
        config.put("process.roles", "broker,controller");
        config.put("node.id", "1");
        config.put("controller.quorum.voters", "1@" + host + ":" + controllerPort);
        config.put("listeners", "PLAINTEXT://" + host + ":" + port + ",CONTROLLER://" + host + ":" + controllerPort);
        config.put("advertised.listeners", "PLAINTEXT://" + host + ":" + port);
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
            config.store(w, "hadronio kafka benchmark");
        }
        int formatted = StorageTool.execute(new String[] {"format", "-t", Uuid.randomUuid().toString(), "-c",
            file.toString()}, System.out);
        if (formatted != 0) {
            throw new IllegalStateException("kafka-storage format exited " + formatted);
        }
        KafkaRaftServer server = new KafkaRaftServer(KafkaConfig.fromProps(config, false), Time.SYSTEM);
        server.startup();
        return new KafkaNode(port);
    }

    /** The broker's port. */
    int port() {
        return port;
    }

    // the controller quorum is configured with fixed ports: one the kernel has just handed out
    private static int freePort(String host) throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getByName(host))) {
            return s.getLocalPort();
        }
    }
}
