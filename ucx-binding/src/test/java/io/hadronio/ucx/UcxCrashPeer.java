package io.hadronio.ucx;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.net.Socket;

/**
 * The peer that {@link UcxCrashSurvivor} kills: a second JVM that connects to the
 * survivor's TCP port on 127.0.0.1, swaps worker addresses, makes an endpoint in the
 * given error mode, reports its transports, and then plays one role until it is
 * killed with SIGKILL (or, in the {@code echo} role, until told to stop):
 *
 * <ul>
 * <li>{@code send}: streams tagged messages of the given size to the survivor, a
 *     window of {@link #WINDOW} at a time, each with {@link #prepare its pattern} and
 *     {@link #stamp sequence number};
 * <li>{@code receive}: keeps {@link #WINDOW} receives posted for the survivor's stream;
 * <li>{@code idle}: progresses its worker now and then, sends nothing;
 * <li>{@code echo}: sends every message back (kind {@link #ECHO}) until one of kind
 *     {@link #STOP}: the survivor's check that it still works after the crashes;
 * <li>{@code tear}: starts one {@link TornSend} to the survivor, writes {@link #TEARING} on
 *     the TCP connection once UCX is packing it (a FIFO element of the survivor's worker
 *     taken, not yet marked written), and blocks there until it is killed.
 * </ul>
 *
 * <p>Its context reads the {@code UCX_*} environment only; the survivor passes its own
 * configuration that way, and the keepalive interval of
 * {@link UcxContext.Builder#peerFailureDetection} as an argument. Arguments:
 * {@code PORT ROLE SIZE ERROR_MODE KEEPALIVE|- CONNECTION} (the number in the
 * connection's {@link #tag tags}). Exit codes: 0
 * done (echo), 1 failure (stack trace printed), 3 watchdog.
 */
public final class UcxCrashPeer {
    // kinds of message; the tag also carries a connection number, see tag()
    static final int DATA = 1;
    static final int ECHO = 2;
    static final int STOP = 3;
    static final int HELLO = 4;
    static final int WINDOW = 4;
    static final String READY = "ready";
    static final String TEARING = "tearing";
    // multiplier of the payload pattern: word i is i * K
    private static final long K = 0x9E37_79B9_7F4A_7C15L;

    private UcxCrashPeer() {
    }

    /**
     * The tag of a message of this kind on this connection. Tags are the worker's, not
     * the endpoint's: what a killed peer had sent but the survivor had not yet received
     * stays in the survivor's unexpected queue and would match a later receive with the
     * same tag, from any peer. So every connection has tags of its own.
     */
    static long tag(long connection, int kind) {
        return 0x4352_0000_0000_0000L | (connection << 8) | kind;
    }

    /**
     * The payload pattern: word {@code i} of every message is {@code i * K}, except the
     * first and the last word, which carry the message's sequence number ({@link #stamp}).
     * Prepared once per buffer; a message then costs two stores to stamp and a
     * {@link MemorySegment#mismatch} against a {@link #reference} to check.
     */
    static void prepare(MemorySegment buffer) {
        long words = buffer.byteSize() / 8;
        for (long i = 0; i < words; i++) {
            buffer.set(ValueLayout.JAVA_LONG_UNALIGNED, i * 8, i * K);
        }
    }

    /** A buffer of {@code size} bytes with the pattern, for {@link #check}. */
    static MemorySegment reference(Arena arena, int size) {
        MemorySegment reference = arena.allocate(Math.max(size, 8), 8);
        prepare(reference);
        return reference;
    }

    /** Writes the sequence number into the first and the last word of a prepared buffer. */
    static void stamp(MemorySegment message, long sequence) {
        long size = message.byteSize();
        if (size >= 8) {
            message.set(ValueLayout.JAVA_LONG_UNALIGNED, 0, sequence);
            message.set(ValueLayout.JAVA_LONG_UNALIGNED, (size / 8 - 1) * 8, sequence);
        }
    }

    /**
     * True when {@code message} is message {@code sequence}, intact: both stamps, and
     * every word between them as in {@code reference}.
     */
    static boolean check(MemorySegment message, long sequence, MemorySegment reference) {
        long size = message.byteSize();
        if (size < 8) {
            return true;
        }
        long last = (size / 8 - 1) * 8;
        if (message.get(ValueLayout.JAVA_LONG_UNALIGNED, 0) != sequence
                || message.get(ValueLayout.JAVA_LONG_UNALIGNED, last) != sequence) {
            return false;
        }
        return last <= 8 || MemorySegment.mismatch(message, 8, last, reference, 8, last) == -1;
    }

    public static void main(String[] args) throws Exception {
        Thread watchdog = new Thread(() -> {
            try {
                Thread.sleep(120_000);
            } catch (InterruptedException e) {
                return;
            }
            System.err.println("UcxCrashPeer: watchdog expired, exiting");
            Runtime.getRuntime().halt(3);
        }, "watchdog");
        watchdog.setDaemon(true);
        watchdog.start();
        try {
            run(Integer.parseInt(args[0]), args[1], Integer.parseInt(args[2]), ErrorMode.valueOf(args[3]), args[4],
                    Long.parseLong(args[5]));
        } catch (Throwable t) {
            t.printStackTrace();
            System.exit(1);
        }
        System.exit(0);
    }

