package io.hadronio.ucx;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.net.Socket;

/**
 * The other JVM of {@link UcxTwoProcessTest}: connects to the test's TCP port on
 * 127.0.0.1, swaps UCX worker addresses over it, reports its endpoint's transports,
 * then echoes every tagged message with tag {@link #TAG_REQUEST} back with tag
 * {@link #TAG_REPLY}, until a message with tag {@link #TAG_STOP}. Its context reads
 * the {@code UCX_*} environment only (the test sets {@code UCX_TLS} for it).
 *
 * <p>Exit codes: 0 done, 1 failure (stack trace printed), 3 watchdog: the test went
 * away or stopped talking.
 */
public final class UcxEchoPeer {
    static final long TAG_REQUEST = 1;
    static final long TAG_REPLY = 2;
    static final long TAG_STOP = 3;
    static final int MAX_MESSAGE = 4 << 20;
    static final String READY = "ready";
    static final String BYE = "bye";

    private UcxEchoPeer() {
    }

    public static void main(String[] args) throws Exception {
        Thread watchdog = new Thread(() -> {
            try {
                Thread.sleep(60_000);
            } catch (InterruptedException e) {
                return;
            }
            System.err.println("UcxEchoPeer: watchdog expired, exiting");
            Runtime.getRuntime().halt(3);
        }, "watchdog");
        watchdog.setDaemon(true);
        watchdog.start();
        try {
            run(Integer.parseInt(args[0]));
        } catch (Throwable t) {
            t.printStackTrace();
            System.exit(1);
        }
        System.exit(0);
    }

    private static void run(int port) throws Exception {
        try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), port);
                UcxContext context = UcxContext.builder().features(Feature.TAG).name("echo-peer").open();
                Arena arena = Arena.ofShared()) {
            socket.setSoTimeout(30_000);
            DataOutputStream out = new DataOutputStream(new BufferedOutputStream(socket.getOutputStream()));
            DataInputStream in = new DataInputStream(new BufferedInputStream(socket.getInputStream()));
            UcxWorker worker = context.newWorker(ThreadMode.SINGLE, "echo-peer");
            Progress.writeAddress(out, worker.address());
            UcxEndpoint endpoint = worker.connect(Progress.readAddress(in), ErrorMode.NONE);
            out.writeUTF(String.join(",", endpoint.transports()));
            out.writeUTF(READY);
            out.flush();

            MemorySegment buffer = arena.allocate(MAX_MESSAGE);
            while (true) {
                long request = worker.tagReceive(buffer, 0, 0); // any tag
                long length = Progress.receive(worker, request);
                long tag = worker.receivedTag();
                if (tag == TAG_STOP) {
                    break;
                }
                if (tag != TAG_REQUEST) {
                    throw new IllegalStateException("unexpected tag " + tag);
                }
                int status = Progress.complete(worker, endpoint.tagSend(buffer.asSlice(0, length), TAG_REPLY));
                if (status != UcsStatus.OK) {
                    throw new UcxException("echo send", status);
                }
            }
            if (worker.outstandingRequests() != 0) {
                throw new IllegalStateException(worker.outstandingRequests() + " requests left");
            }
            out.writeUTF(BYE);
            out.flush();
            // the test closes its side first; wait for that so that no close races the last echo
            in.read();
        }
    }
}
