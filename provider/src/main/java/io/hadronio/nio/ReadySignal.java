package io.hadronio.nio;

/**
 * A hadroNIO channel's selection keys (one per selector it is registered with), as the
 * channel tells them "my readiness may have changed; look at me again": run by its
 * connection's lifecycle when its state changes and by a UCX completion of one of its
 * requests (see {@link HadronioSelector}). Running it queues each key with its selector
 * once and wakes nobody; it allocates nothing and takes no lock, so it may run under any.
 */
final class ReadySignal implements Runnable {
    private static final HadronioSelectionKey[] NONE = {};

    // copy-on-write: registrations are rare, signals frequent
    private volatile HadronioSelectionKey[] keys = NONE;

    synchronized void add(HadronioSelectionKey key) {
        HadronioSelectionKey[] a = keys;
        HadronioSelectionKey[] b = java.util.Arrays.copyOf(a, a.length + 1);
        b[a.length] = key;
        keys = b;
    }

    synchronized void remove(HadronioSelectionKey key) {
        HadronioSelectionKey[] a = keys;
        for (int i = 0; i < a.length; i++) {
            if (a[i] == key) {
                HadronioSelectionKey[] b = new HadronioSelectionKey[a.length - 1];
                System.arraycopy(a, 0, b, 0, i);
                System.arraycopy(a, i + 1, b, i, a.length - i - 1);
                keys = b.length == 0 ? NONE : b;
                return;
            }
        }
    }

    @Override
    public void run() {
        for (HadronioSelectionKey key : keys) {
            key.queueForSelection();
        }
    }

    /**
     * {@link #run()}, and wakes each key's selector if it sleeps: for a channel whose readiness
     * changes without a UCX event (a listener's finished handshake), since a selector that
     * holds no connection does not sleep on the workers (HadronioSelector.connectionKeys).
     */
    void runAndWake() {
        for (HadronioSelectionKey key : keys) {
            key.queueForSelection();
            key.selectorImpl().interestChanged();
        }
    }
}
