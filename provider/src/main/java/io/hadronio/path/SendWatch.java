package io.hadronio.path;

/**
 * How a connection's {@link ReceiveSlices} and {@link SendSlots} ask for the control loop's help
 * when something must leave although the application may not call in again: bytes that wait
 * for a credit, a send UCX did not finish inside the call, a credit owed to the peer (see
 * {@link Connection}'s flush watch). Called under the worker group's lock.
 */
interface SendWatch {
    /** Hands the connection to the control loop, unless it has it already. */
    void watchSends();
}
