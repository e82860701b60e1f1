package io.hadronio.app.blocking;

import io.hadronio.app.LatencySummary;
import io.hadronio.app.MeasurementWindow;
import io.hadronio.app.PracticeRounds;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.util.Locale;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * {@code hadronio nonblocking benchmark latency|throughput}: the blocking benchmarks'
 * exchanges ({@link BlockingBenchmark}) on non-blocking channels, each side waiting in a
 * {@link java.nio.channels.Selector} ({@link SelectorLoop}). Connection set-up and the
 * settings exchange are the blocking benchmarks' (in blocking mode); the channels switch
 * to non-blocking mode for the measured exchange.
 */
@Command(name = "benchmark", mixinStandardHelpOptions = true,
        description = "Non-blocking NIO benchmarks with a Selector between two processes (start one with -s, the other with -r).",
        subcommands = {SelectorBenchmark.Latency.class, SelectorBenchmark.Throughput.class})
final class SelectorBenchmark implements Runnable {
    @Spec
    private CommandSpec spec;

    @Override
    public void run() {
        throw new CommandLine.ParameterException(spec.commandLine(), "Missing subcommand: latency or throughput");
    }

    @Command(name = "latency", mixinStandardHelpOptions = true,
            description = "Ping-pong through selectors: the client writes a message, the server echoes it; round-trip times.")
    static final class Latency extends BlockingBenchmark.Base {
        @Override
        String kind() {
            return "nonblocking";
        }

        @Override
        void serve(SocketChannel channel, int length, long total) throws Exception {
            ByteBuffer buffer = ByteBuffer.allocateDirect(length);
            try (SelectorLoop loop = new SelectorLoop(channel)) {
                for (long i = 0; i < total; i++) {
                    buffer.clear();
                    loop.readFully(buffer);
                    buffer.flip();
                    loop.writeFully(buffer);
                }
            }
        }

        @Override
        void measure(SocketChannel channel, int length, int warmup, int messages) throws Exception {
            ByteBuffer buffer = ByteBuffer.allocateDirect(length);
            long[] rtt = new long[messages];
            try (SelectorLoop loop = new SelectorLoop(channel)) {
                PracticeRounds.run(warmup, messages, n -> roundTrips(loop, buffer, rtt, n));
            }
            LatencySummary summary = LatencySummary.of(rtt);
            double opsPerSec = 1e6 / summary.avgUs();
            String transport = Endpoints.transport(channel);
            System.out.printf(Locale.ROOT, "selector round trip %d B over %s (%s): %s, %.0f round trips/s%n", length,
                    transport, provider(), summary.describe(), opsPerSec);
            System.out.printf(Locale.ROOT, "RESULT kind=%s-latency provider=%s length=%d messages=%d %s "
                    + "ops_per_s=%.0f transports=%s%n", kind(), provider(), length, messages, summary.resultFields(),
                    opsPerSec, transport);
        }

        /** One round of {@link PracticeRounds}: {@code n} round trips, their times in {@code rtt}. */
        private static void roundTrips(SelectorLoop loop, ByteBuffer buffer, long[] rtt, int n) throws IOException {
            for (int i = 0; i < n; i++) {
                long start = System.nanoTime();
                buffer.clear();
                loop.writeFully(buffer);
                buffer.clear();
                loop.readFully(buffer);
                rtt[i] = System.nanoTime() - start;
            }
        }
    }

    @Command(name = "throughput", mixinStandardHelpOptions = true,
            description = "Streaming through selectors: the client writes messages, the server reads them and acknowledges the end.")
    static final class Throughput extends BlockingBenchmark.Base {
        @Override
        String kind() {
            return "nonblocking";
        }

        @Override
        void serve(SocketChannel channel, int length, long total) throws Exception {
            ByteBuffer buffer = ByteBuffer.allocateDirect(Math.max(length, 64 * 1024));
            long remaining = total * length;
            try (SelectorLoop loop = new SelectorLoop(channel)) {
                while (remaining > 0) {
                    buffer.clear();
                    if (remaining < buffer.capacity()) {
                        buffer.limit((int) remaining);
                    }
                    loop.awaitReady(SelectionKey.OP_READ);
                    remaining -= loop.readAvailable(buffer);
                }
                loop.writeFully(ByteBuffer.allocate(1));
            }
        }

        @Override
        void measure(SocketChannel channel, int length, int warmup, int messages) throws Exception {
            ByteBuffer buffer = ByteBuffer.allocateDirect(length);
            double seconds;
            try (SelectorLoop loop = new SelectorLoop(channel)) {
                for (int i = 0; i < warmup; i++) {
                    buffer.clear();
                    loop.writeFully(buffer);
                }
                MeasurementWindow.open();
                long start = System.nanoTime();
                for (int i = 0; i < messages; i++) {
                    buffer.clear();
                    loop.writeFully(buffer);
                }
                loop.readFully(ByteBuffer.allocate(1));
                seconds = (System.nanoTime() - start) / 1e9;
            }
            double mbPerSec = (double) messages * length / seconds / 1e6;
            double opsPerSec = messages / seconds;
            String transport = Endpoints.transport(channel);
            System.out.printf(Locale.ROOT, "selector streaming %d B writes over %s (%s): %.1f MB/s, %.0f writes/s%n",
                    length, transport, provider(), mbPerSec, opsPerSec);
            System.out.printf(Locale.ROOT, "RESULT kind=%s-throughput provider=%s length=%d messages=%d "
                    + "mb_per_s=%.1f ops_per_s=%.0f transports=%s%n", kind(), provider(), length, messages, mbPerSec,
                    opsPerSec, transport);
        }
    }
}
