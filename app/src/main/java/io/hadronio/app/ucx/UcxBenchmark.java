package io.hadronio.app.ucx;

import io.hadronio.app.MeasurementWindow;
import io.hadronio.app.ucx.BenchmarkReport.LatencyRun;
import io.hadronio.app.ucx.BenchmarkReport.ThroughputRun;
import io.hadronio.ucx.ErrorMode;
import io.hadronio.ucx.Feature;
import io.hadronio.ucx.ThreadMode;
import io.hadronio.ucx.UcsStatus;
import io.hadronio.ucx.UcxContext;
import io.hadronio.ucx.UcxEndpoint;
import io.hadronio.ucx.UcxException;
import io.hadronio.ucx.UcxWorker;
import java.io.IOException;
import java.io.PrintStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The binding's own benchmarks between two processes (or threads): tag ping-pong
 * latency and windowed tag streaming, with busy polling and no completion callbacks.
 *
 * <p>Set-up: the client connects to the server over TCP ({@link ControlChannel}),
 * sends its settings and its worker address, gets the server's worker address back,
 * and both create an endpoint in error mode NONE (so UCX may use shared memory).
 * Warm-up messages run first, in several sub-runs, and are not measured; then both
 * sides wait for their JIT compiler to go quiet. TCP barriers separate set-up, warm-up,
 * measurement and tear-down.
 *
 * <p>The measured loops allocate nothing: buffers are native memory allocated once,
 * request handles are {@code long}s kept in preallocated arrays, and completion is
 * found by polling the request status between {@code ucp_worker_progress} calls.
 * Like {@code ucx_perftest}, each side sends from one buffer and receives into one
 * buffer, whatever the window.
 */
public final class UcxBenchmark implements AutoCloseable {
    // tags of the three message streams; matched with a full mask
    static final long TAG_PING = 0x4844_4E49_0000_0001L;
    static final long TAG_PONG = 0x4844_4E49_0000_0002L;
    static final long TAG_DATA = 0x4844_4E49_0000_0003L;
    static final long TAG_ACK = 0x4844_4E49_0000_0004L;
    private static final long FULL_MASK = -1L;
    // a spinning loop also looks at request status after every 16th idle progress call
    private static final int IDLE_CHECK_MASK = 15;
    // idle polls before the loop checks whether the peer is still there
    private static final int STALL_SPINS = 1 << 20;
    // after the warm-up: wait for the JIT to be quiet for two polls this far apart, at most SETTLE_MAX
    private static final long SETTLE_POLL_MILLIS = 30;
    private static final long SETTLE_MAX_NANOS = 3_000_000_000L;
    // the warm-up is run as this many sub-runs
    private static final int WARMUP_CHUNKS = 10;
    // size of the acknowledgement that ends a throughput run
    private static final int ACK_LENGTH = 8;

    private final BenchmarkSettings settings;
    private final UcxContext context;
    private final UcxWorker worker;
    private final ControlChannel control;
    private final UcxEndpoint endpoint;
    private final Arena arena;
    // message buffers, native, allocated once
    private final long sendAddress;
    private final long receiveAddress;
    private final long ackAddress;
    private final int length;
    // outstanding requests of the windowed loops, by slot
    private final long[] ring;
    // --fresh: the streaming sender's buffer per slot, written before each send; null otherwise
    private final MemorySegment[] freshBuffers;
    private byte freshByte;
    // --copy-out: the streaming receiver's application buffer, into which it copies every message
    // from the buffer UCX received it in, as a provider that receives into its own slices does; else null
    private MemorySegment copyOut;
    private MemorySegment receiveSegment;
    // completion time of each ping-pong, nanoseconds
    private final long[] stamps;

