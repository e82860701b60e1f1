package io.hadronio.it.soak;

import io.hadronio.it.Data;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.Arrays;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.zip.CRC32;

/**
 * The two directions of one side of a soak connection: a {@link Sender} that writes its
 * stream with random gathering writes and a {@link Receiver} that reads the peer's with
 * random scattering reads and checks every byte.
 */
final class Streams {
    // the largest single write or read: above a receive slice (64 KiB) and below the window (512 KiB)
    static final int CHUNK = 256 * 1024;
    // bytes no write may take and no read may touch: the buffers outside an array's offset/length
    private static final byte POISON = (byte) 0x5A;
    // up to this many bytes before each piece of an array: pieces start at odd places
    private static final int MAX_GAP = 63;
    // room for a whole chunk in pieces of one buffer, with their gaps
    private static final int BUFFER = CHUNK + 8 * MAX_GAP;

    private Streams() {
    }

    /** The buffers one connection's side writes from and reads into, reused by later connections. */
    static final class Buffers {
        private static final ConcurrentLinkedQueue<Buffers> POOL = new ConcurrentLinkedQueue<>();
        final ByteBuffer heapOut = ByteBuffer.allocate(BUFFER);
        final ByteBuffer directOut = ByteBuffer.allocateDirect(BUFFER);
        final ByteBuffer heapIn = ByteBuffer.allocate(BUFFER);
        final ByteBuffer directIn = ByteBuffer.allocateDirect(BUFFER);
        final byte[] scratchOut = new byte[CHUNK];
        final byte[] scratchIn = new byte[CHUNK];

        static Buffers take() {
            Buffers b = POOL.poll();
            return b != null ? b : new Buffers();
        }

        void give() {
            POOL.add(this);
        }
    }

    /** An array of buffers around the {@code pieces} a call should use, with poisoned ones outside. */
    private static final class Array {
        ByteBuffer[] all;
        int offset;
        int length;
        // how the call is made: 0 = (array, offset, length), 1 = (array), 2 = the one buffer alone
        int form;
        int[] poisonPositions;

        static Array around(ByteBuffer[] pieces, SplittableRandom r, boolean fill) {
            Array a = new Array();
            int lead = r.nextInt(4) == 0 ? 1 + r.nextInt(2) : 0;
            int trail = r.nextInt(4) == 0 ? 1 + r.nextInt(2) : 0;
            a.all = new ByteBuffer[lead + pieces.length + trail];
            for (int i = 0; i < a.all.length; i++) {
                if (i < lead || i >= lead + pieces.length) {
                    ByteBuffer p = r.nextBoolean() ? ByteBuffer.allocate(1 + r.nextInt(32))
                            : ByteBuffer.allocateDirect(1 + r.nextInt(32));
                    if (fill) {
                        while (p.hasRemaining()) {
                            p.put(POISON);
                        }
                        p.clear();
                    }
                    a.all[i] = p;
                } else {
                    a.all[i] = pieces[i - lead];
                }
            }
            a.offset = lead;
            a.length = pieces.length;
            a.form = lead + trail > 0 ? 0 : pieces.length == 1 && r.nextInt(3) == 0 ? 2 : r.nextInt(2);
            a.poisonPositions = new int[a.all.length];
            for (int i = 0; i < a.all.length; i++) {
                a.poisonPositions[i] = a.all[i].position();
            }
            return a;
        }

        long write(SocketChannel ch) throws IOException {
            return switch (form) {
                case 0 -> ch.write(all, offset, length);
                case 1 -> ch.write(all);
                default -> ch.write(all[0]);
            };
        }

        long read(SocketChannel ch) throws IOException {
            return switch (form) {
                case 0 -> ch.read(all, offset, length);
                case 1 -> ch.read(all);
                default -> ch.read(all[0]);
            };
        }

