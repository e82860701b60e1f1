package io.hadronio.it.apps.jgroups;

import io.hadronio.it.apps.ProviderProbe;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import org.jgroups.JChannel;
import org.jgroups.logging.LogFactory;

/**
 * A one-member JGroups cluster on TCP_NIO2 that says how JGroups logs: JGroups picks SLF4J
 * when it finds it on the class path and java.util.logging otherwise. Prints
 * {@code LOG class} (JGroups' log implementation), logs {@code APPLOG from JGroups} through
 * it once the channel is connected (NIO in use, hadroNIO loaded), then {@code DONE}.
 *
 * <p>Arguments: {@code port}.
 */
public final class JGroupsLogProbe {
    private JGroupsLogProbe() {
    }

    public static void main(String[] args) throws Exception {
        ProviderProbe.announce();
        int port = Integer.parseInt(args[0]);
        String config = JGroupsMember.config(port, "127.0.0.1[" + port + "]");
        try (JChannel channel = new JChannel(new ByteArrayInputStream(config.getBytes(StandardCharsets.UTF_8)))) {
            channel.connect("hadronio-log-probe");
            System.out.println("LOG " + LogFactory.getLog(JGroupsLogProbe.class).getClass().getName());
            LogFactory.getLog(JGroupsLogProbe.class).warn("APPLOG from JGroups");
        }
        System.err.flush();
        System.out.println("DONE");
    }
}