    private UcxBenchmark(BenchmarkSettings settings, UcxContext context, UcxWorker worker, ControlChannel control,
            byte[] peerAddress, boolean fresh) throws UcxException {
        this.settings = settings;
        this.context = context;
        this.worker = worker;
        this.control = control;
        this.endpoint = worker.connect(peerAddress, ErrorMode.NONE);
        this.arena = Arena.ofConfined();
        this.length = settings.length();
        long bufferBytes = Math.max(length, 64);
        MemorySegment send = arena.allocate(bufferBytes, 4096);
        MemorySegment receive = arena.allocate(bufferBytes, 4096);
        MemorySegment ack = arena.allocate(64, 64);
        // touch every page now so that page faults do not land in the measurement
        send.fill((byte) 0x5a);
        receive.fill((byte) 0);
        this.sendAddress = send.address();
        this.receiveAddress = receive.address();
        this.receiveSegment = receive;
        this.ackAddress = ack.address();
        this.ring = new long[settings.window()];
        if (fresh && settings.kind() == BenchmarkSettings.Kind.THROUGHPUT) {
            // one buffer per outstanding send: a buffer is written again only once its send completed
            this.freshBuffers = new MemorySegment[settings.window()];
            for (int i = 0; i < freshBuffers.length; i++) {
                freshBuffers[i] = arena.allocate(length, 4096);
                freshBuffers[i].fill((byte) i);
            }
        } else {
            this.freshBuffers = null;
        }
        this.stamps = settings.kind() == BenchmarkSettings.Kind.LATENCY
                ? new long[Math.max(settings.messages(), settings.warmup())] : new long[0];
    }

    static UcxContext openContext() throws UcxException {
        return UcxContext.builder().features(Feature.TAG).name("hadronio-ucx-benchmark").open();
    }

    // ---- client ------------------------------------------------------------------------------

    /**
     * Runs the benchmark against a server at {@code remote}, printing progress to
     * {@code log}, and returns the measurements (the caller prints the RESULT line).
     *
     * @param patience how long to retry while the server is not yet listening
     */
    public static BenchmarkReport runClient(BenchmarkSettings settings, InetSocketAddress remote, Duration patience,
            PrintStream log) throws IOException {
        return runClient(settings, remote, patience, log, false);
    }

    /** {@link #runClient(BenchmarkSettings, InetSocketAddress, Duration, PrintStream)}; {@code fresh}: see {@code --fresh}. */
    public static BenchmarkReport runClient(BenchmarkSettings settings, InetSocketAddress remote, Duration patience,
            PrintStream log, boolean fresh) throws IOException {
        try (UcxContext context = openContext();
                ControlChannel control = ControlChannel.connect(remote, patience)) {
            UcxWorker worker = context.newWorker(ThreadMode.SINGLE, "benchmark-client");
            control.sendHello(settings, worker.address());
            byte[] serverAddress = control.readReply();
            try (UcxBenchmark bench = new UcxBenchmark(settings, context, worker, control, serverAddress, fresh)) {
                log.println("connected to " + remote + "; " + settings + (fresh ? "; fresh data" : ""));
                bench.printTransport(log);
                BenchmarkReport report = bench.runClientSide(log);
                bench.finish();
                return report;
            }
        }
    }

    private BenchmarkReport runClientSide(PrintStream log) throws IOException {
        control.barrier();
        List<BenchmarkReport.Run> runs = new ArrayList<>();
        if (settings.kind() == BenchmarkSettings.Kind.LATENCY) {
            for (int chunk : warmupChunks(settings.warmup())) {
                ping(chunk);
            }
            settle();
            MeasurementWindow.open();
            for (int r = 0; r < settings.runs(); r++) {
                long start = System.nanoTime();
                ping(settings.messages());
                runs.add(latencyRun(start, settings.messages()));
                log.println("run " + (r + 1) + ": " + runs.getLast().describe());
            }
        } else {
            for (int chunk : warmupChunks(settings.warmup())) {
                stream(chunk);
            }
            settle();
            MeasurementWindow.open();
            for (int r = 0; r < settings.runs(); r++) {
                long nanos = stream(settings.messages());
                runs.add(ThroughputRun.of(settings.messages(), length, nanos));
                log.println("run " + (r + 1) + ": " + runs.getLast().describe());
            }
        }
        return new BenchmarkReport(settings, endpoint.transports(), endpoint.lanes(), runs);
    }

    /** Turns completion stamps into round trips (in place) and summarises them. */
    private LatencyRun latencyRun(long start, int count) {
        long previous = start;
        long last = stamps[count - 1];
        for (int i = 0; i < count; i++) {
            long stamp = stamps[i];
            stamps[i] = stamp - previous;
            previous = stamp;
        }
        return LatencyRun.of(stamps, count, last - start);
    }

    // ---- server ------------------------------------------------------------------------------

    /** A listening server: UCX is initialised before it listens, so "listening" means ready. */
    public static final class Server implements AutoCloseable {
        private final BenchmarkSettings.Kind kind;
        private final UcxContext context;
        private final ServerSocket socket;
        private boolean copyOut;

