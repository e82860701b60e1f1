import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.Arrays;
import java.util.Locale;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * The floor of a short kernel-TCP connection from Java: the protocol of {@code hadronio blocking
 * benchmark connection} (connect, 8-byte request, the server answers request + 1, close; a request
 * of {@code Long.MIN_VALUE} stops the server), either through the JDK's channels ({@code jdk}) or
 * through nothing but system calls made with the FFM API ({@code raw}: socket, connect, write,
 * read, close; on the server accept4 in a blocking loop and one pooled thread per connection, as
 * the benchmark's server). {@code raw} is what a provider with its own plain path, without the
 * JDK's {@code SocketChannelImpl}, could at best do. IPv4 loopback only.
 *
 *   java --enable-native-access=ALL-UNNAMED docs/repro/ConnectionFloor.java server jdk|raw
 *   java --enable-native-access=ALL-UNNAMED docs/repro/ConnectionFloor.java client jdk|raw PORT WARMUP_S SECONDS
 *
 * The server prints "listening on /127.0.0.1:PORT" (as the app's does); the client prints
 * connections/s, p50 and p99. docs/repro/connection-floor.sh runs both against the app's own pairs.
 */
public class ConnectionFloor {
    private static final Linker LINKER = Linker.nativeLinker();
    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT;
    private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG;
    private static final ValueLayout.OfLong WIRE_LONG = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    private static final MethodHandle SOCKET = downcall("socket", FunctionDescriptor.of(INT, INT, INT, INT));
    private static final MethodHandle CONNECT = downcall("connect", FunctionDescriptor.of(INT, INT, ValueLayout.ADDRESS, INT));
    private static final MethodHandle BIND = downcall("bind", FunctionDescriptor.of(INT, INT, ValueLayout.ADDRESS, INT));
    private static final MethodHandle LISTEN = downcall("listen", FunctionDescriptor.of(INT, INT, INT));
    private static final MethodHandle ACCEPT4 = downcall("accept4",
            FunctionDescriptor.of(INT, INT, ValueLayout.ADDRESS, ValueLayout.ADDRESS, INT));
    private static final MethodHandle GETSOCKNAME = downcall("getsockname",
            FunctionDescriptor.of(INT, INT, ValueLayout.ADDRESS, ValueLayout.ADDRESS));
    private static final MethodHandle WRITE = downcall("write", FunctionDescriptor.of(LONG, INT, ValueLayout.ADDRESS, LONG));
    private static final MethodHandle READ = downcall("read", FunctionDescriptor.of(LONG, INT, ValueLayout.ADDRESS, LONG));
    private static final MethodHandle CLOSE = downcall("close", FunctionDescriptor.of(INT, INT));
    private static final int AF_INET = 2;
    private static final int SOCK_STREAM = 1;
    private static final int SOCK_CLOEXEC = 0x80000;
    private static final long STOP = Long.MIN_VALUE;

    private static volatile boolean stopping;

    private static MethodHandle downcall(String name, FunctionDescriptor descriptor) {
        return LINKER.downcallHandle(LINKER.defaultLookup().find(name).orElseThrow(), descriptor);
    }

    public static void main(String[] args) throws Throwable {
        boolean raw = args[1].equals("raw");
        if (args[0].equals("server")) {
            if (raw) {
                rawServer();
            } else {
                jdkServer();
            }
        } else {
            client(raw, Integer.parseInt(args[2]), Double.parseDouble(args[3]), Double.parseDouble(args[4]));
        }
    }

    /** A sockaddr_in of 127.0.0.1:port. */
    private static MemorySegment loopback(int port) {
        MemorySegment sa = Arena.global().allocate(16);
        sa.set(ValueLayout.JAVA_SHORT, 0, (short) AF_INET);
        sa.set(ValueLayout.JAVA_BYTE, 2, (byte) (port >> 8));
        sa.set(ValueLayout.JAVA_BYTE, 3, (byte) port);
        sa.set(ValueLayout.JAVA_BYTE, 4, (byte) 127);
        sa.set(ValueLayout.JAVA_BYTE, 7, (byte) 1);
        return sa;
    }

    private static void check(boolean ok, String what) {
        if (!ok) {
            throw new IllegalStateException(what + " failed");
        }
    }

    // ---- client ----------------------------------------------------------------------------

    private static void client(boolean raw, int port, double warmupSeconds, double seconds) throws Throwable {
        MemorySegment address = loopback(port);
        MemorySegment segment = Arena.global().allocate(8);
        ByteBuffer buffer = ByteBuffer.allocateDirect(8);
        InetSocketAddress remote = new InetSocketAddress("127.0.0.1", port);
        long request = 1;
        long end = System.nanoTime() + (long) (warmupSeconds * 1e9);
        while (System.nanoTime() < end) {
            exchange(raw, address, segment, buffer, remote, request++);
        }
        long[] times = new long[1 << 20];
        int n = 0;
        long start = System.nanoTime();
        long last = start;
        end = start + (long) (seconds * 1e9);
        while (n < times.length) {
            long t0 = System.nanoTime();
            if (t0 >= end) {
                break;
            }
            exchange(raw, address, segment, buffer, remote, request++);
            last = System.nanoTime();
            times[n++] = last - t0;
        }
        exchange(false, address, segment, buffer, remote, STOP);
        long[] sorted = Arrays.copyOf(times, n);
        Arrays.sort(sorted);
        System.out.printf(Locale.ROOT, "conn_per_s=%.0f p50_us=%.1f p99_us=%.1f%n", n / ((last - start) / 1e9),
                sorted[n / 2] / 1e3, sorted[(int) (n * 0.99)] / 1e3);
    }

    private static void exchange(boolean raw, MemorySegment address, MemorySegment segment, ByteBuffer buffer,
            InetSocketAddress remote, long request) throws Throwable {
        long response;
        if (raw) {
            int fd = (int) SOCKET.invokeExact(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
            check(fd >= 0, "socket");
            check((int) CONNECT.invokeExact(fd, address, 16) == 0, "connect");
            segment.set(WIRE_LONG, 0, request);
            check((long) WRITE.invokeExact(fd, segment, 8L) == 8, "write");
            for (long got = 0; got < 8; ) {
                long r = (long) READ.invokeExact(fd, segment.asSlice(got), 8 - got);
                check(r > 0, "read");
                got += r;
            }
            response = segment.get(WIRE_LONG, 0);
            check((int) CLOSE.invokeExact(fd) == 0, "close");
        } else {
            try (SocketChannel channel = SocketChannel.open()) {
                channel.connect(remote);
                buffer.clear().putLong(0, request);
                while (buffer.hasRemaining()) {
                    channel.write(buffer);
                }
                buffer.clear();
                while (buffer.hasRemaining()) {
                    check(channel.read(buffer) >= 0, "read");
                }
                response = buffer.getLong(0);
            }
        }
        check(response == request + 1, "response");
    }

    // ---- server ----------------------------------------------------------------------------

    private static ExecutorService pool() {
        return Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r);
            t.setDaemon(true);
            return t;
        });
    }

    private static void rawServer() throws Throwable {
        ExecutorService pool = pool();
        MemorySegment address = loopback(0);
        int listener = (int) SOCKET.invokeExact(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        check((int) BIND.invokeExact(listener, address, 16) == 0, "bind");
        check((int) LISTEN.invokeExact(listener, 1024) == 0, "listen");
        MemorySegment length = Arena.global().allocate(INT);
        length.set(INT, 0, 16);
        check((int) GETSOCKNAME.invokeExact(listener, address, length) == 0, "getsockname");
        int port = (address.get(ValueLayout.JAVA_BYTE, 2) & 0xff) << 8 | address.get(ValueLayout.JAVA_BYTE, 3) & 0xff;
        System.out.println("listening on /127.0.0.1:" + port);
        System.out.flush();
        while (!stopping) {
            int fd = (int) ACCEPT4.invokeExact(listener, MemorySegment.NULL, MemorySegment.NULL, SOCK_CLOEXEC);
            check(fd >= 0, "accept4");
            pool.execute(() -> serveRaw(fd));
        }
        Thread.sleep(200);
    }

    private static final ThreadLocal<MemorySegment> SEGMENT = ThreadLocal.withInitial(() -> Arena.global().allocate(16));

    private static void serveRaw(int fd) {
        try {
            MemorySegment b = SEGMENT.get();
            long got = 0;
            while (got < 8) {
                long r = (long) READ.invokeExact(fd, b.asSlice(got), 8 - got);
                if (r <= 0) {
                    int ignored = (int) CLOSE.invokeExact(fd);
                    return;
                }
                got += r;
            }
            long request = b.get(WIRE_LONG, 0);
            if (request == STOP) {
                stopping = true;
            }
            b.set(WIRE_LONG, 0, request + 1);
            long written = (long) WRITE.invokeExact(fd, b, 8L);
            while ((long) READ.invokeExact(fd, b, 16L) > 0) {
                // to end-of-stream
            }
            int ignored = (int) CLOSE.invokeExact(fd);
        } catch (Throwable t) {
            t.printStackTrace();
        }
    }

    private static void jdkServer() throws Exception {
        ExecutorService pool = pool();
        ServerSocketChannel listener = ServerSocketChannel.open();
        listener.bind(new InetSocketAddress("127.0.0.1", 0), 1024);
        System.out.println("listening on /127.0.0.1:" + ((InetSocketAddress) listener.getLocalAddress()).getPort());
        System.out.flush();
        while (!stopping) {
            SocketChannel channel = listener.accept();
            pool.execute(() -> serveJdk(channel));
        }
        Thread.sleep(200);
    }

    private static final ThreadLocal<ByteBuffer> BUFFER = ThreadLocal.withInitial(() -> ByteBuffer.allocateDirect(16));

    private static void serveJdk(SocketChannel channel) {
        try (channel) {
            ByteBuffer b = BUFFER.get();
            b.clear().limit(8);
            while (b.hasRemaining()) {
                if (channel.read(b) < 0) {
                    return;
                }
            }
            long request = b.getLong(0);
            if (request == STOP) {
                stopping = true;
            }
            b.clear().putLong(request + 1).flip();
            while (b.hasRemaining()) {
                channel.write(b);
            }
            b.clear();
            while (channel.read(b) >= 0) {
                b.clear();
            }
        } catch (Exception e) {
            e.printStackTrace();
        }
    }
}
