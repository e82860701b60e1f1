package io.hadronio.ucx;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The survivor of the crash-isolation experiment ({@code docs/crash-isolation.md}) and
 * of {@link UcxPeerCrashTest}: for each scenario and round it starts a
 * {@link UcxCrashPeer} in a child JVM, connects to it over UCX, streams in one
 * direction (or idles), kills the peer with SIGKILL at a random moment, and keeps
 * going until UCX reports the death (the endpoint's error handler, or a request that
 * completes with an error). Then it cancels and releases what is left, closes the
 * endpoint, and reports one line per round:
 *
 * <pre>ROUND role=receive size=65536 round=3 lanes=[cma/memory, sysv/memory] killAfterMs=117 messages=2210
 *   detect=handler:Connection_reset_by_remote_peer(-25) detectMs=0.71 deadMs=4.2 tcpEofMs=4.5 corrupt=0
 *   statuses={-3=1, -16=3} stuck=0 closeMs=0.1 cleanupMs=0.2 repaired=0</pre>
 *
 * ({@code detectMs}, {@code deadMs} (the child reaped) and {@code tcpEofMs} (its TCP
 * connection seen closed) count from the {@code kill}; {@code repaired}: FIFO elements
 * that dead senders left unwritten and the worker completed so far, see
 * {@link UcxWorker#reportDeadPeer}). All rounds share one context and one worker,
 * as a provider's connections would; with {@code healthy=true} a last peer is not
 * killed but echoes messages, checked byte for byte, to show the worker still works.
 *
 * <p>Arguments, all {@code key=value}: {@code rounds} (default 10), {@code roles}
 * (comma-separated: {@code receive} — the peer streams to us; {@code send} — we stream
 * to it; {@code idle} — nothing in flight, we busy-poll; {@code idle-wait} — nothing in
 * flight, we sleep on the worker's event fd between progress calls, for at most
 * {@code waitMs} each; {@code tear} — the peer is killed while UCX, inside its send to us,
 * has taken an element of our shared-memory FIFO and not yet marked it written, see
 * {@link TornSend}), {@code sizes} (bytes, comma-separated, default 65536,1048576;
 * idle roles use 8), {@code mode} (NONE or PEER), {@code ucx} (UCX configuration
 * entries {@code KEY=VALUE;KEY=VALUE}, given to the context here and as {@code UCX_KEY}
 * environment to the peer), {@code peerFailure} (a duration such as {@code 100ms}:
 * the configuration {@link UcxContext.Builder#peerFailureDetection} makes, and mode PEER),
 * {@code timeoutMs} (how long to wait for UCX to notice, default 30000),
 * {@code killMinMs}/{@code killMaxMs} (when to kill, default 20..300 ms after the first
 * message of the stream completed, or after the start for idle roles),
 * {@code earlyKill} (count the kill delay from the start of the stream instead, so that
 * with a small delay the peer dies before any message completed), {@code closeOnEof}
 * (when the peer's TCP connection ends, force-close the endpoint, as a provider would,
 * instead of waiting for UCX), {@code flushAfterConnect} (flush each new endpoint before
 * use), {@code peer.mode}/{@code peer.ucx}/{@code peer.peerFailure} (give the peers other
 * settings than this side, to try mismatches), {@code healthy} (default true).
 *
 * <p>Exit code 0 when every round ended (whatever was detected) and the healthy check
 * passed; the last line is then {@code SURVIVED}. A UCX abort shows as exit code 134.
 */
public final class UcxCrashSurvivor {
    static final String SURVIVED = "SURVIVED";
    private static final int WINDOW = UcxCrashPeer.WINDOW;
    // how long cancelled and failed requests get to complete after the detection
    private static final long CLEANUP_NANOS = TimeUnit.SECONDS.toNanos(10);

    private final Map<String, String> ucx;
    private final ErrorMode mode;
    // what the peers are told: error mode, UCX configuration (as environment), keepalive (or "-")
    private final ErrorMode peerMode;
    private final Map<String, String> peerUcx;
    private final String peerFailure;
    // on EOF of the peer's TCP connection, force-close the endpoint (as a provider would) instead of waiting for UCX
    private final boolean closeOnEof;
    // flush each new endpoint (and wait for it) before using it, so that UCX's wire-up is complete
    private boolean flushAfterConnect;
    // count the kill delay from the start of the stream, not from its first completed message
    private boolean earlyKill;
    private final long timeoutNanos;
    private final int killMinMs;
    private final int killMaxMs;
    private final int waitMs;
    private final UcxWorker worker;
    private final Arena arena = Arena.ofShared();
    private final MemorySegment[] buffers = new MemorySegment[WINDOW];
    // the payload pattern, to check received messages against
    private final MemorySegment reference;
    private final long[] requests = new long[WINDOW];
    private final boolean[] isReceive = new boolean[WINDOW];

    // number of the current connection, in its tags
    private long connection;
    // set by the error handler (progress thread)
    private long handlerNanos;
    private int handlerStatus;

    private UcxCrashSurvivor(Map<String, String> ucx, ErrorMode mode, ErrorMode peerMode, Map<String, String> peerUcx,
            String peerFailure, boolean closeOnEof, long timeoutNanos, int killMinMs, int killMaxMs, int waitMs,
            UcxWorker worker, int maxSize) {
        this.ucx = ucx;
        this.mode = mode;
        this.peerMode = peerMode;
        this.peerUcx = peerUcx;
        this.peerFailure = peerFailure;
        this.closeOnEof = closeOnEof;
        this.timeoutNanos = timeoutNanos;
        this.killMinMs = killMinMs;
        this.killMaxMs = killMaxMs;
        this.waitMs = waitMs;
        this.worker = worker;
        for (int i = 0; i < WINDOW; i++) {
            buffers[i] = arena.allocate(Math.max(maxSize, 8), 4096);
        }
        reference = UcxCrashPeer.reference(arena, maxSize);
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> options = new LinkedHashMap<>();
        for (String arg : args) {
            int eq = arg.indexOf('=');
            options.put(arg.substring(0, eq), arg.substring(eq + 1));
        }
        int rounds = Integer.parseInt(options.getOrDefault("rounds", "10"));
        List<String> roles = List.of(options.getOrDefault("roles", "receive,send,idle").split(","));
        int[] sizes = Arrays.stream(options.getOrDefault("sizes", "65536,1048576").split(","))
                .mapToInt(Integer::parseInt).toArray();
        String peerFailure = options.getOrDefault("peerFailure", "-");
        ErrorMode mode = ErrorMode.valueOf(options.getOrDefault("mode", peerFailure.equals("-") ? "NONE" : "PEER"));
        Map<String, String> ucx = entries(options.getOrDefault("ucx", ""));
        UcxContext.Builder builder = UcxContext.builder().features(Feature.TAG, Feature.WAKEUP).name("crash-survivor");
        ucx.forEach(builder::config);
        if (!peerFailure.equals("-")) {
            builder.peerFailureDetection(parseDuration(peerFailure));
        }
        // the peers get the same settings unless told otherwise (to try asymmetric ones)
        ErrorMode peerMode = ErrorMode.valueOf(options.getOrDefault("peer.mode", mode.name()));
        Map<String, String> peerUcx = options.containsKey("peer.ucx") ? entries(options.get("peer.ucx")) : ucx;
        String peerPeerFailure = options.getOrDefault("peer.peerFailure", peerFailure);
        boolean closeOnEof = Boolean.parseBoolean(options.getOrDefault("closeOnEof", "false"));
        boolean flushAfterConnect = Boolean.parseBoolean(options.getOrDefault("flushAfterConnect", "false"));
        boolean earlyKill = Boolean.parseBoolean(options.getOrDefault("earlyKill", "false"));
        long timeoutNanos = TimeUnit.MILLISECONDS.toNanos(Long.parseLong(options.getOrDefault("timeoutMs", "30000")));
        int killMin = Integer.parseInt(options.getOrDefault("killMinMs", "20"));
        int killMax = Integer.parseInt(options.getOrDefault("killMaxMs", "300"));
        int waitMs = Integer.parseInt(options.getOrDefault("waitMs", "1000"));
        boolean healthy = Boolean.parseBoolean(options.getOrDefault("healthy", "true"));
        int maxSize = Math.max(1 << 20, Arrays.stream(sizes).max().orElse(8));

        try (UcxContext context = builder.open()) {
            System.out.println("CONFIG mode=" + mode + " ucx=" + context.config() + " peerFailure=" + peerFailure
                    + " closeOnEof=" + closeOnEof + " flushAfterConnect=" + flushAfterConnect + " earlyKill=" + earlyKill
                    + " peer: mode=" + peerMode + " ucx=" + peerUcx
                    + " peerFailure=" + peerPeerFailure);
            UcxWorker worker = context.newWorker(ThreadMode.SINGLE, "crash-survivor");
            UcxCrashSurvivor survivor = new UcxCrashSurvivor(ucx, mode, peerMode, peerUcx, peerPeerFailure,
                    closeOnEof, timeoutNanos, killMin, killMax, waitMs, worker, maxSize);
            survivor.flushAfterConnect = flushAfterConnect;
            survivor.earlyKill = earlyKill;
            for (String role : roles) {
                int[] roleSizes = role.startsWith("idle") ? new int[] {8}
                        : role.equals("tear") ? new int[] {TornSend.SIZE} : sizes;
                for (int size : roleSizes) {
                    for (int round = 1; round <= rounds; round++) {
                        System.out.println(survivor.round(role, size, round));
                        System.out.flush();
                    }
                }
            }
            if (healthy) {
                System.out.println(survivor.healthyCheck());
            }
            if (worker.outstandingRequests() != 0) {
                throw new IllegalStateException(worker.outstandingRequests() + " requests left on the worker");
            }
        }
        System.out.println(SURVIVED);
        System.out.flush();
        System.exit(0);
    }

    private static Map<String, String> entries(String text) {
        Map<String, String> entries = new LinkedHashMap<>();
        for (String entry : text.isEmpty() ? new String[0] : text.split(";")) {
            int eq = entry.indexOf('=');
            entries.put(entry.substring(0, eq), entry.substring(eq + 1));
        }
        return entries;
    }

    static java.time.Duration parseDuration(String text) {
        String t = text.trim().toLowerCase(Locale.ROOT);
        if (t.endsWith("ms")) {
            return java.time.Duration.ofMillis(Long.parseLong(t.substring(0, t.length() - 2)));
        }
        if (t.endsWith("s")) {
            return java.time.Duration.ofSeconds(Long.parseLong(t.substring(0, t.length() - 1)));
        }
        return java.time.Duration.ofMillis(Long.parseLong(t));
    }

    /** The environment that gives the peer the same UCX configuration. */
    private Map<String, String> peerEnvironment() {
        Map<String, String> env = new LinkedHashMap<>();
        peerUcx.forEach((key, value) -> env.put("UCX_" + key, value));
        return env;
    }

    /** A connected peer: its JVM, its TCP connection, our endpoint to it. */
    private record Peer(ChildJvm jvm, ServerSocket server, Socket socket, DataInputStream in, UcxEndpoint endpoint,
            String peerTransports) implements AutoCloseable {
        @Override
        public void close() throws IOException {
            jvm.close();
            socket.close();
            server.close();
        }
    }

    private Peer start(String peerRole, int size) throws Exception {
        connection++;
        ServerSocket server = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
        server.setSoTimeout(30_000);
        ChildJvm jvm = ChildJvm.start(UcxCrashPeer.class, peerEnvironment(), String.valueOf(server.getLocalPort()),
                peerRole, String.valueOf(size), peerMode.name(), peerFailure, String.valueOf(connection));
        Socket socket;
        try {
            socket = server.accept();
        } catch (IOException e) {
            jvm.close();
            server.close();
            throw new IOException("the peer did not connect: " + jvm.report(), e);
        }
        DataOutputStream out = new DataOutputStream(new BufferedOutputStream(socket.getOutputStream()));
        DataInputStream in = new DataInputStream(new BufferedInputStream(socket.getInputStream()));
        Progress.writeAddress(out, worker.address());
        handlerNanos = 0;
        handlerStatus = 0;
        UcxEndpoint endpoint = worker.connect(Progress.readAddress(in), mode, mode == ErrorMode.PEER ? (ep, status) -> {
            if (handlerNanos == 0) {
                handlerNanos = System.nanoTime();
                handlerStatus = status;
            }
        } : null);
        String peerTransports = in.readUTF();
        String ready = in.readUTF();
        if (!UcxCrashPeer.READY.equals(ready)) {
            throw new IllegalStateException("peer said " + ready + ": " + jvm.report());
        }
        MemorySegment hello = arena.allocate(8);
        long helloTag = UcxCrashPeer.tag(connection, UcxCrashPeer.HELLO);
        long helloReceive = worker.tagReceive(hello, helloTag, -1L);
        check(Progress.complete(worker, endpoint.tagSend(hello, helloTag)), "hello");
        Progress.receive(worker, helloReceive);
        if (flushAfterConnect) {
            check(Progress.complete(worker, endpoint.flush()), "flush after connect");
        }
        return new Peer(jvm, server, socket, in, endpoint, peerTransports);
    }

    private static void check(int status, String what) throws UcxException {
        if (status != UcsStatus.OK) {
            throw new UcxException(what, status);
        }
    }

    private String round(String role, int size, int round) throws Exception {
        String peerRole = switch (role) {
            case "receive" -> "send";
            case "send" -> "receive";
            case "idle", "idle-wait" -> "idle";
            case "tear" -> "tear";
            default -> throw new IllegalArgumentException("role " + role);
        };
        try (Peer peer = start(peerRole, size)) {
            UcxEndpoint endpoint = peer.endpoint();
            String lanes = endpoint.lanes().toString();
            boolean tear = role.equals("tear");
            if (tear) {
                // the peer is blocked inside UCX's write into our FIFO: killed now, it leaves the element torn
                peer.socket().setSoTimeout(30_000);
                String said = peer.in().readUTF();
                if (!UcxCrashPeer.TEARING.equals(said)) {
                    throw new IllegalStateException("peer said " + said + ": " + peer.jvm().report());
                }
                peer.socket().setSoTimeout(0);
            }
            // the TCP connection: EOF is how the provider's control channel learns of a death
            AtomicLong eof = new AtomicLong();
            Thread eofWatcher = Thread.ofPlatform().daemon().start(() -> {
                try {
                    while (peer.in().read() >= 0) {
                        // the peer says nothing more until it exits
                    }
                } catch (IOException ignored) {
                    // a reset counts as the end too
                }
                eof.set(System.nanoTime());
            });

            Arrays.fill(requests, UcxWorker.COMPLETED);
            Arrays.fill(isReceive, false);
            long messages = 0;
            long corrupt = 0;
            int killAfter = tear ? 0 : ThreadLocalRandom.current().nextInt(killMinMs, killMaxMs + 1);
            boolean streaming = !role.startsWith("idle") && !tear;
            long start = System.nanoTime();
            // mid-stream: the delay counts from the first completed message (unless earlyKill)
            boolean armed = !streaming || earlyKill;
            long killAt = start + TimeUnit.MILLISECONDS.toNanos(killAfter);
            long killed = 0;
            long dead = 0;
            long detected = 0;
            String how = "none";
            int head = 0;
            long sequence = 0;
            long dataTag = UcxCrashPeer.tag(connection, UcxCrashPeer.DATA);
            if (streaming) {
                for (int i = 0; i < WINDOW; i++) {
                    MemorySegment slice = buffers[i].asSlice(0, size);
                    slice.fill((byte) 0);
                    if (role.equals("receive")) {
                        requests[i] = worker.tagReceive(slice, dataTag, -1L);
                        isReceive[i] = true;
                    } else {
                        requests[i] = endpoint.tagSend(slice, dataTag);
                    }
                }
            }
            long spins = 0;
            while (true) {
                if (role.equals("idle-wait")) {
                    if (worker.arm()) {
                        worker.waitForEvents(waitMs);
                    }
                }
                worker.progress();
                long now = System.nanoTime();
                if (killed == 0 && armed && now - killAt >= 0) {
                    killed = System.nanoTime();
                    peer.jvm().process().destroyForcibly();
                }
                if (killed != 0 && dead == 0 && (++spins & 255) == 0 && !peer.jvm().isAlive()) {
                    dead = System.nanoTime();
                }
                if (closeOnEof && eof.get() != 0) {
                    detected = eof.get();
                    how = "tcp-eof";
                    break;
                }
                if (handlerNanos != 0) {
                    detected = handlerNanos;
                    how = "handler:" + describe(handlerStatus);
                    break;
                }
                if (streaming) {
                    int status = isReceive[head] ? worker.receiveStatus(requests[head]) : worker.status(requests[head]);
                    if (status == UcsStatus.OK) {
                        if (isReceive[head]) {
                            if (worker.receivedLength() != size
                                    || !UcxCrashPeer.check(buffers[head].asSlice(0, size), sequence, reference)) {
                                corrupt++;
                            }
                            sequence++;
                        }
                        worker.release(requests[head]);
                        MemorySegment slice = buffers[head].asSlice(0, size);
                        if (isReceive[head]) {
                            slice.fill((byte) 0); // so that a message that arrives only in part shows
                        }
                        requests[head] = UcxWorker.COMPLETED;
                        messages++;
                        if (!armed) {
                            armed = true;
                            killAt = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(killAfter);
                        }
                        try {
                            requests[head] = isReceive[head] ? worker.tagReceive(slice, dataTag, -1L)
                                    : endpoint.tagSend(slice, dataTag);
                        } catch (UcxException e) {
                            detected = System.nanoTime();
                            how = "exception:" + describe(e.status());
                            isReceive[head] = false;
                            break;
                        }
                        head = (head + 1) % WINDOW;
                    } else if (status != UcsStatus.INPROGRESS) {
                        detected = System.nanoTime();
                        how = "request:" + describe(status);
                        break;
                    }
                }
                if (killed != 0 && now - killed > timeoutNanos) {
                    break;
                }
                if (killed == 0 && now - start > timeoutNanos) {
                    how = "no-message"; // the stream never started: nothing was killed
                    break;
                }
            }
            if (killed != 0 && dead == 0) {
                peer.jvm().process().waitFor(10, TimeUnit.SECONDS);
                dead = System.nanoTime();
            }

            // clean up: cancel receives, let failed sends complete, release everything; after a
            // TCP EOF, a forced close first (what completes sends to a peer UCX has not yet found dead)
            Map<Integer, Integer> statuses = new TreeMap<>();
            long cleanupStart = System.nanoTime();
            long cleanupDeadline = cleanupStart + CLEANUP_NANOS;
            long forcedClose = UcxWorker.COMPLETED;
            if (how.equals("tcp-eof") && mode == ErrorMode.PEER) {
                forcedClose = endpoint.closeNonBlocking(true);
            }
            for (int i = 0; i < WINDOW; i++) {
                if (requests[i] != UcxWorker.COMPLETED && isReceive[i]) {
                    worker.cancel(requests[i]);
                }
            }
            int stuck = 0;
            for (int i = 0; i < WINDOW; i++) {
                long request = requests[i];
                if (request == UcxWorker.COMPLETED) {
                    continue;
                }
                int status;
                while ((status = worker.status(request)) == UcsStatus.INPROGRESS
                        && System.nanoTime() < cleanupDeadline) {
                    worker.progress();
                }
                if (status == UcsStatus.INPROGRESS) {
                    stuck++;
                }
                statuses.merge(status, 1, Integer::sum);
                worker.release(request);
                requests[i] = UcxWorker.COMPLETED;
            }
            long closeStart = System.nanoTime();
            while (worker.status(forcedClose) == UcsStatus.INPROGRESS && System.nanoTime() < cleanupDeadline) {
                worker.progress();
            }
            if (worker.status(forcedClose) == UcsStatus.INPROGRESS) {
                stuck++;
            }
            worker.release(forcedClose);
            endpoint.close();
            long closeNanos = System.nanoTime() - closeStart;
            long cleanupNanos = System.nanoTime() - cleanupStart;
            eofWatcher.join(10_000);
            return String.format(Locale.ROOT,
                    "ROUND role=%s size=%d round=%d lanes=%s peerLanes=[%s] killAfterMs=%d messages=%d detect=%s"
                            + " detectMs=%s deadMs=%s tcpEofMs=%s corrupt=%d statuses=%s stuck=%d closeMs=%.1f"
                            + " cleanupMs=%.1f repaired=%d",
                    role, size, round, lanes, peer.peerTransports(), killAfter, messages, how,
                    detected == 0 ? "-" : millis(detected - killed), millis(dead - killed),
                    eof.get() == 0 ? "-" : millis(eof.get() - killed), corrupt, statuses, stuck, closeNanos / 1e6,
                    cleanupNanos / 1e6, worker.tornElementsCompleted());
        }
    }

    /** A status as one word: UCX's text without blanks, and the number, e.g. {@code Connection_reset_by_remote_peer(-25)}. */
    private static String describe(int status) {
        return UcsStatus.describe(status).replace(' ', '_') + "(" + status + ")";
    }

    private static String millis(long nanos) {
        return String.format(Locale.ROOT, "%.2f", nanos / 1e6);
    }

    /** A last peer, not killed: echoes 8 B, 64 KiB and 1 MiB messages, checked word for word. */
    private String healthyCheck() throws Exception {
        try (Peer peer = start("echo", 1 << 20)) {
            UcxEndpoint endpoint = peer.endpoint();
            MemorySegment source = buffers[0];
            MemorySegment echo = buffers[1];
            Random random = new Random(1);
            long sequence = random.nextLong();
            long dataTag = UcxCrashPeer.tag(connection, UcxCrashPeer.DATA);
            for (int size : new int[] {8, 64 << 10, 1 << 20}) {
                MemorySegment.copy(reference, 0, source, 0, size);
                UcxCrashPeer.stamp(source.asSlice(0, size), sequence);
                echo.fill((byte) 0);
                long receive = worker.tagReceive(echo.asSlice(0, size),
                        UcxCrashPeer.tag(connection, UcxCrashPeer.ECHO), -1L);
                check(Progress.complete(worker, endpoint.tagSend(source.asSlice(0, size), dataTag)),
                        "healthy send");
                long length = Progress.receive(worker, receive);
                if (length != size || !UcxCrashPeer.check(echo.asSlice(0, size), sequence, reference)) {
                    throw new IllegalStateException("healthy echo of " + size + " B came back wrong");
                }
                sequence++;
            }
            check(Progress.complete(worker, endpoint.tagSend(source.asSlice(0, 0),
                    UcxCrashPeer.tag(connection, UcxCrashPeer.STOP))), "stop");
            String bye = peer.in().readUTF();
            if (!"bye".equals(bye)) {
                throw new IllegalStateException("peer said " + bye);
            }
            List<String> lanes = new ArrayList<>(endpoint.lanes());
            endpoint.close();
            peer.socket().shutdownOutput(); // lets the peer exit
            int exit = peer.jvm().awaitExit(ChildJvm.DEFAULT_EXIT_TIMEOUT);
            if (exit != 0) {
                throw new IllegalStateException("the echo peer failed: " + peer.jvm().report());
            }
            return "HEALTHY lanes=" + lanes + " repaired=" + worker.tornElementsCompleted();
        }
    }
}
