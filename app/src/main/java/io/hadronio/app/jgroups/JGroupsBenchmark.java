package io.hadronio.app.jgroups;

import io.hadronio.app.CallLoop;
import io.hadronio.app.ProviderSelection;
import io.hadronio.app.Transports;
import java.io.ByteArrayInputStream;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.nio.ByteBuffer;
import java.nio.channels.NetworkChannel;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.stream.Collectors;
import org.jgroups.Address;
import org.jgroups.BytesMessage;
import org.jgroups.Event;
import org.jgroups.JChannel;
import org.jgroups.Message;
import org.jgroups.Receiver;
import org.jgroups.UpHandler;
import org.jgroups.Version;
import org.jgroups.View;
import org.jgroups.blocks.MethodCall;
import org.jgroups.blocks.RequestOptions;
import org.jgroups.blocks.RpcDispatcher;
import org.jgroups.blocks.cs.BaseServer;
import org.jgroups.blocks.cs.NioConnection;
import org.jgroups.protocols.BaseBundler;
import org.jgroups.protocols.MFC;
import org.jgroups.protocols.TP;
import org.jgroups.protocols.RED;
import org.jgroups.protocols.TCP_NIO2;
import org.jgroups.protocols.pbcast.NAKACK2;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code hadronio jgroups benchmark}: one member of a JGroups cluster on TCP_NIO2 (the
 * protocols of JGroups' own {@code tcp-nio.xml}, TCPPING over the given ports of 127.0.0.1).
 * Start one JVM per port; each member
 *
 * <ol>
 *   <li>joins, waits for the view of all members, then for every member's "joined" marker
 *       (a barrier);</li>
 *   <li>multicasts {@code --size}-byte messages for {@code --warmup} seconds, a "measuring"
 *       marker, messages for {@code --duration} seconds more, and a "sent" marker with its
 *       count;</li>
 *   <li>counts the messages it receives (its own included, as JGroups delivers them) from the
 *       first member's "measuring" marker to the last member's "sent" marker (as JGroups' own
 *       MPerf measures: first to last, the receivers' backlog included), and prints
 *       {@code RESULT ... mode=multicast ... per_s=...}; it checks that every sender's messages
 *       arrive complete and in order;</li>
 *   <li>member 0 then calls another member through JGroups' {@link RpcDispatcher}, one
 *       synchronous unicast RPC at a time ({@code echo(byte[])}, the answer checked), for a
 *       warm-up and {@code --duration}, and prints {@code RESULT ... mode=rpc ...};</li>
 *   <li>after a last barrier (everyone done) every member leaves.</li>
 * </ol>
 *
 * The markers are JGroups multicasts too: one sender's messages arrive in the order sent, so
 * a member that has a sender's marker has all that sender sent before it. (Flow control lets a
 * sender run up to 2 MB ahead of each receiver, so a member receives the others' parts seconds
 * after they were sent, and not all at the same time; its window follows what it receives.)
 */
@Command(name = "benchmark", mixinStandardHelpOptions = true,
        description = {"One member of a JGroups (TCP_NIO2) cluster on 127.0.0.1: multicast messages/s received "
                + "per member, then (member 0) sequential RPC round trips; start one JVM per port.",
            "DISABLE_HADRONIO=true: on the JDK's provider."})
public final class JGroupsBenchmark implements Callable<Integer> {
    // first byte of every message of ours
    private static final byte DATA = 0;
    private static final byte MARK = 1;
    private static final byte SENT = 2;
    private static final int HEADER = 1 + 4 + 8;
    // markers: every member joined (a barrier); a member's measured part starts; everyone done (a barrier)
    private static final int JOINED = 0;
    private static final int MEASURE = 1;
    private static final int FINISHED = 2;
    // the one method of the RPCs, found by id (0), as JGroups advises against looking methods up by name per call
    private static final Method ECHO;

    static {
        try {
            ECHO = JGroupsBenchmark.class.getMethod("echo", byte[].class);
        } catch (NoSuchMethodException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    @Spec
    CommandSpec spec;

    @Option(names = {"-m", "--member"}, required = true, description = "This member's index in --ports.")
    int member;

    @Option(names = {"-p", "--ports"}, required = true, split = ",", paramLabel = "PORT",
            description = "Every member's TCP port on 127.0.0.1 (comma-separated), this one's included.")
    List<Integer> ports;

    @Option(names = {"-l", "--size"}, defaultValue = "100",
            description = "Bytes per multicast message and per RPC argument (default: ${DEFAULT-VALUE}, at least " + HEADER
                    + ").")
    int size;

    @Option(names = "--warmup", paramLabel = "SECONDS", defaultValue = "3",
            description = "Unmeasured seconds before each measured part (default: ${DEFAULT-VALUE}).")
    double warmupSeconds;

    @Option(names = {"-d", "--duration"}, paramLabel = "SECONDS", defaultValue = "5",
            description = "Measured seconds of multicasting and of RPCs (default: ${DEFAULT-VALUE}).")
    double durationSeconds;

    @Option(names = "--platform-threads", description = "Run JGroups' message handlers and selector loop on platform "
            + "threads (TP use_virtual_threads=false) instead of JGroups' default, virtual threads.")
    boolean platformThreads;

    @Option(names = "--no-rpc", description = "Skip member 0's RPC round trips.")
    boolean noRpc;

    @Option(names = "--cluster", defaultValue = "hadronio-bench", description = "Cluster name (default: ${DEFAULT-VALUE}).")
    String cluster;

    // what the members' messages tell this one
    private int members;
    private final CountDownLatch fullView = new CountDownLatch(1);
    private final List<CountDownLatch> marks = new ArrayList<>();
    // each member's address, from its "joined" marker, and whether its "finished" marker counted
    private final Map<Address, Integer> memberAt = new ConcurrentHashMap<>();
    private AtomicIntegerArray finished;
    private AtomicLongArray received;
    private AtomicLongArray sentBy;
    private long[] next;
    private CountDownLatch allSent;
    private final AtomicLong failures = new AtomicLong();
    // messages received from the first member's "measuring" marker to the last member's "sent" marker
    private final AtomicLong measured = new AtomicLong();
    private volatile boolean measuring;
    // guards opening and closing the window (markers of different members arrive on different threads)
    private final Object window = new Object();
    private volatile long measureStart;
    private volatile long measureEnd;

    /** The RPC target's method: answers with its argument. */
    public byte[] echo(byte[] value) {
        return value;
    }

    @Override
    public Integer call() throws Exception {
        members = ports.size();
        if (member < 0 || member >= members || size < HEADER || warmupSeconds < 0 || durationSeconds <= 0) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--member must index --ports, --size be >= "
                    + HEADER + ", --warmup >= 0 and --duration > 0");
        }
        // JGroups binds IPv4 addresses; as its documentation asks, before anything touches the network
        if (System.getProperty("java.net.preferIPv4Stack") == null) {
            System.setProperty("java.net.preferIPv4Stack", "true");
        }
        ProviderSelection.apply();
        for (int i = 0; i < 3; i++) {
            marks.add(new CountDownLatch(members));
        }
        received = new AtomicLongArray(members);
        sentBy = new AtomicLongArray(members);
        next = new long[members];
        allSent = new CountDownLatch(members);
        finished = new AtomicIntegerArray(members);
        Duration warmup = Duration.ofNanos((long) (warmupSeconds * 1e9));
        Duration duration = Duration.ofNanos((long) (durationSeconds * 1e9));
        long patience = (long) (warmupSeconds + durationSeconds) + 60;

        String hosts = ports.stream().map(p -> "127.0.0.1[" + p + "]").collect(Collectors.joining(","));
        try (JChannel channel = new JChannel(new ByteArrayInputStream(config(ports.get(member), hosts, !platformThreads)
                .getBytes(StandardCharsets.UTF_8)));
             RpcDispatcher rpc = new RpcDispatcher(channel, this)) {
            rpc.setMethodLookup(id -> ECHO);
            rpc.setReceiver(new Receiver() {
                @Override
                public void viewAccepted(View view) {
                    if (view.size() == members) {
                        fullView.countDown();
                    }
                    // A member leaves only after the last barrier, so one that left has finished: its
                    // "finished" marker may reach us after the view without it (JGroups drops a
                    // non-member's messages), as it sends the marker and leaves at once when it is last.
                    memberAt.forEach((address, index) -> {
                        if (!view.containsMember(address)) {
                            countFinished(index, "left the cluster before its marker arrived");
                        }
                    });
                }
            });
            // a MessageDispatcher takes every message of its channel and drops those that are not
            // its requests or answers: those (the multicasts) go to this member instead
            UpHandler dispatcher = channel.getUpHandler();
            channel.setUpHandler(new UpHandler() {
                @Override
                public UpHandler setLocalAddress(Address a) {
                    dispatcher.setLocalAddress(a);
                    return this;
                }

                @Override
                public Object up(Event evt) {
                    return dispatcher.up(evt);
                }

                @Override
                public Object up(Message msg) {
                    if (!rpc.getCorrelator().receiveMessage(msg)) {
                        receive(msg);
                    }
                    return null;
                }
            });
            channel.setName("member-" + member);
            System.out.println("JGroups " + Version.printVersion() + ", member " + member + " of " + members + " ("
                    + Transports.provider() + ")");
            System.out.flush();
            channel.connect(cluster);
            if (!fullView.await(60, TimeUnit.SECONDS)) {
                throw new IllegalStateException("no view of " + members + " members in 60 s: " + channel.getView());
            }
            barrier(channel, JOINED, 60);

            long sent = 0;
            long measuredFrom = System.nanoTime() + warmup.toNanos();
            while (System.nanoTime() - measuredFrom < 0) {
                send(channel, DATA, sent++);
            }
            send(channel, MARK, MEASURE);
            long end = System.nanoTime() + duration.toNanos();
            long measuredSent = 0;
            while (System.nanoTime() - end < 0) {
                send(channel, DATA, sent++);
                measuredSent++;
            }
            send(channel, SENT, sent);
            if (!allSent.await(patience, TimeUnit.SECONDS)) {
                throw new IllegalStateException("end markers of " + allSent.getCount() + " members missing after "
                        + patience + " s; received " + received);
            }
            for (int s = 0; s < members; s++) {
                if (received.get(s) != sentBy.get(s)) {
                    failures.incrementAndGet();
                    System.out.println("ERROR member " + s + " sent " + sentBy.get(s) + ", " + received.get(s) + " arrived");
                }
            }
            double seconds = (measureEnd - measureStart) / 1e9;
            String transport = paths(channel);
            System.out.printf(Locale.ROOT, "multicast: %d members, %d B, sent %d (measured), received %d in %.2f s: "
                    + "%.0f messages/s%n", members, size, measuredSent, measured.get(), seconds, measured.get() / seconds);
            System.out.printf(Locale.ROOT, "RESULT app=jgroups mode=multicast member=%d members=%d provider=%s size=%d "
                    + "sent=%d received=%d failures=%d seconds=%.3f per_s=%.1f transport=%s%n", member, members,
                    Transports.provider(), size, measuredSent, measured.get(), failures.get(), seconds,
                    measured.get() / seconds, transport);
            System.out.println(protocolStatistics(channel));
            System.out.flush();

            if (member == 0 && !noRpc && members > 1) {
                rpc(channel, rpc, warmup, duration);
            }
            barrier(channel, FINISHED, patience);
        }
        return failures.get() == 0 ? 0 : 1;
    }

    /** Member 0's sequential unicast RPCs to another member. */
    private void rpc(JChannel channel, RpcDispatcher rpc, Duration warmup, Duration duration) {
        Address self = channel.getAddress();
        Address target = channel.getView().getMembers().stream().filter(a -> !a.equals(self)).findFirst().orElseThrow();
        byte[] argument = new byte[size];
        RequestOptions sync = RequestOptions.SYNC().timeout(30_000);
        CallLoop.Outcome outcome = CallLoop.sequential(() -> {
            byte[] answer = rpc.callRemoteMethod(target, new MethodCall((short) 0, (Object) argument), sync);
            return answer != null && answer.length == size;
        }, warmup, duration);
        failures.addAndGet(outcome.failures());
        System.out.println("rpc to " + target + ": " + outcome.describe());
        System.out.println("RESULT app=jgroups mode=rpc member=" + member + " members=" + members + " provider="
                + Transports.provider() + " size=" + size + " " + outcome.resultFields() + " transport=" + paths(channel));
        System.out.flush();
    }

    /** Counts member {@code index} at the last barrier, once, by its marker or by its leaving ({@code why}). */
    private void countFinished(int index, String why) {
        if (finished.compareAndSet(index, 0, 1)) {
            if (why != null) {
                System.out.println("member " + index + " " + why + ": counted as finished");
            }
            marks.get(FINISHED).countDown();
        }
    }

    /** Multicasts this member's marker of {@code phase} and waits for every member's. */
    private void barrier(JChannel channel, int phase, long seconds) throws Exception {
        send(channel, MARK, phase);
        if (!marks.get(phase).await(seconds, TimeUnit.SECONDS)) {
            throw new IllegalStateException("barrier " + phase + ": markers of " + marks.get(phase).getCount()
                    + " members missing after " + seconds + " s");
        }
    }

    private void send(JChannel channel, byte type, long value) throws Exception {
        byte[] body = new byte[type == DATA ? size : HEADER];
        ByteBuffer.wrap(body).put(type).putInt(member).putLong(value);
        channel.send(new BytesMessage(null, body));
    }

    /** One message of any member (JGroups delivers one sender's messages one at a time, in order). */
    private void receive(Message msg) {
        ByteBuffer b = ByteBuffer.wrap(msg.getArray(), msg.getOffset(), msg.getLength());
        byte type = b.get();
        int sender = b.getInt();
        long value = b.getLong();
        switch (type) {
            case DATA -> {
                if (value != next[sender]) {
                    failures.incrementAndGet();
                    System.out.println("ERROR from member " + sender + ": message " + value + " where " + next[sender]
                            + " was due");
                }
                next[sender] = value + 1;
                received.incrementAndGet(sender);
                if (measuring) {
                    measured.incrementAndGet();
                }
            }
            case MARK -> {
                if (value == JOINED) {
                    memberAt.put(msg.getSrc(), sender);
                }
                if (value == FINISHED) {
                    countFinished(sender, null);
                    return;
                }
                CountDownLatch mark = marks.get((int) value);
                synchronized (window) {
                    // the first member to start its measured part opens the window
                    if (value == MEASURE && mark.getCount() == members) {
                        measureStart = System.nanoTime();
                        measuring = true;
                    }
                    mark.countDown();
                }
            }
            case SENT -> {
                sentBy.set(sender, value);
                synchronized (window) {
                    // the last member's end closes it (each member's "measuring" marker came before its "sent")
                    if (allSent.getCount() == 1) {
                        measuring = false;
                        measureEnd = System.nanoTime();
                    }
                    allSent.countDown();
                }
            }
            default -> {
                failures.incrementAndGet();
                System.out.println("ERROR message of unknown type " + type + " from member " + sender);
            }
        }
    }

    /**
     * The paths of this member's connections, from TCP_NIO2's connection table (a protected
     * field: JGroups offers no other way to its channels), or by UCX endpoints.
     */
    /**
     * What JGroups' own protocols did during the whole run: messages its random early drop
     * discarded (the bundler's queue was full) and the retransmissions and flow-control
     * blockings that followed. A member that waits for these idles its cores.
     */
    private static String protocolStatistics(JChannel channel) {
        RED red = channel.getProtocolStack().findProtocol(RED.class);
        NAKACK2 nakack = channel.getProtocolStack().findProtocol(NAKACK2.class);
        MFC mfc = channel.getProtocolStack().findProtocol(MFC.class);
        TP transport = channel.getProtocolStack().getTransport();
        long bundlerDrops = -1;
        if (transport.getBundler() instanceof BaseBundler b) {
            bundlerDrops = readCounter(BaseBundler.class, "num_drops_on_full_queue", b);
        }
        long[] partialWrites = {0};
        try {
            server(channel).forAllConnections((address, connection) -> {
                if (connection instanceof NioConnection nio) {
                    partialWrites[0] += nio.numPartialWrites();
                }
            });
        } catch (ReflectiveOperationException | RuntimeException e) {
            partialWrites[0] = -1;
        }
        return String.format(Locale.ROOT, "STATS bundler=%s bundler_drops=%d partial_writes=%d batches_sent=%d "
                + "red_dropped=%d xmit_requests_sent=%d xmit_requests_received=%d mfc_blockings=%d",
                transport.getBundlerType(), bundlerDrops, partialWrites[0], transport.getMessageStats().getNumBatchesSent(),
                red == null ? -1 : red.getDroppedMessages(), nakack.getXmitRequestsSent(),
                nakack.getXmitRequestsReceived(), mfc.getNumberOfBlockings());
    }

    private static long readCounter(Class<?> owner, String name, Object target) {
        try {
            Field f = owner.getDeclaredField(name);
            f.setAccessible(true);
            return ((java.util.concurrent.atomic.LongAdder) f.get(target)).sum();
        } catch (ReflectiveOperationException | RuntimeException e) {
            return -1;
        }
    }

    /** TCP_NIO2's server, which holds the member's connections (not public). */
    private static BaseServer server(JChannel channel) throws ReflectiveOperationException {
        Field f = TCP_NIO2.class.getDeclaredField("server");
        f.setAccessible(true);
        return (BaseServer) f.get(channel.getProtocolStack().getTransport());
    }

    private static String paths(JChannel channel) {
        try {
            List<String> paths = new ArrayList<>();
            server(channel).forAllConnections((address, connection) -> {
                if (connection instanceof NioConnection nio && nio.key() != null
                        && nio.key().channel() instanceof NetworkChannel n) {
                    paths.add(Transports.path(n));
                }
            });
            return Transports.summary(paths);
        } catch (ReflectiveOperationException | RuntimeException e) {
            return Transports.byEndpoints();
        }
    }

    /** JGroups' tcp-nio.xml with explicit addresses: several members on one host, and no fixed ports to collide. */
    static String config(int ownPort, String hosts, boolean virtualThreads) {
        return """
            <config xmlns="urn:org:jgroups">
              <TCP_NIO2 bind_addr="127.0.0.1" bind_port="%d" port_range="0" recv_buf_size="0" send_buf_size="0"
                        sock_conn_timeout="300ms" max_send_buffers="10" diag.enabled="false"
                        thread_pool.min_threads="0" thread_pool.max_threads="200" thread_pool.keep_alive_time="60s"
                        use_virtual_threads="%b"/>
              <RED/>
              <TCPPING async_discovery="true" initial_hosts="%s" port_range="0"/>
              <MERGE3 min_interval="10s" max_interval="30s"/>
              <FD_SOCK2/>
              <FD_ALL3 timeout="30s"/>
              <VERIFY_SUSPECT2 timeout="1.5s"/>
              <BARRIER/>
              <pbcast.NAKACK2 use_mcast_xmit="false"/>
              <UNICAST3/>
              <pbcast.STABLE desired_avg_gossip="50s" max_bytes="4M"/>
              <pbcast.GMS print_local_addr="false" join_timeout="2s"/>
              <MFC max_credits="2M" min_threshold="0.4"/>
              <UFC max_credits="2M" min_threshold="0.4"/>
              <FRAG2 frag_size="60K"/>
            </config>
            """.formatted(ownPort, virtualThreads, hosts);
    }
}
