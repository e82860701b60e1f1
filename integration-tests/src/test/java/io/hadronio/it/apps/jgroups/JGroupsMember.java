package io.hadronio.it.apps.jgroups;

import io.hadronio.it.apps.ProviderProbe;
import java.io.BufferedReader;
import java.io.ByteArrayInputStream;
import java.io.InputStreamReader;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;
import org.jgroups.BytesMessage;
import org.jgroups.JChannel;
import org.jgroups.Message;
import org.jgroups.Receiver;
import org.jgroups.Version;
import org.jgroups.View;
import org.jgroups.logging.LogFactory;

/**
 * One member of a JGroups cluster on TCP_NIO2 (the protocols of JGroups' own
 * {@code tcp-nio.xml}, with the ports and hosts given, diagnostics off). Prints
 * {@code VERSION}, {@code LOG class} (the logging JGroups chose), then {@code VIEW members}
 * once the view holds every member. On {@code SEND} from stdin multicasts {@code count}
 * messages ({@code sender seq padding}); checks that every member's messages arrive, each
 * sender's in order, and prints {@code RECEIVED total messages/s} once all have, then
 * {@code TRANSPORT path} while its connections are still up. Leaves at stdin's end.
 *
 * <p>Arguments: {@code index ownPort allPorts(comma-separated) count payloadBytes}.
 */
public final class JGroupsMember {
    private JGroupsMember() {
    }

    /** JGroups' tcp-nio.xml with explicit addresses: several members on one host, and no fixed ports to collide. */
    static String config(int ownPort, String hosts) {
        return """
            <config xmlns="urn:org:jgroups">
              <TCP_NIO2 bind_addr="127.0.0.1" bind_port="%d" port_range="0" recv_buf_size="0" send_buf_size="0"
                        sock_conn_timeout="300ms" max_send_buffers="10" diag.enabled="false"
                        thread_pool.min_threads="0" thread_pool.max_threads="200" thread_pool.keep_alive_time="60s"/>
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
            """.formatted(ownPort, hosts);
    }

    public static void main(String[] args) throws Exception {
        ProviderProbe.announce();
        int index = Integer.parseInt(args[0]);
        int ownPort = Integer.parseInt(args[1]);
        int[] ports = Arrays.stream(args[2].split(",")).mapToInt(Integer::parseInt).toArray();
        int count = Integer.parseInt(args[3]);
        int payload = Integer.parseInt(args[4]);
        System.out.println("VERSION " + Version.printVersion());
        System.out.println("LOG " + LogFactory.getLog(JGroupsMember.class).getClass().getName());
        String hosts = Arrays.stream(ports).mapToObj(p -> "127.0.0.1[" + p + "]").collect(Collectors.joining(","));

        int members = ports.length;
        long[] next = new long[members];
        AtomicLong received = new AtomicLong();
        CountDownLatch full = new CountDownLatch(1);
        CountDownLatch all = new CountDownLatch(1);
        try (JChannel channel = new JChannel(new ByteArrayInputStream(config(ownPort, hosts).getBytes(StandardCharsets.UTF_8)))) {
            channel.setReceiver(new Receiver() {
                @Override
                public void viewAccepted(View view) {
                    if (view.size() == members) {
                        full.countDown();
                    }
                }

                @Override
                public void receive(Message msg) {
                    ByteBuffer b = ByteBuffer.wrap(msg.getArray(), msg.getOffset(), msg.getLength());
                    int sender = b.getInt();
                    long seq = b.getLong();
                    // JGroups delivers one sender's messages one at a time, in order: no lock needed per sender
                    if (seq != next[sender]) {
                        System.out.println("ERROR from member " + sender + ": message " + seq + " where " + next[sender]
                                + " was due");
                    }
                    next[sender] = seq + 1;
                    if (received.incrementAndGet() == (long) members * count) {
                        all.countDown();
                    }
                }
            });
            channel.setName("member-" + index);
            channel.connect("hadronio-compat");
            if (!full.await(60, TimeUnit.SECONDS)) {
                System.out.println("ERROR view still " + channel.getView());
            }
            View view = channel.getView();
            System.out.println("VIEW " + view.getMembers().stream().map(Object::toString).sorted()
                    .collect(Collectors.joining(",")));
            System.out.flush();
            BufferedReader stdin = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            if (!"SEND".equals(stdin.readLine())) {
                return;
            }
            long start = System.nanoTime();
            for (long seq = 0; seq < count; seq++) {
                byte[] body = new byte[Math.max(12, payload)];
                ByteBuffer.wrap(body).putInt(index).putLong(seq);
                channel.send(new BytesMessage(null, body));
            }
            if (!all.await(120, TimeUnit.SECONDS)) {
                System.out.println("ERROR received " + received.get() + " of " + (long) members * count + ": "
                        + Arrays.toString(next));
            } else {
                double seconds = (System.nanoTime() - start) / 1e9;
                System.out.printf("RECEIVED %d %.0f%n", received.get(), received.get() / seconds);
            }
            if (Boolean.getBoolean("it.jgroups.awaitUcx")) {
                // a move begun near the burst's end may still be under way (JGroupsTest.member)
                long deadline = System.nanoTime() + 10_000_000_000L;
                while (ProviderProbe.ucxEndpoints() == 0 && System.nanoTime() - deadline < 0) {
                    Thread.sleep(10);
                }
            }
            System.out.println("TRANSPORT " + ProviderProbe.transportByEndpoints());
            System.out.flush();
            while (stdin.readLine() != null) {
                // stay in the group until the test is done with every member
            }
        }
    }
}