        /** Null, or what a call did to the buffers outside offset/length. */
        String outsideTouched() {
            for (int i = 0; i < all.length; i++) {
                if ((i < offset || i >= offset + length) && all[i].position() != poisonPositions[i]) {
                    return "buffer " + i + " outside offset " + offset + " length " + length + " moved from "
                            + poisonPositions[i] + " to " + all[i].position();
                }
            }
            return null;
        }
    }

    /**
     * Cuts {@code total} bytes into 1..8 pieces (some empty), each a slice of the heap or the
     * direct buffer at a random place.
     */
    private static ByteBuffer[] pieces(SplittableRandom r, int total, ByteBuffer heap, ByteBuffer direct) {
        int n = 1 + r.nextInt(8);
        int[] cuts = new int[n + 1];
        for (int i = 1; i < n; i++) {
            cuts[i] = r.nextInt(total + 1);
        }
        cuts[n] = total;
        Arrays.sort(cuts, 1, n);
        ByteBuffer[] pieces = new ByteBuffer[n];
        int heapUsed = 0;
        int directUsed = 0;
        for (int i = 0; i < n; i++) {
            int len = cuts[i + 1] - cuts[i];
            boolean onHeap = r.nextBoolean();
            ByteBuffer backing = onHeap ? heap : direct;
            int used = onHeap ? heapUsed : directUsed;
            // a random gap before it: the buffers' addresses are not aligned alike
            int gap = r.nextInt(MAX_GAP + 1);
            pieces[i] = backing.slice(used + gap, len);
            if (onHeap) {
                heapUsed = used + gap + len;
            } else {
                directUsed = used + gap + len;
            }
        }
        return pieces;
    }

    /** One side's outgoing stream: its messages, some only after the peer's end-of-stream. */
    static final class Sender {
        private final long base;
        private final long[] messages;
        private final int tailFrom;
        private final SplittableRandom random;
        private final Buffers buffers;
        private ByteBuffer header;
        private int message;
        private long messageLeft;
        private Array array;
        private int prepared;
        private int scratchDone;
        private boolean endsMessage;
        private int messagesSent;
        final long total;
        long sent;
        final CRC32 crc = new CRC32();

        Sender(SoakPlan plan, boolean isClient, SplittableRandom random, Buffers buffers) {
            this.base = plan.base(isClient);
            this.messages = plan.sends(isClient);
            this.tailFrom = plan.tailFrom(isClient);
            this.random = random;
            this.buffers = buffers;
            this.total = SoakPlan.total(messages);
            // a client's first write carries the connection's id in front of the stream
            this.header = isClient ? ByteBuffer.allocate(8).putLong(0, plan.id()) : null;
        }

        boolean hasTail() {
            return tailFrom < messages.length;
        }

        /** Messages whose every byte was written. */
        int messagesSent() {
            return messagesSent;
        }

        /** Something to write now; the tail's messages wait for the peer's end-of-stream. */
        boolean ready(boolean peerEnded) {
            return header != null || scratchDone < prepared || message < tailFrom
                    || (message < messages.length && peerEnded);
        }

        boolean done() {
            return header == null && scratchDone == prepared && message == messages.length;
        }

        /**
         * One write call with a random array (after {@link #ready} said so); returns the
         * stream bytes it took, 0 when a non-blocking channel took none.
         */
        long write(SocketChannel ch, boolean peerEnded) throws IOException {
            if (array == null || (header == null && scratchDone == prepared)) {
                prepare(peerEnded);
            }
            int headerBefore = header != null ? header.position() : 0;
            long n = array.write(ch);
            String outside = array.outsideTouched();
            if (outside != null) {
                throw new StreamError("a write took bytes outside its array's range: " + outside);
            }
            int headerBytes = 0;
            if (header != null) {
                headerBytes = header.position() - headerBefore;
                if (!header.hasRemaining()) {
                    header = null;
                }
            }
            int stream = (int) n - headerBytes;
            if (stream < 0 || stream > prepared - scratchDone) {
                throw new StreamError("write returned " + n + " with " + (prepared - scratchDone) + " stream bytes"
                        + " and " + headerBytes + " header bytes left");
            }
            crc.update(buffers.scratchOut, scratchDone, stream);
            scratchDone += stream;
            sent += stream;
            if (scratchDone == prepared && endsMessage) {
                endsMessage = false;
                messagesSent++;
            }
            return stream;
        }

