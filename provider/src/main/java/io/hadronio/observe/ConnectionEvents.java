package io.hadronio.observe;

import jdk.jfr.Category;
import jdk.jfr.DataAmount;
import jdk.jfr.Description;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;
import jdk.jfr.Timestamp;

/**
 * A connection's life as JFR events, one per event of it: opened (with its path), upgraded (both
 * directions on UCX), fell back (with the reason), closed (with its bytes). Each is enabled with
 * no threshold: they are as rare as connections. Emitted off the data path; each method checks
 * whether its event is enabled first, so a JVM recording nothing makes nothing.
 */
public final class ConnectionEvents {
    private ConnectionEvents() {
    }

    /** Asked only isEnabled(). Loaded only with jdk.jfr ({@link JdkModules}). */
    private static final class Probes {
        static final Opened OPENED = new Opened();
        static final Upgraded UPGRADED = new Upgraded();
        static final FellBack FELL_BACK = new FellBack();
        static final Closed CLOSED = new Closed();
    }

    /** Whether {@link #opened} would record anything (so that its caller formats nothing otherwise). */
    public static boolean openedWanted() {
        return JdkModules.jfrStarted() && Probes.OPENED.isEnabled();
    }

    /** Whether {@link #upgraded} would record anything. */
    public static boolean upgradedWanted() {
        return JdkModules.jfrStarted() && Probes.UPGRADED.isEnabled();
    }

    /** Whether {@link #fellBack} would record anything. */
    public static boolean fellBackWanted() {
        return JdkModules.jfrStarted() && Probes.FELL_BACK.isEnabled();
    }

    /** Whether {@link #closed} would record anything. */
    public static boolean closedWanted() {
        return JdkModules.jfrStarted() && Probes.CLOSED.isEnabled();
    }

    /** A connection opened on {@code path} ({@link PathKind#label()}). */
    public static void opened(String local, String remote, String path, String transport) {
        if (openedWanted()) {
            Opened e = new Opened();
            e.local = local;
            e.remote = remote;
            e.path = path;
            e.transport = transport;
            e.commit();
        }
    }

    /**
     * Both directions of a connection moved to UCX. (Its transports are not named: asking the UCX
     * half takes its worker's lock, which the lifecycle's monitor, held here, must not take.)
     */
    public static void upgraded(String remote) {
        if (upgradedWanted()) {
            Upgraded e = new Upgraded();
            e.remote = remote;
            e.commit();
        }
    }

    /** A connection stays off UCX for {@code reason}; {@code how}: details, or null. */
    public static void fellBack(String remote, Fallback reason, String how) {
        if (fellBackWanted()) {
            FellBack e = new FellBack();
            e.remote = remote;
            e.reasonCode = reason.code();
            e.reason = how == null ? reason.words() : reason.words() + ": " + how;
            e.commit();
        }
    }

    /** A connection's channel closed, after {@code bytesIn} read and {@code bytesOut} written. */
    public static void closed(String local, String remote, String path, long bytesIn, long bytesOut, long openedAt) {
        if (closedWanted()) {
            Closed e = new Closed();
            e.local = local;
            e.remote = remote;
            e.path = path;
            e.bytesIn = bytesIn;
            e.bytesOut = bytesOut;
            e.openedAt = openedAt;
            e.commit();
        }
    }

    @Name("io.hadronio.ConnectionOpened")
    @Label("Connection Opened")
    @Category({"hadroNIO"})
    @Description("A hadroNIO connection opened")
    @StackTrace(false)
    static final class Opened extends jdk.jfr.Event {
        @Label("Local Address")
        String local;
        @Label("Remote Address")
        String remote;
        @Label("Path")
        @Description("kernel-tcp, kernel-unix or ucx")
        String path;
        @Label("Transport")
        @Description("What HadronioSocketOptions.TRANSPORT reads")
        String transport;
    }

    @Name("io.hadronio.ConnectionUpgraded")
    @Label("Connection Upgraded")
    @Category({"hadroNIO"})
    @Description("Both directions of a hadroNIO connection moved to UCX")
    @StackTrace(false)
    static final class Upgraded extends jdk.jfr.Event {
        @Label("Remote Address")
        String remote;
    }

    @Name("io.hadronio.ConnectionFellBack")
    @Label("Connection Fell Back")
    @Category({"hadroNIO"})
    @Description("A hadroNIO connection stays on the kernel")
    @StackTrace(false)
    static final class FellBack extends jdk.jfr.Event {
        @Label("Remote Address")
        String remote;
        @Label("Reason Code")
        @Description("A stable code: peer-plain, other-key, not-in-remote-networks, ucx-tcp-only, ...")
        String reasonCode;
        @Label("Reason")
        String reason;
    }

    @Name("io.hadronio.ConnectionClosed")
    @Label("Connection Closed")
    @Category({"hadroNIO"})
    @Description("A hadroNIO connection's channel closed")
    @StackTrace(false)
    static final class Closed extends jdk.jfr.Event {
        @Label("Local Address")
        String local;
        @Label("Remote Address")
        String remote;
        @Label("Path")
        String path;
        @Label("Bytes Read")
        @DataAmount
        long bytesIn;
        @Label("Bytes Written")
        @DataAmount
        long bytesOut;
        @Label("Opened")
        @Timestamp(Timestamp.MILLISECONDS_SINCE_EPOCH)
        long openedAt;
    }
}
