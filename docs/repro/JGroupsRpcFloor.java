import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.jgroups.Address;
import org.jgroups.JChannel;
import org.jgroups.blocks.MethodCall;
import org.jgroups.blocks.RequestOptions;
import org.jgroups.blocks.RpcDispatcher;

/**
 * JGroups' own cost of one sequential RPC, without a network: three members in one JVM on
 * SHARED_LOOPBACK (messages are handed between the members' stacks in memory), otherwise the
 * protocol stack of {@code hadronio jgroups benchmark}. Member 0 calls member 2 as that benchmark
 * does. Prints p50/p90/p99 and the rate.
 *
 *   java -cp 'app/target/lib/*' docs/repro/JGroupsRpcFloor.java [seconds]
 */
public class JGroupsRpcFloor {
    static final String STACK = """
            <config xmlns="urn:org:jgroups">
              <SHARED_LOOPBACK thread_pool.min_threads="0" thread_pool.max_threads="200" thread_pool.keep_alive_time="60s"/>
              <RED/>
              <SHARED_LOOPBACK_PING/>
              <MERGE3 min_interval="10s" max_interval="30s"/>
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
            </config>""";

    public static byte[] echo(byte[] b) {
        return b;
    }

    public static void main(String[] args) throws Exception {
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 5;
        System.setProperty("java.net.preferIPv4Stack", "true");
        JChannel[] ch = new JChannel[3];
        RpcDispatcher[] rpc = new RpcDispatcher[3];
        var echo = JGroupsRpcFloor.class.getMethod("echo", byte[].class);
        for (int i = 0; i < 3; i++) {
            ch[i] = new JChannel(new ByteArrayInputStream(STACK.getBytes(StandardCharsets.UTF_8)));
            ch[i].setName("member-" + i);
            rpc[i] = new RpcDispatcher(ch[i], new JGroupsRpcFloor());
            rpc[i].setMethodLookup(id -> echo);
            ch[i].connect("floor");
        }
        while (ch[0].getView().size() < 3) {
            Thread.sleep(10);
        }
        Address target = ch[2].getAddress();
        byte[] arg = new byte[100];
        RequestOptions sync = RequestOptions.SYNC().timeout(30_000);
        for (int round = 0; round < 2; round++) {       // round 0 warms up
            long[] lat = new long[4_000_000];
            int n = 0;
            long end = System.nanoTime() + (long) (seconds * 1e9);
            long start = System.nanoTime();
            while (System.nanoTime() - end < 0 && n < lat.length) {
                long t = System.nanoTime();
                byte[] a = rpc[0].callRemoteMethod(target, new MethodCall((short) 0, (Object) arg), sync);
                lat[n++] = System.nanoTime() - t;
                if (a == null || a.length != arg.length) {
                    throw new IllegalStateException("bad answer");
                }
            }
            double took = (System.nanoTime() - start) / 1e9;
            long[] l = Arrays.copyOf(lat, n);
            Arrays.sort(l);
            System.out.printf("%s: %d calls in %.2f s: %.0f calls/s, p50 %.1f us, p90 %.1f us, p99 %.1f us%n",
                    round == 0 ? "warm-up" : "RESULT", n, took, n / took, l[n / 2] / 1e3, l[n * 9 / 10] / 1e3,
                    l[n * 99 / 100] / 1e3);
        }
        for (int i = 2; i >= 0; i--) {
            rpc[i].close();
            ch[i].close();
        }
    }
}
