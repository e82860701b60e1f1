package io.hadronio.nio;

/**
 * A hadroNIO channel's selection keys (one per selector it is registered with), as the
 * channel tells them "my readiness may have changed; look at me again": run by its
 * connection's lifecycle when its state changes and by a UCX completion of one of its
 * requests (see {@link HadronioSelector}). Running it queues each key with its selector
 * once and wakes nobody; it allocates nothing and takes no lock, so it may run under any.
 * It sees a key only as a {@link Key} (the selection key is the one implementation).
 */
final class ReadySignal implements Runnable {
    /** A selection key as its channel's signal sees it ({@link HadronioSelectionKey}). */
    interface Key {
        /** Queues the key for its selector's next pass unless it waits there already; lock-free. */
        void queueForSelection();

        /** {@link #queueForSelection()}, and wakes the key's selector if it sleeps. */
        void queueAndWake();
    }

    private static final Key[] NONE = {};

    // copy-on-write: registrations are rare, signals frequent
    private volatile Key[] keys = NONE;

    synchronized void add(Key key) {
        Key[] a = keys;
        Key[] b = java.util.Arrays.copyOf(a, a.length + 1);
        b[a.length] = key;
        keys = b;
    }

    synchronized void remove(Key key) {
        Key[] a = keys;
        for (int i = 0; i < a.length; i++) {
            if (a[i] == key) {
                Key[] b = new Key[a.length - 1];
                System.arraycopy(a, 0, b, 0, i);
                System.arraycopy(a, i + 1, b, i, a.length - i - 1);
                keys = b.length == 0 ? NONE : b;
                return;
            }
        }
    }

    @Override
    public void run() {
        for (Key key : keys) {
            key.queueForSelection();
        }
    }

    /**
     * {@link #run()}, and wakes each key's selector if it sleeps: for a channel whose readiness
     * changes without a UCX event (a listener's finished handshake), since a selector that
     * holds no connection does not sleep on the workers (HadronioSelector.connectionKeys).
     */
    void runAndWake() {
        for (Key key : keys) {
            key.queueAndWake();
        }
    }
}
