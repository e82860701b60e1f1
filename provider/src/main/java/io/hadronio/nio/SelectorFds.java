package io.hadronio.nio;

import io.hadronio.platform.EPollSet;
import java.io.IOException;
import java.nio.channels.SelectionKey;
import java.util.Arrays;

/**
 * A selector's epoll set: the fds of the keys that have one (JDK channels, hadroNIO
 * connections on a kernel socket, listeners), each registered for its key's interest ops, so
 * that a selection pass asks epoll which are ready instead of polling them all. The selecting
 * thread keeps each key's registration in line whenever a pass asks the key ({@link #sync}):
 * a new key, an interest change and a channel whose fd came or went are all queued, so asked.
 * Only the selecting thread calls it, under the selector's lock.
 */
final class SelectorFds {
    private final EPollSet epoll;
    // fd -> the key registered with it (a closed channel's fd number may come back as another
    // channel's: its old registration went with its file)
    private HadronioSelectionKey[] keys = new HadronioSelectionKey[64];
    // of the fds in epoll, how many a spinning pass polls (not listeners')
    private int spinFds;

    SelectorFds() throws IOException {
        this.epoll = new EPollSet(64);
    }

    /** How many fds are registered. */
    int registered() {
        return epoll.registered();
    }

    /** The epoll fd itself, for a sleeping selection's poll(2). */
    int epollFd() {
        return epoll.fd();
    }

    /**
     * Asks epoll, without waiting, which fds are ready (while spinning, only when fds other
     * than listeners' are registered); returns how many entries it filled.
     */
    int poll(boolean withListeners) throws IOException {
        if (epoll.registered() == 0 || !withListeners && spinFds == 0) {
            return 0;
        }
        return epoll.poll(0);
    }

    /** The key of the {@code i}-th ready entry of the last poll, or null if its fd has none now. */
    HadronioSelectionKey readyKey(int i) {
        int fd = epoll.readyFd(i);
        return fd < keys.length ? keys[fd] : null;
    }

    /** The events of the {@code i}-th ready entry of the last poll. */
    int readyEvents(int i) {
        return epoll.readyEvents(i);
    }

    /** epoll's events for an interest set (the same bits as poll's). */
    private static int eventsFor(int interest) {
        int events = 0;
        if ((interest & (SelectionKey.OP_READ | SelectionKey.OP_ACCEPT)) != 0) {
            events |= EPollSet.EPOLLIN;
        }
        if ((interest & (SelectionKey.OP_WRITE | SelectionKey.OP_CONNECT)) != 0) {
            events |= EPollSet.EPOLLOUT;
        }
        return events;
    }

    /**
     * Brings a key's registration in line with its channel's fd and its interest set:
     * registers, changes or removes it.
     */
    void sync(HadronioSelectionKey key) throws IOException {
        int fd = -1;
        boolean spin = true;
        if (key.isValid()) {
            if (key.platformFd >= 0) {
                fd = key.platformFd;
            } else {
                UcxSelectable channel = (UcxSelectable) key.channel();
                fd = channel.pollFd();
                spin = channel.pollWhileSpinning();
            }
        }
        int events = fd < 0 ? 0 : eventsFor(key.interestOpsUnchecked());
        if (events == 0) {
            fd = -1;
        }
        if (fd == key.epollFd) {
            if (fd >= 0 && events != key.epollEvents) {
                if (epoll.modify(fd, events)) {
                    key.epollEvents = events;
                } else {
                    drop(key); // closed meanwhile
                }
            }
            return;
        }
        drop(key);
        if (fd < 0) {
            return;
        }
        if (fd >= keys.length) {
            keys = Arrays.copyOf(keys, Math.max(fd + 1, 2 * keys.length));
        }
        HadronioSelectionKey stale = keys[fd];
        if (stale != null) {
            // that key's channel closed its fd and the number came back: its registration went
            // with its file; the key only forgets it
            keys[fd] = null;
            stale.epollFd = -1;
            if (stale.epollSpin) {
                spinFds--;
            }
            epoll.forget();
        }
        if (epoll.add(fd, events)) {
            keys[fd] = key;
            key.epollFd = fd;
            key.epollEvents = events;
            key.epollSpin = spin;
            if (spin) {
                spinFds++;
            }
        }
    }

    /** {@link #sync} for a key with an fd, or that may get one (not for a channel on UCX both ways). */
    void syncIfFd(HadronioSelectionKey key) throws IOException {
        if (key.platformFd >= 0 || key.epollFd >= 0 || !((UcxSelectable) key.channel()).signalsReadiness()) {
            sync(key);
        }
    }

    /** Takes a key's fd out of epoll. */
    void drop(HadronioSelectionKey key) throws IOException {
        int fd = key.epollFd;
        if (fd < 0) {
            return;
        }
        key.epollFd = -1;
        if (key.epollSpin) {
            spinFds--;
        }
        if (keys[fd] == key) {
            keys[fd] = null;
            epoll.remove(fd);
        }
    }

    /** Forgets every key (the selector closes; the fds go with the epoll set). */
    void clear() {
        Arrays.fill(keys, null);
        spinFds = 0;
    }

    void close() throws IOException {
        epoll.close();
    }
}
