package io.hadronio;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hadronio.platform.UnixSeqpacket;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Hostile input on the local rendezvous of a live accelerated server: 100,000 sessions
 * with garbage, truncated, oversized, well-framed but unauthenticated and half-finished
 * messages. Every one is refused, the server keeps accelerating a real client meanwhile
 * and afterwards, and its file descriptors return to where they were.
 */
@Tag("slow")
@Timeout(300)
class RendezvousFuzzTest extends ContractSupport {
    private static final int INPUTS = Integer.getInteger("it.fuzz.inputs", 100_000);

    private static long openFds() throws IOException {
        try (var fds = Files.list(Path.of("/proc/self/fd"))) {
            return fds.count();
        }
    }

    private static byte[] input(Random r) {
        int kind = r.nextInt(6);
        byte[] m;
        switch (kind) {
            case 0 -> m = new byte[0];
            case 1 -> m = new byte[1 + r.nextInt(7)];                 // shorter than a header
            case 2 -> m = new byte[1000 + r.nextInt(3000)];           // oversized
            default -> m = new byte[8 + r.nextInt(120)];              // header-sized and more
        }
        r.nextBytes(m);
        if (kind >= 3 && m.length >= 8) {
            // our magic, version and a REGISTER kind, with a plausible or a lying length
            m[0] = 'H';
            m[1] = 'N';
            m[2] = 'I';
            m[3] = 'O';
            m[4] = 2;
            m[5] = (byte) (kind == 5 ? 11 : 9 + r.nextInt(6));
            int body = kind == 4 ? r.nextInt(65536) : m.length - 8;
            m[6] = (byte) (body >>> 8);
            m[7] = (byte) body;
        }
        return m;
    }

    private static void echoOnce(ServerSocketChannel listener) throws Exception {
        try (SocketChannel c = EagerProvider.get().openSocketChannel()) {
            c.connect(listener.getLocalAddress());
            try (SocketChannel s = listener.accept()) {
                assertTrue(c.getOption(HadronioSocketOptions.TRANSPORT).startsWith("ucx:"),
                        "a real client is still accelerated");
                c.write(ByteBuffer.wrap(new byte[] {7}));
                ByteBuffer b = ByteBuffer.allocate(1);
                while (b.hasRemaining()) {
                    s.read(b);
                }
                assertEquals(7, b.get(0));
            }
        }
    }

    @Test
    void shouldRefuseEveryHostileRendezvousInputAndKeepServing() throws Exception {
        try (ServerSocketChannel listener = EagerProvider.get().openServerSocketChannel()
                .bind(new InetSocketAddress(LOOPBACK, 0))) {
            int port = ((InetSocketAddress) listener.getLocalAddress()).getPort();
            echoOnce(listener);
            long fdsBefore = openFds();
            Random r = new Random(42);
            int refused = 0;
            for (int i = 0; i < INPUTS; i++) {
                UnixSeqpacket s = UnixSeqpacket.connect("hadronio/" + port);
                if (s == null) {
                    // the listener's backlog is full for a moment: the server is still busy
                    Thread.onSpinWait();
                    i--;
                    continue;
                }
                try (s) {
                    byte[] challenge = null;
                    if (i % 3 == 0) {
                        // some wait for the challenge first, as a client would
                        s.awaitReadable(System.nanoTime() + 1_000_000_000L);
                        challenge = s.receive(256);
                    }
                    boolean sent = i % 7 != 0;
                    if (sent) {
                        // (the others send nothing at all and leave)
                        s.send(input(r));
                    }
                    if (sent && challenge != null && i % 2 == 0) {
                        // a reply must never be REGISTERED: nothing here holds the key
                        s.awaitReadable(System.nanoTime() + 1_000_000_000L);
                        byte[] answer = s.receive(256);
                        assertTrue(answer == null || answer.length < 6 || answer[5] != 12,
                                "input " + i + " was registered");
                        refused++;
                    }
                } catch (IOException e) {
                    // the server closed on us: refused, as it should
                    refused++;
                }
                if (i % Math.max(1, INPUTS / 5) == 0) {
                    echoOnce(listener);
                }
            }
            echoOnce(listener);
            // sessions the server has not closed yet end within its session timeout (2 s)
            long fdsAfter = openFds();
            for (int wait = 0; wait < 100 && fdsAfter > fdsBefore + 2; wait++) {
                Thread.sleep(50);
                fdsAfter = openFds();
            }
            System.out.println("rendezvous fuzz: " + INPUTS + " inputs, " + refused + " seen refused, fds "
                    + fdsBefore + " -> " + fdsAfter);
            assertTrue(fdsAfter <= fdsBefore + 2, "fds " + fdsBefore + " -> " + fdsAfter);
        }
    }
}
