package io.hadronio.app.machine;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicLong;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code hadronio machine}: how fast this machine moves freshly written memory from one core to
 * another, with no network stack at all. Two threads share a ring of eight 64 KiB slots: one
 * copies a buffer into the next free slot, the other copies each filled slot out, the way a
 * shared-memory transport's sender and receiver do. Run it pinned to the two cores a benchmark
 * pair uses ({@code taskset -c 0,1}).
 *
 * <p>Why it exists: on the 2-core VM this project is measured on the rate is bimodal over time,
 * ~8 GB/s for a while and then ~2 GB/s for seconds to minutes, and every large transfer between
 * two processes (hadroNIO's and the JDK's alike) slows down with it. The benchmark scripts print
 * it around their measurements so that a slow figure can be told from a slow machine
 * (docs/benchmarks/blocking.md, "Large ping-pongs").
 */
@Command(name = "machine", mixinStandardHelpOptions = true,
        description = {"Measures how fast this machine moves freshly written memory between two cores (GB/s):",
            "two threads, a ring of eight 64 KiB slots, one copying in, one copying out. No network, no UCX.",
            "Pin it to the cores a benchmark uses: taskset -c 0,1 java -jar hadronio-app.jar machine"})
public final class MachineCommand implements Callable<Integer> {
    private static final int SLOT = 64 * 1024;
    private static final int SLOTS = 8;

    @Spec
    CommandSpec spec;

    @Option(names = {"-d", "--millis"}, paramLabel = "MS", defaultValue = "500",
            description = "How long each round copies (default: ${DEFAULT-VALUE} ms).")
    long millis;

    @Option(names = {"-r", "--rounds"}, paramLabel = "N", defaultValue = "2",
            description = "Rounds, one figure each (default: ${DEFAULT-VALUE}).")
    int rounds;

    @Override
    public Integer call() throws InterruptedException {
        if (millis < 10 || rounds < 1) {
            throw new CommandLine.ParameterException(spec.commandLine(),
                    "--millis must be at least 10 and --rounds at least 1");
        }
        StringBuilder figures = new StringBuilder();
        try (Arena arena = Arena.ofShared()) {
            MemorySegment ring = arena.allocate((long) SLOT * SLOTS, 4096);
            MemorySegment source = arena.allocate(SLOT, 4096);
            MemorySegment sink = arena.allocate(SLOT, 4096);
            ring.fill((byte) 1);
            source.fill((byte) 2);
            // a short round first: the copy loops compiled before anything is measured
            round(ring, source, sink, 50);
            for (int r = 0; r < rounds; r++) {
                double gbPerS = round(ring, source, sink, millis);
                figures.append(figures.isEmpty() ? "" : ",").append(String.format(Locale.ROOT, "%.2f", gbPerS));
            }
        }
        System.out.println("cross-core copy, 64 KiB slots: " + figures.toString().replace(",", ", ") + " GB/s");
        System.out.println("RESULT kind=cross-core-copy gb_per_s=" + figures + " millis=" + millis);
        return 0;
    }

    /** One round: bytes moved through the ring per nanosecond (GB/s). */
    private static double round(MemorySegment ring, MemorySegment source, MemorySegment sink, long millis)
            throws InterruptedException {
        AtomicLong filled = new AtomicLong();
        AtomicLong emptied = new AtomicLong();
        long start = System.nanoTime();
        long end = start + millis * 1_000_000;
        Thread producer = new Thread(() -> {
            long n = 0;
            while (System.nanoTime() < end) {
                while (n - emptied.get() >= SLOTS) {
                    Thread.onSpinWait();
                }
                MemorySegment.copy(source, 0, ring, (n % SLOTS) * SLOT, SLOT);
                filled.set(++n);
            }
            filled.set(-n - 1); // done: the consumer empties what is left and stops
        }, "machine-producer");
        Thread consumer = new Thread(() -> {
            long n = 0;
            while (true) {
                long f = filled.get();
                long last = f < 0 ? -f - 1 : f;
                if (n == last) {
                    if (f < 0) {
                        return;
                    }
                    Thread.onSpinWait();
                    continue;
                }
                MemorySegment.copy(ring, (n % SLOTS) * SLOT, sink, 0, SLOT);
                emptied.set(++n);
            }
        }, "machine-consumer");
        producer.start();
        consumer.start();
        producer.join();
        consumer.join();
        long f = filled.get();
        return (double) (-f - 1) * SLOT / (System.nanoTime() - start);
    }
}
