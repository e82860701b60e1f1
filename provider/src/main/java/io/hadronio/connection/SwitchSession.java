package io.hadronio.connection;

/**
 * What a connection's owner ({@link ConnectionLifecycle}, {@link ConnectionUpgrade},
 * {@link ConnectionEnding}) needs of the upgrade session that moves it from the kernel socket to
 * UCX: tell the peer where our raw bytes end, ask how many messages the peer posted when we close,
 * and end. The session runs on the rendezvous thread; each of these only hands it work (any
 * thread) and never blocks.
 */
public interface SwitchSession {
    /** Client: the upgrade's delay since the connect has passed and it has not begun. */
    boolean due();

    /** Client: writes the connection makes on its first path before its upgrade may begin, unless it carried 64 KiB. */
    int writesBeforeMove();

    /** Client: begins the upgrade once it is due (any thread; once). */
    void poke();

    /** Our output switched after {@code n} raw bytes (a writer, under the channel's write lock). */
    void sendSwitch(long n);

    /** Our output ended raw (shutdownOutput or close before it switched). */
    void outputEndedRaw();

    /**
     * We close while the peer's output may be on UCX (control thread): the session asks its count;
     * the answer comes to {@link ConnectionLifecycle#onFin}, the news that none will come to
     * {@link ConnectionEnding#stopAwaitingPeer}.
     */
    void closing();

    /** The connection is closed: the session ends (any thread; before the socket closes). */
    void end();
}
