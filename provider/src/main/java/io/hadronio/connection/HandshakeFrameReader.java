package io.hadronio.connection;

import io.hadronio.connection.HandshakeMessages;
import java.io.IOException;
import java.net.ProtocolException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;

/**
 * Reads handshake frames ({@link HandshakeMessages}) exactly: the header, then as many
 * bytes as it announces (bounded by {@link HandshakeMessages#frameLength}), never more, so
 * that whatever follows stays in the kernel for its rightful reader. Remembers every byte
 * it took since the last frame, so that bytes that turn out not to be ours can be handed
 * to the application.
 */
final class HandshakeFrameReader {
    private ByteBuffer buffer = ByteBuffer.allocate(HandshakeMessages.HEADER_LENGTH);
    private boolean eof;

    /**
     * Reads what is there; the complete frame, or null while it is incomplete (or at
     * end-of-stream: see {@link #eof}).
     *
     * @throws ProtocolException when the bytes are not a frame of ours
     */
    byte[] read(SocketChannel tcp) throws IOException {
        while (true) {
            int n = tcp.read(buffer);
            if (n < 0) {
                eof = true;
                return null;
            }
            if (buffer.position() == HandshakeMessages.HEADER_LENGTH
                    && buffer.capacity() == HandshakeMessages.HEADER_LENGTH) {
                int length = HandshakeMessages.frameLength(buffer);
                if (length > buffer.capacity()) {
                    buffer = ByteBuffer.allocate(length).put(buffer.flip());
                    continue;
                }
            } else if (buffer.position() < HandshakeMessages.HEADER_LENGTH
                    && !HandshakeMessages.mayStartFrame(buffer)) {
                throw new ProtocolException("not a hadroNIO handshake");
            }
            if (!buffer.hasRemaining()) {
                byte[] frame = buffer.array();
                buffer = ByteBuffer.allocate(HandshakeMessages.HEADER_LENGTH);
                return frame;
            }
            if (n == 0) {
                return null;
            }
        }
    }

    /** True once the peer ended its output (a {@link #read} returned null for it). */
    boolean eof() {
        return eof;
    }

    /** The bytes taken since the last complete frame (a copy), or null when none. */
    ByteBuffer taken() {
        if (buffer.position() == 0) {
            return null;
        }
        return ByteBuffer.wrap(java.util.Arrays.copyOf(buffer.array(), buffer.position()));
    }
}
