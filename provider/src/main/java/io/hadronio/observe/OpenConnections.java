package io.hadronio.observe;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The JVM's open hadroNIO connections, for the listing ({@code hadronio ss}, the MBean). A
 * connection joins when it opens and leaves when its channel closes, both off the data path;
 * one set for the whole JVM, since the MBean is one per JVM whatever providers it made.
 */
public final class OpenConnections {
    private static final OpenConnections JVM = new OpenConnections();

    private final Set<ObservedConnection> open = ConcurrentHashMap.newKeySet();

    private OpenConnections() {
    }

    /** The JVM's one registry. */
    public static OpenConnections jvm() {
        return JVM;
    }

    /** A connection opened. */
    public void add(ObservedConnection c) {
        open.add(c);
    }

    /** A connection's channel closed; false when it was not here (never opened, or removed already). */
    public boolean remove(ObservedConnection c) {
        return open.remove(c);
    }

    /** The open connections now. */
    public List<ObservedConnection> snapshot() {
        return new ArrayList<>(open);
    }

    /** A snapshot of each open connection. */
    public List<ConnectionInfo> infos() {
        List<ConnectionInfo> l = new ArrayList<>();
        for (ObservedConnection c : open) {
            l.add(c.info());
        }
        return l;
    }
}
