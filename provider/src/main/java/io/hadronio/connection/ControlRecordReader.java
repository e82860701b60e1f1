package io.hadronio.connection;

import io.hadronio.reactor.Reactor;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;

/**
 * Reads an established connection's control records ({@link ControlRecord}) on the control
 * thread and hands each to its lifecycle, which checks it; end-of-stream or an error on the
 * socket ends the reading. Attached to the socket's key ({@link ConnectionControl#established},
 * {@link ConnectionControl#readRecords}).
 */
final class ControlRecordReader implements Reactor.Handler {
    final ConnectionLifecycle life;
    private final ByteBuffer in = ByteBuffer.allocate(ControlRecord.LENGTH);

    ControlRecordReader(ConnectionLifecycle life) {
        this.life = life;
    }

    @Override
    public void ready(SelectionKey key) {
        try {
            while (true) {
                int n = life.tcp.read(in);
                if (n < 0) {
                    key.interestOps(0);
                    life.onControlEof(null);
                    return;
                }
                if (in.hasRemaining()) {
                    return;
                }
                in.flip();
                byte type = in.get();
                long value = in.getLong();
                in.clear();
                if (!life.onRecord(type, value)) {
                    // it broke the protocol (the connection is reset): nothing after it is read
                    key.interestOps(0);
                    return;
                }
            }
        } catch (IOException e) {
            key.interestOps(0);
            life.onControlEof(e.getMessage());
        }
    }
}
