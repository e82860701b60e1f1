package io.hadronio.ucx;

import java.lang.foreign.MemorySegment;

/**
 * Receives active messages of one id, from {@link UcxWorker#progress()}, inside a
 * native upcall: it must not throw (exceptions are caught and logged, and the message
 * is released).
 */
@FunctionalInterface
public interface UcxAmHandler {
    /** {@code UCP_AM_RECV_ATTR_FLAG_DATA}: the data may be kept past the callback (return {@link UcsStatus#INPROGRESS}). */
    long ATTR_DATA = 1L << 16;
    /** {@code UCP_AM_RECV_ATTR_FLAG_RNDV}: {@code data} is a descriptor; fetch with {@link UcxWorker#amReceiveData}. */
    long ATTR_RENDEZVOUS = 1L << 17;

    /**
     * @param header    the user header, valid during the call only
     * @param data      the payload (or, with {@link #ATTR_RENDEZVOUS}, the descriptor to fetch it)
     * @param recvAttr  receive attributes, see {@link #ATTR_DATA} and {@link #ATTR_RENDEZVOUS}
     * @return {@link UcsStatus#OK} when done with {@code data}, {@link UcsStatus#INPROGRESS} to keep it
     *         (release later with {@link UcxWorker#amReleaseData})
     */
    int onMessage(MemorySegment header, MemorySegment data, long recvAttr);
}
