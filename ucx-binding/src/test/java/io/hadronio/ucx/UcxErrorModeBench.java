package io.hadronio.ucx;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * What an endpoint's error mode and {@link UcxContext.Builder#peerFailureDetection}
 * cost, side by side: tag ping-pong round trips (8 B, 64 KiB) and windowed streaming
 * (64 KiB, 1 MiB) between two JVMs, busy polling, no callbacks, no allocation in the
 * loops. For {@code docs/crash-isolation.md}; not a test.
 *
 * <p>Both JVMs hold every variant at once (a context, a worker and an endpoint each)
 * and run the measurement in short blocks that take turns between the variants, so
 * that what the machine does meanwhile (other processes, the hypervisor) falls on all
 * variants alike. Start a server, then a client with the same arguments; pin each to a
 * core:
 *
 * <pre>taskset -c 0 java ... io.hadronio.ucx.UcxErrorModeBench role=server port=PORT variants=NONE,PEER:100ms
 * taskset -c 1 java ... io.hadronio.ucx.UcxErrorModeBench role=client port=PORT variants=NONE,PEER:100ms</pre>
 *
 * <p>Arguments ({@code key=value}): {@code role}, {@code port}, {@code variants}
 * (comma-separated: {@code NONE} — error mode NONE, UCX's defaults; {@code PEER:<interval>}
 * — error mode PEER with {@code peerFailureDetection(interval)}, {@code PEER:0} without
 * keepalive; {@code PEER-TCP} — error mode PEER, no other configuration), {@code blocks}
 * (turns per variant, default 20), {@code scale} (multiplies the block sizes). The
 * client prints one line per test and variant, {@code BENCH test=lat8 variant=NONE
 * median=0.62 unit=us lanes=[...] blocks=[...]}: for latency the median round trip
 * over all measured iterations (µs), for bandwidth the median over the blocks (GB/s,
 * 1e9 bytes per second).
 */
public final class UcxErrorModeBench {
    private static final long TAG_PING = 0x4245_4E43_4800_0001L;
    private static final long TAG_PONG = 0x4245_4E43_4800_0002L;
    private static final long TAG_DATA = 0x4245_4E43_4800_0003L;
    private static final long TAG_ACK = 0x4245_4E43_4800_0004L;
    private static final int WINDOW = 64;
    private static final int MAX = 1 << 20;

    /** One variant: its own context, worker and endpoint. */
    private static final class Variant {
        final String name;
        final UcxContext context;
        final UcxWorker worker;
        UcxEndpoint endpoint;
        final ErrorMode mode;
        final long[] ring = new long[WINDOW];

        Variant(String name) throws UcxException {
            this.name = name;
            UcxContext.Builder builder = UcxContext.builder().features(Feature.TAG).name("error-mode-bench-" + name);
            if (name.equals("NONE")) {
                mode = ErrorMode.NONE;
            } else if (name.equals("PEER-TCP")) {
                mode = ErrorMode.PEER;
            } else if (name.startsWith("PEER:")) {
                mode = ErrorMode.PEER;
                builder.peerFailureDetection(UcxCrashSurvivor.parseDuration(name.substring(5)));
            } else {
                throw new IllegalArgumentException("variant " + name);
            }
            this.context = builder.open();
            this.worker = context.newWorker(ThreadMode.SINGLE, "bench-" + name);
        }
    }

    private final long send;
    private final long receive;
    private final long ack;

