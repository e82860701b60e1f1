package io.hadronio.it.apps.jgroups;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hadronio.it.ChildJvm;
import io.hadronio.it.apps.AppJvm;
import io.hadronio.it.apps.CompatRecord;
import io.hadronio.it.apps.Pairing;
import io.hadronio.it.apps.Side;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A JGroups cluster on TCP_NIO2 of three member JVMs in every {@link Pairing} (the first
 * member, the coordinator, is the "server" side, the other two the "client" side): they
 * form one view of all three, each multicasts {@value #MESSAGES} messages, and every
 * member receives all {@code 3 × MESSAGES}, each sender's in order (checked in the member).
 */
@Tag("slow")
@Timeout(120)
class JGroupsTest {
    static final int MEMBERS = 3;
    static final int MESSAGES = 5000;
    static final int PAYLOAD = 100;

    static Stream<Pairing> pairings() {
        return Pairing.all();
    }

    /** Free ports on 127.0.0.1 for the members (TCPPING needs them before any member starts). */
    static int[] freePorts(int n) throws IOException {
        return io.hadronio.app.jgroups.MemberPorts.free(n);
    }

    /**
     * A member; {@code awaitUcx}: it reports its transport once a connection of it moved to UCX
     * (or after 10 s): a connection moves once it carried traffic (hadronio.upgrade.writes, or
     * 64 KiB), which may be at the end of the members' short burst, and its move is then still
     * under way when the last message arrives.
     */
    static ChildJvm member(Side side, int index, int[] ports, String classPath, boolean awaitUcx) throws Exception {
        String all = Arrays.stream(ports).mapToObj(String::valueOf).collect(Collectors.joining(","));
        return AppJvm.start(side, classPath, JGroupsMember.class,
                List.of("-Djava.net.preferIPv4Stack=true", "-Dit.jgroups.awaitUcx=" + awaitUcx),
                String.valueOf(index), String.valueOf(ports[index]), all, String.valueOf(MESSAGES), String.valueOf(PAYLOAD));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("pairings")
    void everyMemberShouldReceiveEveryMessageInPerSenderOrder(Pairing pairing) throws Exception {
        int[] ports = freePorts(MEMBERS);
        List<ChildJvm> members = new ArrayList<>();
        try (CompatRecord record = CompatRecord.start("JGroups (TCP_NIO2, 3 members)", pairing)) {
            record.exercised(MEMBERS + " member JVMs form one view; each multicasts " + MESSAGES + " × " + PAYLOAD
                    + " B; all received in per-sender order");
            for (int i = 0; i < MEMBERS; i++) {
                Side side = i == 0 ? pairing.server() : pairing.client();
                members.add(member(side, i, ports, AppJvm.classPath(side, e -> true), expectsUcx(pairing, i)));
            }
            record.version(members.getFirst().expect("VERSION "));
            List<String> views = new ArrayList<>();
            for (ChildJvm m : members) {
                views.add(m.expect("VIEW ", Duration.ofSeconds(60)));
            }
            String allMembers = views.getFirst();
            assertEquals(MEMBERS, allMembers.split(",").length, () -> reports(members));
            views.forEach(v -> assertEquals(allMembers, v, () -> reports(members)));
            for (ChildJvm m : members) {
                m.send("SEND");
            }
            List<String> rates = new ArrayList<>();
            List<String> transports = new ArrayList<>();
            for (ChildJvm m : members) {
                String[] received = m.expect("RECEIVED ", Duration.ofSeconds(90)).split(" ");
                assertEquals(String.valueOf((long) MEMBERS * MESSAGES), received[0], () -> reports(members));
                rates.add(received[1]);
                transports.add(m.expect("TRANSPORT "));
            }
            for (ChildJvm m : members) {
                assertFalse(m.output().contains("ERROR"), () -> reports(members));
            }
            record.transport(String.join(" | ", transports));
            record.figure("messages/s received per member", String.join(", ", rates));
            assertTransports(pairing, transports, members);
            record.pass();
        } catch (AssertionError e) {
            // a member that stalls is often not the one that failed: every member's own log
            throw new AssertionError(e.getMessage() + "\n--- every member:\n" + reports(members), e);
        } finally {
            members.forEach(ChildJvm::close);
        }
    }

    /**
     * Each member's connections: UCX between two hadroNIO members, TCP with a plain one. With
     * hadroNIO on the clients only, the two clients are accelerated to each other.
     */
    static void assertTransports(Pairing pairing, List<String> transports, List<ChildJvm> members) {
        for (int i = 0; i < transports.size(); i++) {
            boolean expectUcx = expectsUcx(pairing, i);
            String t = transports.get(i);
            assertTrue(expectUcx ? t.startsWith("ucx") : t.equals("tcp"),
                    () -> "member " + t + " in " + pairing + "\n" + reports(members));
        }
    }

    /** Member {@code i} runs hadroNIO and so does one of its peers: its connections to them move to UCX. */
    static boolean expectsUcx(Pairing pairing, int i) {
        boolean hadronio = (i == 0 ? pairing.server() : pairing.client()) == Side.HADRONIO;
        boolean peerOnHadronio = i == 0 ? pairing.client() == Side.HADRONIO
                : pairing.client() == Side.HADRONIO || pairing.server() == Side.HADRONIO;
        return hadronio && peerOnHadronio;
    }

    static String reports(List<ChildJvm> members) {
        return members.stream().map(ChildJvm::report).collect(Collectors.joining("\n"));
    }
}
