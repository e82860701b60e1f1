package io.hadronio.observe;

import jdk.jfr.Category;
import jdk.jfr.DataAmount;
import jdk.jfr.Description;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;
import jdk.jfr.Threshold;

/**
 * A write to a hadroNIO socket channel: {@code jdk.SocketWrite}'s fields and default threshold
 * (see {@link SocketReadEvent}).
 */
@Name("io.hadronio.SocketWrite")
@Label("Socket Write (hadroNIO)")
@Category({"hadroNIO"})
@Description("Writing data to a hadroNIO socket channel")
@Threshold("1 ms")
@StackTrace(true)
public final class SocketWriteEvent extends jdk.jfr.Event {
    @Label("Remote Host")
    public String host;

    @Label("Remote Address")
    public String address;

    @Label("Remote Port")
    public int port;

    @Label("Bytes Written")
    @Description("Number of bytes written to the socket")
    @DataAmount
    public long bytesWritten;

    @Label("Path")
    @Description("kernel-tcp, kernel-unix or ucx")
    public String path;
}