    private UcxErrorModeBench(Arena arena) {
        MemorySegment s = arena.allocate(MAX, 4096);
        MemorySegment r = arena.allocate(MAX, 4096);
        s.fill((byte) 0x5a);
        r.fill((byte) 0);
        this.send = s.address();
        this.receive = r.address();
        this.ack = arena.allocate(64, 64).address();
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> o = new LinkedHashMap<>();
        for (String arg : args) {
            int eq = arg.indexOf('=');
            o.put(arg.substring(0, eq), arg.substring(eq + 1));
        }
        boolean server = o.get("role").equals("server");
        int port = Integer.parseInt(o.get("port"));
        int blocks = Integer.parseInt(o.getOrDefault("blocks", "20"));
        double scale = Double.parseDouble(o.getOrDefault("scale", "1"));
        List<Variant> variants = new ArrayList<>();
        for (String name : o.getOrDefault("variants", "NONE,PEER:100ms").split(",")) {
            variants.add(new Variant(name));
        }
        try (Arena arena = Arena.ofShared(); Socket socket = server ? accept(port) : connect(port)) {
            socket.setTcpNoDelay(true);
            DataOutputStream out = new DataOutputStream(new BufferedOutputStream(socket.getOutputStream()));
            DataInputStream in = new DataInputStream(new BufferedInputStream(socket.getInputStream()));
            for (Variant v : variants) {
                Progress.writeAddress(out, v.worker.address());
                v.endpoint = v.worker.connect(Progress.readAddress(in), v.mode, v.mode == ErrorMode.PEER
                        ? (ep, status) -> System.err.println(v.name + ": endpoint failed: " + status) : null);
            }
            UcxErrorModeBench bench = new UcxErrorModeBench(arena);
            // test name, size, messages per block
            Object[][] tests = {
                {"lat8", 8, (int) (20_000 * scale)}, {"lat64k", 65536, (int) (2_000 * scale)},
                {"bw64k", 65536, (int) (10_000 * scale)}, {"bw1m", 1 << 20, (int) (1_000 * scale)}};
            for (Object[] t : tests) {
                String name = (String) t[0];
                int size = (Integer) t[1];
                int count = (Integer) t[2];
                boolean latency = name.startsWith("lat");
                long[][] times = new long[variants.size()][latency ? count * blocks : 0];
                double[][] rates = new double[variants.size()][blocks];
                // block -1 warms up every variant, unmeasured
                for (int block = -1; block < blocks; block++) {
                    for (int k = 0; k < variants.size(); k++) {
                        // take turns in a rotating order, so that no variant always follows the same one
                        int i = (k + Math.max(block, 0)) % variants.size();
                        Variant v = variants.get(i);
                        barrier(in, out);
                        if (latency) {
                            if (server) {
                                bench.pong(v, size, count);
                            } else {
                                long[] sink = block < 0 ? new long[count] : times[i];
                                bench.ping(v, size, count, sink, block < 0 ? 0 : block * count);
                            }
                        } else {
                            double rate = server ? bench.sink(v, size, count) : bench.stream(v, size, count);
                            if (block >= 0) {
                                rates[i][block] = rate;
                            }
                        }
                    }
                }
                barrier(in, out);
                if (!server) {
                    for (int i = 0; i < variants.size(); i++) {
                        Variant v = variants.get(i);
                        double median;
                        String perBlock;
                        if (latency) {
                            double[] blockMedians = new double[blocks];
                            for (int b = 0; b < blocks; b++) {
                                long[] part = Arrays.copyOfRange(times[i], b * count, (b + 1) * count);
                                Arrays.sort(part);
                                blockMedians[b] = part[count / 2] / 1e3;
                            }
                            long[] all = times[i].clone();
                            Arrays.sort(all);
                            median = all[all.length / 2] / 1e3;
                            perBlock = format(blockMedians);
                        } else {
                            double[] sorted = rates[i].clone();
                            Arrays.sort(sorted);
                            median = sorted[blocks / 2];
                            perBlock = format(rates[i]);
                        }
                        System.out.printf(Locale.ROOT, "BENCH test=%s variant=%s median=%.3f unit=%s lanes=%s blocks=%s%n",
                                name, v.name, median, latency ? "us" : "GB/s", v.endpoint.lanes(), perBlock);
                    }
                    System.out.flush();
                }
            }
            barrier(in, out);
            for (Variant v : variants) {
                long close = v.endpoint.closeNonBlocking(v.mode == ErrorMode.PEER);
                long deadline = System.nanoTime() + 2_000_000_000L;
                while (v.worker.status(close) == UcsStatus.INPROGRESS && System.nanoTime() < deadline) {
                    v.worker.progress();
                }
                v.worker.release(close);
            }
            barrier(in, out);
        } finally {
            for (Variant v : variants) {
                v.context.close();
            }
        }
        System.exit(0);
    }

