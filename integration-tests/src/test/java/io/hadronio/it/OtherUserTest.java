package io.hadronio.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hadronio.HadronioSocketOptions;
import java.io.File;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The local registry and another user's entries. With the per-user key, an accelerated
 * listener of another user can never be one of ours: our client must not even ask its
 * rendezvous, and connects plain TCP at once; another user's accelerated client must go
 * plain to our server. Both sides of the other user are really accelerated among
 * themselves (shown by a client of that user), so the plain path is due to the user.
 *
 * <p>Needs root (to start a JVM as {@code nobody} with {@code setpriv}); skipped otherwise.
 */
@Timeout(120)
class OtherUserTest extends ItSupport {
    private static final int NOBODY = 65534;
    private static Path dir;
    private static String classPath;
    private static List<String> asNobody;

    @BeforeAll
    static void otherUser() throws Exception {
        Assumptions.assumeTrue("root".equals(System.getProperty("user.name")) && new File("/usr/bin/setpriv").canExecute(),
                "needs root and setpriv to run a peer as another user");
        // the class path may sit in directories only we can read (~/.m2): give the other user a copy
        dir = Files.createTempDirectory("hadronio-other-user");
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxr-xr-x"));
        List<String> entries = new ArrayList<>();
        int i = 0;
        for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
            Path from = Path.of(entry);
            if (!Files.exists(from)) {
                continue;
            }
            Path to = dir.resolve("cp" + i++ + (Files.isDirectory(from) ? "" : ".jar"));
            new ProcessBuilder("cp", "-r", from.toString(), to.toString()).inheritIO().start().waitFor();
            entries.add(to.toString());
        }
        new ProcessBuilder("chmod", "-R", "a+rX", dir.toString()).inheritIO().start().waitFor();
        Path home = Files.createDirectory(dir.resolve("home"));
        new ProcessBuilder("chown", NOBODY + ":" + NOBODY, home.toString()).inheritIO().start().waitFor();
        classPath = String.join(File.pathSeparator, entries);
        asNobody = List.of("/usr/bin/setpriv", "--reuid=" + NOBODY, "--regid=" + NOBODY, "--clear-groups", "--");
    }

    @AfterAll
    static void cleanUp() throws Exception {
        if (dir != null) {
            new ProcessBuilder("rm", "-rf", dir.toString()).inheritIO().start().waitFor();
        }
    }

    private static ChildJvm nobody(String... args) throws IOException {
        // the other user's processes accelerate among themselves at once (the default mode), so
        // that their transports show it after a short exchange whatever mode this suite runs in
        return ChildJvm.start(asNobody, Peer.class, classPath, List.of(
                "-D" + ChildJvm.PROVIDER_PROPERTY + "=" + ChildJvm.PROVIDER,
                "-Duser.home=" + dir.resolve("home"), "-Dhadronio.upgrade=false"), args);
    }

    @Test
    void shouldConnectPlainToAnotherUsersAcceleratedServer() throws Exception {
        try (ChildJvm server = nobody("server")) {
            int port = server.port();
            // the other user's own client is accelerated: the server is a real accelerated one
            try (ChildJvm sameUser = nobody("client", String.valueOf(port), "1000", "peer")) {
                String t = sameUser.expect("TRANSPORTS ");
                assertTrue(t.contains("sysv") || t.contains("cma") || t.contains("posix"),
                        "the other user's processes accelerate among themselves: " + t + "\n" + sameUser.report());
                Data.Received r = Data.Received.parse(sameUser.expect("RECEIVED "));
                assertEquals(1000, r.count());
                assertEquals(-1, r.firstMismatch());
            }
            // ours is plain, byte for byte
            try (SocketChannel ch = command(port, 'T', 0)) {
                assertEquals("tcp", ch.getOption(HadronioSocketOptions.TRANSPORT));
                ByteBuffer len = ByteBuffer.allocate(4);
                while (len.hasRemaining()) {
                    assertTrue(ch.read(len) >= 0);
                }
                ByteBuffer name = ByteBuffer.allocate(len.flip().getInt());
                while (name.hasRemaining()) {
                    assertTrue(ch.read(name) >= 0);
                }
                assertEquals("[]", new String(name.array(), StandardCharsets.UTF_8),
                        "the server sees a plain connection too");
                byte[] payload = "across users".getBytes(StandardCharsets.UTF_8);
                ch.write(ByteBuffer.wrap(payload));
                ByteBuffer back = ByteBuffer.allocate(payload.length);
                while (back.hasRemaining()) {
                    assertTrue(ch.read(back) >= 0);
                }
                assertEquals("across users", new String(back.array(), StandardCharsets.UTF_8));
            }
        }
    }

    @Test
    void shouldServeAnotherUsersAcceleratedClientAsPlainTcp() throws Exception {
        try (ServerSocketChannel listener = ServerSocketChannel.open().bind(loopback(0))) {
            int port = ((java.net.InetSocketAddress) listener.getLocalAddress()).getPort();
            try (ChildJvm client = nobody("client", String.valueOf(port), "100000")) {
                try (SocketChannel accepted = listener.accept()) {
                    assertEquals("tcp", accepted.getOption(HadronioSocketOptions.TRANSPORT));
                    assertEquals("[]", client.expect("TRANSPORTS "));
                    // echo what the client sends until its end-of-stream, then close
                    ByteBuffer buf = ByteBuffer.allocate(8192);
                    while (accepted.read(buf) >= 0) {
                        buf.flip();
                        while (buf.hasRemaining()) {
                            accepted.write(buf);
                        }
                        buf.clear();
                    }
                }
                Data.Received r = Data.Received.parse(client.expect("RECEIVED "));
                assertEquals(100_000, r.count());
                assertEquals(-1, r.firstMismatch(), "bytes echoed intact");
            }
        }
    }
}