        private Server(BenchmarkSettings.Kind kind, UcxContext context, ServerSocket socket) {
            this.kind = kind;
            this.context = context;
            this.socket = socket;
        }

        /** Initialises UCX and listens on {@code address} (port 0: any free port). */
        public static Server open(BenchmarkSettings.Kind kind, InetSocketAddress address) throws IOException {
            UcxContext context = openContext();
            try {
                return new Server(kind, context, ControlChannel.listen(address));
            } catch (IOException | RuntimeException e) {
                context.close();
                throw e;
            }
        }

        public InetSocketAddress localAddress() {
            return (InetSocketAddress) socket.getLocalSocketAddress();
        }

        /** Throughput: copy every received message out into an application buffer ({@code --copy-out}). */
        public void copyOut(boolean on) {
            copyOut = on;
        }

        /**
         * Serves one client: takes its settings, runs the other half of the loops, and
         * returns a report without runs (the client measures).
         */
        public BenchmarkReport serve(PrintStream log) throws IOException {
            try (ControlChannel control = ControlChannel.accept(socket)) {
                ControlChannel.Hello hello = control.readHello();
                BenchmarkSettings settings = hello.settings();
                if (settings.kind() != kind) {
                    control.sendReply("this server runs the " + kind.label() + " benchmark, not "
                            + settings.kind().label(), null);
                    throw new IOException("client " + control.remoteAddress() + " asked for the "
                            + settings.kind().label() + " benchmark; this server runs " + kind.label());
                }
                UcxWorker worker = context.newWorker(ThreadMode.SINGLE, "benchmark-server");
                control.sendReply(null, worker.address());
                try (UcxBenchmark bench = new UcxBenchmark(settings, context, worker, control, hello.workerAddress(), false)) {
                    if (copyOut && settings.kind() == BenchmarkSettings.Kind.THROUGHPUT) {
                        bench.copyOut = bench.arena.allocate(Math.max(bench.length, 64), 4096);
                        bench.copyOut.fill((byte) 0);
                    }
                    log.println("client " + control.remoteAddress() + "; " + settings
                            + (bench.copyOut != null ? "; each message copied out" : ""));
                    bench.printTransport(log);
                    BenchmarkReport report = new BenchmarkReport(settings, bench.endpoint.transports(),
                            bench.endpoint.lanes(), List.of());
                    bench.runServerSide();
                    bench.finish();
                    log.println("done");
                    return report;
                } finally {
                    worker.close();
                }
            }
        }

        @Override
        public void close() throws IOException {
            try {
                socket.close();
            } finally {
                context.close();
            }
        }
    }

    private void runServerSide() throws IOException {
        control.barrier();
        if (settings.kind() == BenchmarkSettings.Kind.LATENCY) {
            pong(settings.warmup());
            settle();
            pong((long) settings.messages() * settings.runs());
        } else {
            for (int chunk : warmupChunks(settings.warmup())) {
                sink(chunk);
            }
            settle();
            for (int r = 0; r < settings.runs(); r++) {
                sink(settings.messages());
            }
        }
    }

    // ---- common ------------------------------------------------------------------------------

