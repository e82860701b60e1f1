package io.hadronio.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hadronio.HadronioSocketOptions;
import io.hadronio.nio.HadronioSocketChannel;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Two JVMs on one host talk over shared memory by default; with
 * {@code -Dhadronio.ucx.TLS=tcp} the kernel's TCP connection carries the bytes, and with
 * {@code -Dhadronio.kernel.tcp=false} as well, UCX's tcp transport does. The choice is the
 * authenticated handshake's, so both sides run the default mode whatever mode the suite is
 * in ({@link ItSupport#onUcx}; the upgrade session makes the same choice in {@code Upgrade.onHello}).
 */
@Timeout(60)
class TransportSelectionTest extends ItSupport {
    static final Set<String> SHARED_MEMORY = Set.of("sysv", "posix", "cma", "xpmem", "knem");

    static Set<String> parse(String transports) {
        return Arrays.stream(transports.replaceAll("[\\[\\]]", "").split("[,\\s]+"))
                .filter(s -> !s.isEmpty()).collect(Collectors.toCollection(TreeSet::new));
    }

    /** Connects with the T command: the peer reports its transports, then echoes. */
    private static Set<String> peerTransportsOver(SocketChannel ch) throws Exception {
        ByteBuffer length = ByteBuffer.allocate(4);
        while (length.hasRemaining()) {
            assertTrue(ch.read(length) >= 0);
        }
        ByteBuffer text = ByteBuffer.allocate(length.flip().getInt());
        while (text.hasRemaining()) {
            assertTrue(ch.read(text) >= 0);
        }
        return parse(new String(text.array(), StandardCharsets.UTF_8));
    }

    private static void assertEchoes(SocketChannel ch, long n) throws Exception {
        Future<Void> writer = async(() -> {
            Data.write(ch, n);
            ch.shutdownOutput();
            return null;
        });
        Data.Received r = Data.readToEnd(ch);
        writer.get(30, TimeUnit.SECONDS);
        assertEquals(n, r.count());
        assertEquals(-1, r.firstMismatch());
    }

    @Test
    void shouldUseSharedMemoryByDefault() throws Exception {
        try (ChildJvm peer = ChildJvm.withProvider(EAGER_MODE, "server");
             SocketChannel ch = onUcx(peer.port(), 'T', 0)) {
            Set<String> ours = parse(((HadronioSocketChannel) ch).transports());
            Set<String> theirs = peerTransportsOver(ch);
            for (Set<String> t : List.of(ours, theirs)) {
                assertTrue(t.stream().anyMatch(SHARED_MEMORY::contains), "shared memory in " + t);
                assertFalse(t.contains("tcp"), "no tcp in " + t);
            }
            assertEchoes(ch, 4 << 20);
        }
    }

    /**
     * A peer that lets UCX use tcp only: by default ({@code hadronio.kernel.tcp=true}) the
     * server answers the authenticated handshake with PLAIN and both sides keep the kernel's
     * TCP connection, which the JDK drives faster than UCX's tcp transport (issue 10).
     */
    @Test
    void shouldTakeTheKernelsTcpWhenThePeerAllowsUcxOnlyTcp() throws Exception {
        try (ChildJvm peer = ChildJvm.withProvider(List.of("-Dhadronio.ucx.TLS=tcp", "-Dhadronio.upgrade=false"), "server");
             SocketChannel ch = onUcx(peer.port(), 'T', 0)) {
            assertEquals("tcp", ch.getOption(HadronioSocketOptions.TRANSPORT));
            assertEquals(Set.of(), parse(((HadronioSocketChannel) ch).transports()), "no UCX lanes on our side");
            assertEquals(Set.of(), peerTransportsOver(ch), "no UCX lanes on the peer's side");
            assertEchoes(ch, 4 << 20);
        }
    }

    /** With {@code hadronio.kernel.tcp=false} on the server, UCX's own tcp transport carries the bytes. */
    @Test
    void shouldUseUcxTcpWhenThePeerAllowsOnlyTcpAndKernelTcpIsOff() throws Exception {
        try (ChildJvm peer = ChildJvm.withProvider(
                List.of("-Dhadronio.ucx.TLS=tcp", "-Dhadronio.kernel.tcp=false", "-Dhadronio.upgrade=false"), "server");
             SocketChannel ch = onUcx(peer.port(), 'T', 0)) {
            Set<String> ours = parse(((HadronioSocketChannel) ch).transports());
            Set<String> theirs = peerTransportsOver(ch);
            for (Set<String> t : List.of(ours, theirs)) {
                assertTrue(t.contains("tcp"), "tcp in " + t);
                assertFalse(t.stream().anyMatch(SHARED_MEMORY::contains), "no shared memory in " + t);
            }
            assertTrue(ch.getOption(HadronioSocketOptions.TRANSPORT).startsWith("ucx:"),
                    ch.getOption(HadronioSocketOptions.TRANSPORT));
            assertEchoes(ch, 4 << 20);
        }
    }

    @Test
    void shouldTakeTheKernelsTcpBetweenTwoJvmsConfiguredForUcxTcp() throws Exception {
        try (ChildJvm server = ChildJvm.withProvider(List.of("-Dhadronio.ucx.TLS=tcp", "-Dhadronio.upgrade=false"), "server")) {
            int port = server.port();
            try (ChildJvm client = ChildJvm.withProvider(List.of("-Dhadronio.ucx.TLS=tcp", "-Dhadronio.upgrade=false"), "client",
                    String.valueOf(port), String.valueOf(4 << 20), "E")) {
                assertEquals(Set.of(), parse(client.expect("TRANSPORTS ")), client::report);
                Data.Received r = Data.Received.parse(client.expect("RECEIVED "));
                assertEquals(4 << 20, r.count(), client::report);
                assertEquals(-1, r.firstMismatch());
            }
        }
    }

    @Test
    void shouldUseUcxTcpBetweenTwoJvmsConfiguredForTcpWithKernelTcpOff() throws Exception {
        List<String> tcp = List.of("-Dhadronio.ucx.TLS=tcp", "-Dhadronio.kernel.tcp=false", "-Dhadronio.upgrade=false");
        try (ChildJvm server = ChildJvm.withProvider(tcp, "server")) {
            int port = server.port();
            try (ChildJvm client = ChildJvm.withProvider(tcp, "client",
                    String.valueOf(port), String.valueOf(4 << 20), "E")) {
                Set<String> t = parse(client.expect("TRANSPORTS "));
                assertTrue(t.contains("tcp"), "tcp in " + t);
                assertFalse(t.stream().anyMatch(SHARED_MEMORY::contains), "no shared memory in " + t);
                Data.Received r = Data.Received.parse(client.expect("RECEIVED "));
                assertEquals(4 << 20, r.count(), client::report);
                assertEquals(-1, r.firstMismatch());
            }
        }
    }
}
