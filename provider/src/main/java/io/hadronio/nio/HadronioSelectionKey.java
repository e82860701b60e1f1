package io.hadronio.nio;

import java.nio.channels.CancelledKeyException;
import java.nio.channels.SelectableChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.spi.AbstractSelectionKey;

/** A registration with a {@link HadronioSelector}. */
final class HadronioSelectionKey extends AbstractSelectionKey {
    private final SelectableChannel channel;
    private final HadronioSelector selector;
    // the interest set; read by the selecting thread at every selection
    private volatile int interestOps;
    // the ready set; written by the selecting thread
    private volatile int readyOps;
    // for channels of the JDK's provider: their fd, else -1
    final int platformFd;

    HadronioSelectionKey(SelectableChannel channel, HadronioSelector selector, int platformFd, int interestOps) {
        this.channel = channel;
        this.selector = selector;
        this.platformFd = platformFd;
        this.interestOps = interestOps;
    }

    @Override
    public SelectableChannel channel() {
        return channel;
    }

    @Override
    public Selector selector() {
        return selector;
    }

    private void ensureValid() {
        if (!isValid()) {
            throw new CancelledKeyException();
        }
    }

    @Override
    public int interestOps() {
        ensureValid();
        return interestOps;
    }

    @Override
    public SelectionKey interestOps(int ops) {
        ensureValid();
        if ((ops & ~channel.validOps()) != 0) {
            throw new IllegalArgumentException("Invalid interest ops " + ops + " for " + channel);
        }
        if (interestOps != ops) {
            interestOps = ops;
            selector.interestChanged();
        }
        return this;
    }

    int interestOpsUnchecked() {
        return interestOps;
    }

    @Override
    public int readyOps() {
        ensureValid();
        return readyOps;
    }

    void readyOps(int ops) {
        readyOps = ops;
    }
}