    /**
     * Between warm-up and measurement: both sides wait until their JIT compiler has gone
     * quiet. A JVM pinned to one core compiles on the core its benchmark thread busy-polls,
     * so compilations queued by the warm-up would otherwise eat into the first measured run.
     */
    private void settle() throws IOException {
        control.barrier();
        CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
        long deadline = System.nanoTime() + SETTLE_MAX_NANOS;
        try {
            if (jit == null || !jit.isCompilationTimeMonitoringSupported()) {
                Thread.sleep(200);
            } else {
                long last = jit.getTotalCompilationTime();
                int quiet = 0;
                while (quiet < 2 && System.nanoTime() < deadline) {
                    Thread.sleep(SETTLE_POLL_MILLIS);
                    long now = jit.getTotalCompilationTime();
                    quiet = now == last ? quiet + 1 : 0;
                    last = now;
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while waiting for the JIT to settle", e);
        }
        control.barrier();
    }

    /**
     * The warm-up as {@link #WARMUP_CHUNKS} sub-runs (fewer when it is short), so that the
     * loop methods are entered several times before the measurement, as they are in it.
     * Client and server split it alike.
     */
    static int[] warmupChunks(int warmup) {
        int chunks = Math.max(1, Math.min(WARMUP_CHUNKS, warmup / 1000));
        if (warmup == 0) {
            return new int[0];
        }
        int[] sizes = new int[chunks];
        for (int i = 0; i < chunks; i++) {
            sizes[i] = warmup / chunks + (i < warmup % chunks ? 1 : 0);
        }
        return sizes;
    }

    private void printTransport(PrintStream log) {
        log.println("transport: " + String.join(",", endpoint.transports()) + " (lanes: "
                + String.join(", ", endpoint.lanes()) + ")");
    }

    /** Barrier after the loops, then a flushing endpoint close while the peer still progresses. */
    private void finish() throws IOException {
        control.barrier();
        long request = endpoint.closeNonBlocking(false);
        await(request, false, "ucp_ep_close_nbx");
        control.barrier();
    }

    @Override
    public void close() throws UcxException {
        try {
            endpoint.close();
        } finally {
            arena.close();
        }
    }

    // ---- the measured loops: no allocation below this line --------------------------------
    //
    // Each loop only counts; the work for one message is a method of its own, called once per
    // message, so that the JIT compiles it as a method after a few thousand messages. A loop
    // method that is called once per run is only ever compiled on-stack (OSR), and then the first
    // measured run after the warm-up comes out up to 2x slower than the runs after it.

    /** Client half of the ping-pong: {@code count} round trips, completion times in {@link #stamps}. */
    private void ping(int count) throws IOException {
        final long[] t = stamps;
        long previous = UcxWorker.COMPLETED;
        for (int i = 0; i < count; i++) {
            previous = pingOnce(previous);
            t[i] = System.nanoTime();
        }
        worker.release(previous);
    }

    /**
     * One round trip; returns its receive request, completed but not yet released: the
     * next round trip releases it after its ping is out, which keeps that call off the
     * round trip. The answer's receive is posted after the send for the same reason (the
     * answer cannot come back before a one-way trip; an early one waits as unexpected and
     * the receive completes at once). Request status is looked at after a progress call
     * that handled something (and every {@link #IDLE_CHECK_MASK}+1 idle ones), so the
     * spin is mostly {@code ucp_worker_progress}.
     */
    private long pingOnce(long previousReceive) throws IOException {
        final UcxWorker w = worker;
        long send = endpoint.tagSend(sendAddress, length, TAG_PING);
        w.release(previousReceive);
        long receive = w.tagReceive(receiveAddress, length, TAG_PONG, FULL_MASK);
        int spins = 0;
        while (true) {
            if (w.progress() != 0 || (++spins & IDLE_CHECK_MASK) == 0) {
                if (send != UcxWorker.COMPLETED) {
                    int status = w.status(send);
                    if (status != UcsStatus.INPROGRESS) {
                        w.release(send);
                        send = UcxWorker.COMPLETED;
                        check(status, "ucp_tag_send_nbx");
                    }
                }
                int status = w.receiveStatus(receive);
                if (status != UcsStatus.INPROGRESS) {
                    check(status, "ucp_tag_recv_nbx");
                    if (send == UcxWorker.COMPLETED) {
                        return receive;
                    }
                }
            }
            if (spins >= STALL_SPINS) {
                spins = 0;
                checkPeer();
            }
        }
    }

    /** Server half of the ping-pong: answers {@code count} pings. */
    private void pong(long count) throws IOException {
        if (count == 0) {
            return;
        }
        long receive = worker.tagReceive(receiveAddress, length, TAG_PING, FULL_MASK);
        for (long i = 0; i < count; i++) {
            receive = pongOnce(receive, i + 1 < count);
        }
    }

    /**
     * Waits for one ping, answers, then (while the answer travels) releases the ping's
     * receive and posts the one for the next ping (if {@code more}); returns the new receive.
     */
    private long pongOnce(long receive, boolean more) throws IOException {
        check(waitFor(receive, true), "ucp_tag_recv_nbx");
        long send = endpoint.tagSend(sendAddress, length, TAG_PONG);
        worker.release(receive);
        long next = more ? worker.tagReceive(receiveAddress, length, TAG_PING, FULL_MASK) : UcxWorker.COMPLETED;
        await(send, false, "ucp_tag_send_nbx");
        return next;
    }

    /**
     * Sender half of the streaming benchmark: {@code count} sends with at most
     * {@code window} outstanding, then waits for the receiver's acknowledgement.
     * Returns the nanoseconds from the first send to the acknowledgement.
     */
    private long stream(int count) throws IOException {
        final long[] slots = ring;
        final int window = slots.length;
        long ack = worker.tagReceive(ackAddress, ACK_LENGTH, TAG_ACK, FULL_MASK);
        long start = System.nanoTime();
        int slot = 0;
        for (int i = 0; i < count; i++) {
            slot = sendOne(slot);
        }
        for (int j = 0; j < window; j++) {
            long request = slots[slot];
            if (request != UcxWorker.COMPLETED) {
                await(request, false, "ucp_tag_send_nbx");
                slots[slot] = UcxWorker.COMPLETED;
            }
            slot = slot + 1 == window ? 0 : slot + 1;
        }
        await(ack, true, "ucp_tag_recv_nbx");
        return System.nanoTime() - start;
    }

    /** One send into {@code slot}, after the send that used the slot a window ago completed; returns the next slot. */
    private int sendOne(int slot) throws IOException {
        final long[] slots = ring;
        long oldest = slots[slot];
        if (oldest != UcxWorker.COMPLETED) {
            await(oldest, false, "ucp_tag_send_nbx");
        }
        if (freshBuffers == null) {
            slots[slot] = endpoint.tagSend(sendAddress, length, TAG_DATA);
        } else {
            MemorySegment b = freshBuffers[slot];
            b.fill(freshByte++);
            slots[slot] = endpoint.tagSend(b.address(), length, TAG_DATA);
        }
        return slot + 1 == slots.length ? 0 : slot + 1;
    }

    /** Receiver half of the streaming benchmark: {@code window} receives kept posted, then the acknowledgement. */
    private void sink(int count) throws IOException {
        final long[] slots = ring;
        final int window = slots.length;
        int posted = 0;
        while (posted < Math.min(window, count)) {
            slots[posted++] = worker.tagReceive(receiveAddress, length, TAG_DATA, FULL_MASK);
        }
        int slot = 0;
        for (int done = 0; done < count; done++) {
            boolean repost = posted < count;
            receiveOne(slot, repost);
            if (repost) {
                posted++;
            }
            slot = slot + 1 == window ? 0 : slot + 1;
        }
        await(endpoint.tagSend(ackAddress, ACK_LENGTH, TAG_ACK), false, "ucp_tag_send_nbx");
    }

    /** Waits for the oldest receive, in {@code slot}, and posts a new one there if {@code repost}. */
    private void receiveOne(int slot, boolean repost) throws IOException {
        final long[] slots = ring;
        await(slots[slot], true, "ucp_tag_recv_nbx");
        if (copyOut != null) {
            MemorySegment.copy(receiveSegment, 0, copyOut, 0, length);
        }
        slots[slot] = repost ? worker.tagReceive(receiveAddress, length, TAG_DATA, FULL_MASK) : UcxWorker.COMPLETED;
    }

    /** Progresses until the request is done, releases it, and throws if it failed. */
    private void await(long request, boolean receive, String operation) throws IOException {
        if (request == UcxWorker.COMPLETED) {
            return;
        }
        int status = waitFor(request, receive);
        worker.release(request);
        check(status, operation);
    }

    /**
     * Progresses until the request (not {@link UcxWorker#COMPLETED}) is no longer in
     * progress and returns its status, leaving it to the caller to release. Like
     * {@link #pingOnce}, it looks at the status only after progress that handled something.
     */
    private int waitFor(long request, boolean receive) throws IOException {
        final UcxWorker w = worker;
        int status = receive ? w.receiveStatus(request) : w.status(request);
        int spins = 0;
        while (status == UcsStatus.INPROGRESS) {
            if (w.progress() != 0 || (++spins & IDLE_CHECK_MASK) == 0) {
                status = receive ? w.receiveStatus(request) : w.status(request);
            }
            if (spins >= STALL_SPINS) {
                spins = 0;
                checkPeer();
            }
        }
        return status;
    }

    private static void check(int status, String operation) throws UcxException {
        if (status != UcsStatus.OK) {
            throw new UcxException(operation, status);
        }
    }

    /** Called after a long stretch without completions: fails if the peer has gone. */
    private void checkPeer() throws IOException {
        if (control.peerGone()) {
            throw new IOException("the peer closed the control connection in the middle of the benchmark"
                    + " (it exited or died)");
        }
    }
}
