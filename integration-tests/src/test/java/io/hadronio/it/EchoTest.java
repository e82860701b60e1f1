package io.hadronio.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Bytes sent to a peer JVM come back unchanged, whatever buffers carry them. */
@Timeout(60)
class EchoTest extends ItSupport {
    static ChildJvm peer;
    static int port;

    @BeforeAll
    static void startPeer() throws Exception {
        peer = ChildJvm.withProvider("server");
        port = peer.port();
    }

    @AfterAll
    static void stopPeer() {
        if (peer != null) {
            peer.close();
        }
    }

    enum Kind {
        HEAP, DIRECT, READ_ONLY_HEAP, READ_ONLY_DIRECT;

        ByteBuffer allocate(int capacity) {
            return this == HEAP || this == READ_ONLY_HEAP ? ByteBuffer.allocate(capacity)
                    : ByteBuffer.allocateDirect(capacity);
        }

        /** The bytes as a buffer of this kind. */
        ByteBuffer wrap(byte[] data) {
            ByteBuffer b = allocate(data.length).put(data).flip();
            return this == READ_ONLY_HEAP || this == READ_ONLY_DIRECT ? b.asReadOnlyBuffer() : b;
        }
    }

    static Stream<Arguments> sizesAndKinds() {
        int[] sizes = {1, 2, 1023, 65_535, 65_536, 65_537, (1 << 20) + 3, 8 << 20};
        List<Arguments> cases = new ArrayList<>();
        for (int size : sizes) {
            for (Kind kind : Kind.values()) {
                cases.add(Arguments.of(size, kind));
            }
        }
        return cases.stream();
    }

    @ParameterizedTest(name = "{0} bytes from {1} buffers")
    @MethodSource("sizesAndKinds")
    void shouldEchoEveryByte(int size, Kind kind) throws Exception {
        byte[] data = Data.bytes(0, size);
        try (SocketChannel ch = command(port, 'E', 0)) {
            Future<Void> writer = async(() -> {
                // slices of one buffer of the kind, in chunks of random length, some odd
                ByteBuffer all = kind.wrap(data);
                Random random = new Random(size);
                while (all.hasRemaining()) {
                    int len = Math.min(all.remaining(), 1 + random.nextInt(random.nextBoolean() ? 300_000 : 5_000));
                    ByteBuffer chunk = all.slice(all.position(), len);
                    while (chunk.hasRemaining()) {
                        ch.write(chunk);
                    }
                    all.position(all.position() + len);
                }
                ch.shutdownOutput();
                return null;
            });
            // read into buffers of the same kind (writable: a read-only one is refused, see below)
            ByteBuffer in = (kind == Kind.READ_ONLY_DIRECT ? Kind.DIRECT : kind == Kind.READ_ONLY_HEAP ? Kind.HEAP
                    : kind).allocate(77_777);
            long received = 0;
            long mismatch = -1;
            int n;
            while ((n = ch.read(in)) >= 0) {
                in.flip();
                for (int k = 0; k < n; k++) {
                    if (mismatch < 0 && in.get(k) != Data.at(received + k)) {
                        mismatch = received + k;
                    }
                }
                received += n;
                in.clear();
            }
            writer.get(30, TimeUnit.SECONDS);
            assertEquals(size, received, "bytes echoed");
            assertEquals(-1, mismatch, "offset of the first wrong byte");
            assertEquals(-1, ch.read(ByteBuffer.allocate(1)), "end-of-stream stays");
        }
    }

    @Test
    void shouldRefuseToReadIntoReadOnlyBuffers() throws Exception {
        try (SocketChannel ch = command(port, 'E', 0)) {
            assertThrows(IllegalArgumentException.class, () -> ch.read(ByteBuffer.allocate(8).asReadOnlyBuffer()));
            assertThrows(IllegalArgumentException.class,
                    () -> ch.read(ByteBuffer.allocateDirect(8).asReadOnlyBuffer()));
            assertThrows(IllegalArgumentException.class, () -> ch.read(new ByteBuffer[] {ByteBuffer.allocate(8),
                    ByteBuffer.allocate(8).asReadOnlyBuffer()}));
            // the channel is still fine
            ByteBuffer out = ByteBuffer.wrap(Data.bytes(0, 5));
            while (out.hasRemaining()) {
                ch.write(out);
            }
            ByteBuffer in = ByteBuffer.allocate(5);
            while (in.hasRemaining()) {
                assertFalse(ch.read(in) < 0);
            }
            assertEquals(ByteBuffer.wrap(Data.bytes(0, 5)), in.flip());
        }
    }

