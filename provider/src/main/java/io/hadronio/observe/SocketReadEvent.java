package io.hadronio.observe;

import jdk.jfr.Category;
import jdk.jfr.DataAmount;
import jdk.jfr.Description;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;
import jdk.jfr.Threshold;
import jdk.jfr.Timespan;

/**
 * A read from a hadroNIO socket channel: {@code jdk.SocketRead}'s fields, which the JDK's own
 * channel would have emitted ({@link SocketEvents} says when). Enabled with the threshold the
 * JDK's {@code default.jfc} gives {@code jdk.SocketRead} (1 ms on JDK 25; its 100/s throttle
 * needs {@code jdk.jfr.Throttle}, JDK 25's, which the provider's release 22 cannot name).
 */
@Name("io.hadronio.SocketRead")
@Label("Socket Read (hadroNIO)")
@Category({"hadroNIO"})
@Description("Reading data from a hadroNIO socket channel")
@Threshold("1 ms")
@StackTrace(true)
public final class SocketReadEvent extends jdk.jfr.Event {
    @Label("Remote Host")
    public String host;

    @Label("Remote Address")
    public String address;

    @Label("Remote Port")
    public int port;

    @Label("Timeout Value")
    @Timespan(Timespan.MILLISECONDS)
    public long timeout;

    @Label("Bytes Read")
    @Description("Number of bytes read from the socket")
    @DataAmount
    public long bytesRead;

    @Label("End of Stream")
    @Description("If end of stream was reached")
    public boolean endOfStream;

    @Label("Path")
    @Description("kernel-tcp, kernel-unix or ucx")
    public String path;
}