        /** The next write's bytes: up to {@link #CHUNK} of the current message, in random pieces. */
        private void prepare(boolean peerEnded) {
            int size = 0;
            if (message < tailFrom || (message < messages.length && peerEnded)) {
                if (messageLeft == 0) {
                    messageLeft = messages[message];
                }
                size = (int) Math.min(messageLeft, SoakPlan.logUniform(random, CHUNK));
                messageLeft -= size;
                if (messageLeft == 0) {
                    message++;
                    endsMessage = true;
                }
            }
            byte[] s = buffers.scratchOut;
            for (int k = 0; k < size; k++) {
                s[k] = Data.at(base + sent + k);
            }
            ByteBuffer[] pieces = Streams.pieces(random, size, buffers.heapOut, buffers.directOut);
            int at = 0;
            for (ByteBuffer p : pieces) {
                int len = p.remaining();
                p.put(s, at, len).flip();
                at += len;
            }
            if (header != null) {
                ByteBuffer[] withHeader = new ByteBuffer[pieces.length + 1];
                withHeader[0] = header;
                System.arraycopy(pieces, 0, withHeader, 1, pieces.length);
                pieces = withHeader;
            }
            array = Array.around(pieces, random, true);
            prepared = size;
            scratchDone = 0;
        }
    }

    /** One side's incoming stream: the peer's bytes, each checked against the stream. */
    static final class Receiver {
        private final long base;
        private final SplittableRandom random;
        private final Buffers buffers;
        final long expected;
        long received;
        // System.nanoTime() of the last read that took bytes, 0 before the first
        volatile long lastReadNanos;
        long firstMismatch = -1;
        boolean ended;
        final CRC32 crc = new CRC32();

        Receiver(SoakPlan plan, boolean isClient, SplittableRandom random, Buffers buffers) {
            this.base = plan.base(!isClient);
            this.expected = SoakPlan.total(plan.sends(!isClient));
            this.random = random;
            this.buffers = buffers;
        }

        /** One read call with a random array; -1 at end-of-stream. */
        long read(SocketChannel ch) throws IOException {
            int capacity = (int) SoakPlan.logUniform(random, CHUNK);
            ByteBuffer[] pieces = Streams.pieces(random, capacity, buffers.heapIn, buffers.directIn);
            Array array = Array.around(pieces, random, false);
            long n = array.read(ch);
            String outside = array.outsideTouched();
            if (outside != null) {
                throw new StreamError("a read filled buffers outside its array's range: " + outside);
            }
            if (n < 0) {
                ended = true;
                return n;
            }
            // the pieces in order: each full before the next got a byte
            byte[] s = buffers.scratchIn;
            int at = 0;
            boolean short_ = false;
            for (ByteBuffer p : pieces) {
                int got = p.position();
                if (got > 0 && short_) {
                    throw new StreamError("a read filled a buffer after one it left short");
                }
                short_ |= p.hasRemaining();
                p.flip().get(s, at, got);
                at += got;
            }
            if (at != n) {
                throw new StreamError("read returned " + n + " but filled " + at + " bytes");
            }
            for (int k = 0; k < at; k++) {
                if (s[k] != Data.at(base + received + k) || received + k >= expected) {
                    if (firstMismatch < 0) {
                        firstMismatch = received + k;
                    }
                    break;
                }
            }
            crc.update(s, 0, at);
            received += at;
            if (at > 0) {
                lastReadNanos = System.nanoTime();
            }
            return n;
        }

        boolean complete() {
            return ended && received == expected && firstMismatch < 0;
        }
    }

    /** The provider broke the contract of a call (not an I/O failure): always a test failure. */
    static final class StreamError extends IOException {
        StreamError(String message) {
            super(message);
        }
    }
}