    private static final byte OUTSIDE = 0x5A;

    /** A buffer of {@code capacity} bytes, all {@link #OUTSIDE}, with its window at [position, limit). */
    private static ByteBuffer window(boolean direct, int capacity, int position, int limit) {
        ByteBuffer b = direct ? ByteBuffer.allocateDirect(capacity) : ByteBuffer.allocate(capacity);
        for (int i = 0; i < capacity; i++) {
            b.put(i, OUTSIDE);
        }
        return b.limit(limit).position(position);
    }

    @Test
    void shouldGatherAndScatterWithOddPositionsAndLimits() throws Exception {
        try (SocketChannel ch = command(port, 'E', 0)) {
            for (int round = 0; round < 3; round++) {
                // sources: windows at odd offsets, an empty one, a slice with an array offset, a
                // read-only direct one; srcs[0] and srcs[6] lie outside the range given to write
                ByteBuffer before = ByteBuffer.allocate(10);
                ByteBuffer after = ByteBuffer.allocate(10);
                ByteBuffer[] srcs = {
                    before,
                    window(false, 100, 3, 50),
                    window(true, 70_001, 1, 65_540),
                    window(false, 10, 5, 5),
                    ByteBuffer.wrap(new byte[64], 7, 30).slice(),
                    null,
                    after,
                };
                ByteBuffer ro = window(true, 200_000, 5, 199_999);
                long total = 0;
                for (int i = 1; i <= 4; i++) {
                    total += srcs[i].remaining();
                }
                total += ro.remaining();
                // fill the source windows with the stream, in order
                long off = 0;
                for (int i = 1; i <= 5; i++) {
                    ByteBuffer b = i == 5 ? ro : srcs[i];
                    for (int k = b.position(); k < b.limit(); k++) {
                        b.put(k, Data.at(off++));
                    }
                }
                srcs[5] = ro.asReadOnlyBuffer();
                long expected = total;
                Future<Long> writer = async(() -> {
                    long written = 0;
                    while (written < expected) {
                        written += ch.write(srcs, 1, 5);
                    }
                    return written;
                });
                // destinations: windows of other odd shapes adding up to the same total
                ByteBuffer guard = ByteBuffer.allocate(10);
                int rest = (int) (expected - 31 - 131_055 - 99_996);
                ByteBuffer[] dsts = {
                    guard,
                    window(true, 33, 1, 32),
                    window(false, 131_073, 17, 131_072),
                    window(true, 9, 4, 4),
                    window(false, 99_999, 2, 99_998),
                    window(true, rest + 6, 3, rest + 3),
                    guard,
                };
                int[] positions = new int[dsts.length];
                int[] limits = new int[dsts.length];
                for (int i = 0; i < dsts.length; i++) {
                    positions[i] = dsts[i].position();
                    limits[i] = dsts[i].limit();
                }
                long read = 0;
                while (read < expected) {
                    long n = ch.read(dsts, 1, 5);
                    if (n < 0) {
                        throw new AssertionError("end-of-stream after " + read + " of " + expected + " bytes");
                    }
                    read += n;
                }
                assertEquals(expected, writer.get(30, TimeUnit.SECONDS), "bytes written");
                assertEquals(expected, read, "bytes read");
                for (int i = 1; i <= 5; i++) {
                    assertFalse(srcs[i].hasRemaining(), "source " + i + " drained");
                }
                assertEquals(0, before.position(), "buffer before the range untouched");
                assertEquals(0, after.position(), "buffer after the range untouched");
                assertEquals(0, guard.position(), "destinations outside the range untouched");
                long at = 0;
                for (int i = 1; i <= 5; i++) {
                    assertEquals(limits[i], dsts[i].position(), "destination " + i + " filled to its limit");
                    assertEquals(limits[i], dsts[i].limit(), "destination " + i + " limit unchanged");
                    ByteBuffer d = dsts[i].duplicate().clear();
                    for (int k = 0; k < d.capacity(); k++) {
                        boolean inside = k >= positions[i] && k < limits[i];
                        byte want = inside ? Data.at(at++) : OUTSIDE;
                        if (d.get(k) != want) {
                            throw new AssertionError("destination " + i + " byte " + k + (inside ? " (stream offset "
                                    + (at - 1) + ")" : " (outside its window)") + ": " + d.get(k) + " != " + want);
                        }
                    }
                }
            }
        }
    }
}