    private static void run(int port, String role, int size, ErrorMode mode, String peerFailure, long connection)
            throws Throwable {
        UcxContext.Builder builder = UcxContext.builder().features(Feature.TAG).name("crash-peer");
        if (!peerFailure.equals("-")) {
            builder.peerFailureDetection(UcxCrashSurvivor.parseDuration(peerFailure));
        }
        try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), port);
                UcxContext context = builder.open();
                Arena arena = Arena.ofShared()) {
            DataOutputStream out = new DataOutputStream(new BufferedOutputStream(socket.getOutputStream()));
            DataInputStream in = new DataInputStream(new BufferedInputStream(socket.getInputStream()));
            UcxWorker worker = context.newWorker(ThreadMode.SINGLE, "crash-peer");
            Progress.writeAddress(out, worker.address());
            UcxEndpoint endpoint = worker.connect(Progress.readAddress(in), mode,
                    mode == ErrorMode.PEER ? (ep, status) -> { } : null);
            out.writeUTF(String.join(",", endpoint.transports()));
            out.writeUTF(READY);
            out.flush();

            MemorySegment[] buffers = new MemorySegment[WINDOW];
            for (int i = 0; i < WINDOW; i++) {
                buffers[i] = arena.allocate(Math.max(size, 8), 4096);
                prepare(buffers[i]);
            }
            // one small message each way first, so that both endpoints are wired up and in use
            MemorySegment hello = arena.allocate(8);
            long helloReceive = worker.tagReceive(hello, tag(connection, HELLO), -1L);
            check(Progress.complete(worker, endpoint.tagSend(hello, tag(connection, HELLO))), "hello send");
            Progress.receive(worker, helloReceive);

            switch (role) {
                case "send" -> send(worker, endpoint, buffers, size, tag(connection, DATA));
                case "receive" -> receive(worker, buffers, size, tag(connection, DATA));
                case "idle" -> idle(worker);
                case "echo" -> echo(worker, endpoint, buffers[0], tag(connection, ECHO), tag(connection, STOP));
                case "tear" -> tear(worker, endpoint, out, tag(connection, DATA));
                default -> throw new IllegalArgumentException("role " + role);
            }
            out.writeUTF("bye");
            out.flush();
            in.read(); // until the survivor closes
        }
    }

    private static void check(int status, String what) throws UcxException {
        if (status != UcsStatus.OK) {
            throw new UcxException(what, status);
        }
    }

    private static void send(UcxWorker worker, UcxEndpoint endpoint, MemorySegment[] buffers, int size, long tag)
            throws UcxException {
        long[] requests = new long[WINDOW];
        long sequence = 0;
        for (int i = 0; i < WINDOW; i++) {
            stamp(buffers[i].asSlice(0, size), sequence);
            requests[i] = endpoint.tagSend(buffers[i].asSlice(0, size), tag);
            sequence++;
        }
        int head = 0;
        while (true) {
            worker.progress();
            int status = worker.status(requests[head]);
            if (status == UcsStatus.INPROGRESS) {
                continue;
            }
            worker.release(requests[head]);
            check(status, "stream send");
            stamp(buffers[head].asSlice(0, size), sequence);
            requests[head] = endpoint.tagSend(buffers[head].asSlice(0, size), tag);
            sequence++;
            head = (head + 1) % WINDOW;
        }
    }

    private static void receive(UcxWorker worker, MemorySegment[] buffers, int size, long tag) throws UcxException {
        long[] requests = new long[WINDOW];
        for (int i = 0; i < WINDOW; i++) {
            requests[i] = worker.tagReceive(buffers[i].asSlice(0, size), tag, -1L);
        }
        int head = 0;
        while (true) {
            worker.progress();
            int status = worker.receiveStatus(requests[head]);
            if (status == UcsStatus.INPROGRESS) {
                continue;
            }
            worker.release(requests[head]);
            check(status, "stream receive");
            requests[head] = worker.tagReceive(buffers[head].asSlice(0, size), tag, -1L);
            head = (head + 1) % WINDOW;
        }
    }

    private static void tear(UcxWorker worker, UcxEndpoint endpoint, DataOutputStream out, long tag) throws Throwable {
        TornSend.send(endpoint, tag, () -> {
            try {
                out.writeUTF(TEARING);
                out.flush();
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        });
        // UCX queued the send instead of packing it at once: it packs during progress
        while (true) {
            worker.progress();
        }
    }

    private static void idle(UcxWorker worker) throws InterruptedException {
        while (true) {
            worker.progress();
            Thread.sleep(1);
        }
    }

    private static void echo(UcxWorker worker, UcxEndpoint endpoint, MemorySegment buffer, long echoTag, long stopTag)
            throws UcxException {
        while (true) {
            long request = worker.tagReceive(buffer, 0, 0);
            long length = Progress.receive(worker, request);
            if (worker.receivedTag() == stopTag) {
                return;
            }
            check(Progress.complete(worker, endpoint.tagSend(buffer.asSlice(0, length), echoTag)), "echo send");
        }
    }
}
