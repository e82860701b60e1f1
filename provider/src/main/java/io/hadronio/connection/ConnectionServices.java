package io.hadronio.connection;

import io.hadronio.worker.WorkerGroup;

import io.hadronio.config.HadronioConfig;
import io.hadronio.connection.Peers;
import io.hadronio.ucx.UcxException;

/**
 * What the code that sets connections up (the handshakes, the upgrade) asks of the provider's
 * runtime: the configuration, who is trusted, the control thread's services, and new UCX
 * halves on the runtime's worker groups. The runtime that wires everything implements it; the
 * connection code names only this, so it sits below the runtime and the data paths.
 */
public interface ConnectionServices {
    HadronioConfig config();

    /**
     * Who is accelerated: the key, the local rendezvous, the configured remote networks. Made by
     * the runtime's start: only once {@link #started()}.
     */
    Peers peers();

    /**
     * True once the runtime's start has finished: the key, the rendezvous and UCX are there (no
     * wait). Before, connections start on the kernel, as they do anyway in upgrade mode.
     */
    boolean started();

    /** True once the runtime's start has failed: nothing set up here ever moves to UCX (no wait). */
    boolean startFailed();

    /** Something here wants UCX: the runtime's start runs now if it has not (no wait). */
    void requestStart();

    /** What connections have the control thread do for them. */
    ConnectionControl control();

    /**
     * What both ends of an endpoint must share (UCX settings and the data protocol's version);
     * a peer with another profile keeps the connection on TCP.
     */
    String endpointProfile();

    /** The worker group the next connection goes to (round robin); nothing is made on it. Once {@link #started()}. */
    WorkerGroup nextGroup();

    /** A new UCX half for {@code life} on {@code group}, receives posted. */
    UcxHalf newHalf(ConnectionLifecycle life, WorkerGroup group) throws UcxException;

    /** A new UCX half for {@code life} on the next worker group, receives posted. */
    default UcxHalf newHalf(ConnectionLifecycle life) throws UcxException {
        return newHalf(life, nextGroup());
    }
}