    private static String format(double[] values) {
        StringBuilder b = new StringBuilder("[");
        for (int i = 0; i < values.length; i++) {
            b.append(i == 0 ? "" : ",").append(String.format(Locale.ROOT, "%.2f", values[i]));
        }
        return b.append(']').toString();
    }

    private static Socket accept(int port) throws Exception {
        try (ServerSocket server = new ServerSocket()) {
            server.setReuseAddress(true);
            server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
            return server.accept();
        }
    }

    private static Socket connect(int port) throws Exception {
        long deadline = System.nanoTime() + 20_000_000_000L;
        while (true) {
            try {
                return new Socket(InetAddress.getLoopbackAddress(), port);
            } catch (java.net.ConnectException e) {
                if (System.nanoTime() > deadline) {
                    throw e;
                }
                Thread.sleep(50);
            }
        }
    }

    private static void barrier(DataInputStream in, DataOutputStream out) throws Exception {
        out.writeInt(0x0B0B);
        out.flush();
        if (in.readInt() != 0x0B0B) {
            throw new IllegalStateException("barrier out of step");
        }
    }

    private static void await(UcxWorker worker, long request) throws UcxException {
        if (request == UcxWorker.COMPLETED) {
            return;
        }
        int status;
        while ((status = worker.status(request)) == UcsStatus.INPROGRESS) {
            worker.progress();
        }
        worker.release(request);
        if (status != UcsStatus.OK) {
            throw new UcxException("request", status);
        }
    }

    /** {@code count} round trips; their times (ns) go to {@code times} from {@code offset}. */
    private void ping(Variant v, int size, int count, long[] times, int offset) throws UcxException {
        UcxWorker worker = v.worker;
        UcxEndpoint endpoint = v.endpoint;
        for (int i = 0; i < count; i++) {
            long start = System.nanoTime();
            long r = worker.tagReceive(receive, size, TAG_PONG, -1L);
            await(worker, endpoint.tagSend(send, size, TAG_PING));
            await(worker, r);
            times[offset + i] = System.nanoTime() - start;
        }
    }

    private void pong(Variant v, int size, int count) throws UcxException {
        UcxWorker worker = v.worker;
        for (int i = 0; i < count; i++) {
            await(worker, worker.tagReceive(receive, size, TAG_PING, -1L));
            await(worker, v.endpoint.tagSend(send, size, TAG_PONG));
        }
    }

    /** Streams {@code count} messages, a window at a time; GB/s up to the receiver's acknowledgement. */
    private double stream(Variant v, int size, int count) throws UcxException {
        UcxWorker worker = v.worker;
        long[] ring = v.ring;
        long start = System.nanoTime();
        Arrays.fill(ring, UcxWorker.COMPLETED);
        long ackReceive = worker.tagReceive(ack, 8, TAG_ACK, -1L);
        for (int i = 0; i < count; i++) {
            int slot = i % WINDOW;
            await(worker, ring[slot]);
            ring[slot] = v.endpoint.tagSend(send, size, TAG_DATA);
        }
        for (int slot = 0; slot < WINDOW; slot++) {
            await(worker, ring[slot]);
            ring[slot] = UcxWorker.COMPLETED;
        }
        await(worker, ackReceive);
        return (double) size * count / (System.nanoTime() - start);
    }

    private double sink(Variant v, int size, int count) throws UcxException {
        UcxWorker worker = v.worker;
        long[] ring = v.ring;
        Arrays.fill(ring, UcxWorker.COMPLETED);
        for (int i = 0; i < count; i++) {
            int slot = i % WINDOW;
            if (i >= WINDOW) {
                await(worker, ring[slot]);
            }
            ring[slot] = worker.tagReceive(receive, size, TAG_DATA, -1L);
        }
        for (int slot = 0; slot < Math.min(WINDOW, count); slot++) {
            await(worker, ring[slot]);
            ring[slot] = UcxWorker.COMPLETED;
        }
        await(worker, v.endpoint.tagSend(ack, 8, TAG_ACK));
        return 0;
    }
}
