package io.hadronio.it.apps;

import java.util.stream.Stream;

/**
 * The providers of an application's two sides: the server (or, in a group, the first
 * member) and its clients (the other members). Both plain is the reference, both
 * hadroNIO the accelerated deployment, and the two mixed ones check that hadroNIO on one
 * side only is plain TCP that the application does not notice.
 */
public record Pairing(Side server, Side client) {
    public static final Pairing JDK = new Pairing(Side.JDK, Side.JDK);
    public static final Pairing HADRONIO = new Pairing(Side.HADRONIO, Side.HADRONIO);
    public static final Pairing SERVER_ONLY = new Pairing(Side.HADRONIO, Side.JDK);
    public static final Pairing CLIENT_ONLY = new Pairing(Side.JDK, Side.HADRONIO);

    /** Every pairing, the reference first (a parameter source for the application tests). */
    public static Stream<Pairing> all() {
        return Stream.of(JDK, HADRONIO, SERVER_ONLY, CLIENT_ONLY);
    }

    /** True when both sides run hadroNIO, so their connections may be carried by UCX. */
    public boolean accelerated() {
        return server == Side.HADRONIO && client == Side.HADRONIO;
    }

    @Override
    public String toString() {
        return "server=" + server.label() + " client=" + client.label();
    }
}
