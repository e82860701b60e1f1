package io.hadronio;

import static java.nio.channels.SelectionKey.OP_ACCEPT;
import static java.nio.channels.SelectionKey.OP_READ;
import static java.nio.channels.SelectionKey.OP_WRITE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.channels.CancelledKeyException;
import java.nio.channels.ClosedSelectorException;
import java.nio.channels.IllegalBlockingModeException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.spi.SelectorProvider;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** The {@link Selector} contract, on the JDK's provider and on hadroNIO. */
@Timeout(30)
class SelectorContractTest extends ContractSupport {

    @ParameterizedTest
    @MethodSource("providers")
    void shouldRegisterWithInterestSetAndAttachment(SelectorProvider provider) throws Exception {
        try (Selector selector = provider.openSelector(); Connected c = connect(provider)) {
            assertThrows(IllegalBlockingModeException.class, () -> c.client().register(selector, OP_READ));
            c.client().configureBlocking(false);
            Object attachment = new Object();
            SelectionKey key = c.client().register(selector, OP_READ, attachment);

            assertSame(c.client(), key.channel());
            assertSame(selector, key.selector());
            assertEquals(OP_READ, key.interestOps());
            assertSame(attachment, key.attachment());
            assertEquals(0, key.readyOps());
            assertTrue(key.isValid());
            assertTrue(c.client().isRegistered());
            assertSame(key, c.client().keyFor(selector));
            assertEquals(Set.of(key), selector.keys());
            assertTrue(selector.selectedKeys().isEmpty());

            // registering again updates the same key
            Object other = new Object();
            assertSame(key, c.client().register(selector, OP_READ | OP_WRITE, other));
            assertEquals(OP_READ | OP_WRITE, key.interestOps());
            assertSame(other, key.attachment());
            assertEquals(1, selector.keys().size());
            assertThrows(IllegalArgumentException.class, () -> c.client().register(selector, OP_ACCEPT));
            assertThrows(IllegalArgumentException.class, () -> key.interestOps(OP_ACCEPT));
            assertThrows(IllegalBlockingModeException.class, () -> c.client().configureBlocking(true));
        }
    }

    @ParameterizedTest
    @MethodSource("providers")
    void shouldNotLetApplicationsModifyTheKeySet(SelectorProvider provider) throws Exception {
        try (Selector selector = provider.openSelector(); Connected c = connect(provider)) {
            c.client().configureBlocking(false);
            SelectionKey key = c.client().register(selector, OP_WRITE);
            Set<SelectionKey> keys = selector.keys();
            assertThrows(UnsupportedOperationException.class, () -> keys.remove(key));
            assertThrows(UnsupportedOperationException.class, () -> keys.add(key));
            assertThrows(UnsupportedOperationException.class, keys::clear);
            Iterator<SelectionKey> it = keys.iterator();
            it.next();
            assertThrows(UnsupportedOperationException.class, it::remove);
            assertEquals(Set.of(key), selector.keys());
        }
    }

    @ParameterizedTest
    @MethodSource("providers")
    void shouldLetApplicationsRemoveButNotAddSelectedKeys(SelectorProvider provider) throws Exception {
        try (Selector selector = provider.openSelector(); Connected c = connect(provider)) {
            c.client().configureBlocking(false);
            c.server().configureBlocking(false);
            SelectionKey a = c.client().register(selector, OP_WRITE);
            SelectionKey b = c.server().register(selector, OP_WRITE);
            while (selector.selectedKeys().size() < 2) {
                selector.select();
            }
            Set<SelectionKey> selected = selector.selectedKeys();
            assertThrows(UnsupportedOperationException.class, () -> selected.add(a));
            assertThrows(UnsupportedOperationException.class, () -> selected.addAll(List.of(a, b)));
            assertTrue(selected.remove(a));
            assertEquals(Set.of(b), selected);
            Iterator<SelectionKey> it = selected.iterator();
            assertSame(b, it.next());
            it.remove();
            assertTrue(selected.isEmpty());
            // both are still writable: the next selection adds them back
            assertEquals(2, selector.selectNow());
            assertEquals(Set.of(a, b), selector.selectedKeys());
            selected.clear();
            assertTrue(selector.selectedKeys().isEmpty());
            assertEquals(Set.of(a, b), selector.keys());
        }
    }

    @ParameterizedTest
    @MethodSource("providers")
    void shouldGrowTheSelectedSetOnlyInSelectionsAndAccumulateReadyOps(SelectorProvider provider) throws Exception {
        try (Selector selector = provider.openSelector(); Selector watcher = provider.openSelector();
             Connected c = connect(provider)) {
            c.client().configureBlocking(false);
            c.server().configureBlocking(false);
            SelectionKey client = c.client().register(selector, OP_READ | OP_WRITE);
            SelectionKey server = c.server().register(selector, OP_READ);
            assertEquals(1, selector.select());
            assertEquals(Set.of(client), selector.selectedKeys());
            assertEquals(OP_WRITE, client.readyOps());

            // bytes reach the server: another selector sees them, ours does not until it selects
            SelectionKey watched = c.server().register(watcher, OP_READ);
            c.client().write(ByteBuffer.wrap(new byte[] {1, 2, 3}));
            awaitReady(watcher, watched, OP_READ);
            assertEquals(Set.of(client), selector.selectedKeys());
            assertEquals(0, server.readyOps());
            assertEquals(1, selector.selectNow());
            assertEquals(Set.of(client, server), selector.selectedKeys());
            assertEquals(OP_READ, server.readyOps());

            // the server answers: the client's key, still selected, gets OP_READ added to OP_WRITE
            c.server().write(ByteBuffer.wrap(new byte[] {4}));
            int updated;
            do {
                updated = selector.select();
            } while ((client.readyOps() & OP_READ) == 0);
            assertEquals(1, updated);
            assertEquals(OP_READ | OP_WRITE, client.readyOps());

            // nothing new: no key updated, the ready sets stay as they are (even OP_READ, once consumed)
            assertEquals(1, c.client().read(ByteBuffer.allocate(10)));
            assertEquals(0, selector.selectNow());
            assertEquals(Set.of(client, server), selector.selectedKeys());
            assertEquals(OP_READ | OP_WRITE, client.readyOps());

            // once removed, a key comes back with its current ready set only
            selector.selectedKeys().remove(client);
            assertEquals(1, selector.selectNow());
            assertEquals(OP_WRITE, client.readyOps());
        }
    }

    @ParameterizedTest
    @MethodSource("providers")
    void shouldEndASelectionAtOnceWhenASelectedKeyIsStillReadyWithoutUpdatingIt(SelectorProvider provider)
            throws Exception {
        try (Selector selector = provider.openSelector(); Connected c = connect(provider)) {
            c.client().configureBlocking(false);
            c.server().configureBlocking(false);
            SelectionKey key = c.client().register(selector, OP_READ);
            SelectionKey idle = c.server().register(selector, OP_READ);
            c.server().write(ByteBuffer.wrap(new byte[] {1}));
            assertEquals(1, selector.select());
            assertEquals(Set.of(key), selector.selectedKeys());

            // the byte is not read and the key stays selected: the JDK's poll reports the
            // channel ready, so every selection ends at once, with no key updated, and does
            // not wait for the idle key
            long start = System.nanoTime();
            assertEquals(0, selector.select());
            assertEquals(0, selector.select(60_000));
            assertEquals(0, selector.selectNow());
            assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(10), "a selection waited");
            assertEquals(Set.of(key), selector.selectedKeys());
            assertEquals(OP_READ, key.readyOps());
            assertEquals(0, idle.readyOps());

            // a key whose ready set grows still counts; one that is ready as before does not
            key.interestOps(OP_READ | OP_WRITE);
            assertEquals(1, selector.select());
            assertEquals(OP_READ | OP_WRITE, key.readyOps());
            assertEquals(0, selector.select());
            // bytes for the idle key's channel (seen by another selector first, as the
            // selection would not wait for them): it is added to the set
            c.client().write(ByteBuffer.wrap(new byte[] {2}));
            try (Selector watcher = provider.openSelector()) {
                awaitReady(watcher, c.server().register(watcher, OP_READ), OP_READ);
            }
            assertEquals(1, selector.select());
            assertEquals(Set.of(key, idle), selector.selectedKeys());
            assertEquals(OP_READ, idle.readyOps());
            assertEquals(0, selector.select());
        }
    }

    @ParameterizedTest
    @MethodSource("providers")
    void shouldWaitWhileASelectedKeyIsNotReadyForItsInterestSet(SelectorProvider provider) throws Exception {
        try (Selector selector = provider.openSelector(); Connected c = connect(provider)) {
            c.client().configureBlocking(false);
            SelectionKey key = c.client().register(selector, OP_READ);
            c.server().write(ByteBuffer.wrap(new byte[] {1}));
            assertEquals(1, selector.select());

            // bytes waiting, but no interest in them: the JDK waits out the timeout
            key.interestOps(0);
            long start = System.nanoTime();
            assertEquals(0, selector.select(300));
            assertTrue(System.nanoTime() - start >= TimeUnit.MILLISECONDS.toNanos(250), "select did not wait");
            // the stale ready set is kept
            assertEquals(OP_READ, key.readyOps());
            assertEquals(Set.of(key), selector.selectedKeys());

            // interest again, the bytes read: nothing ready, a selection waits (no busy loop),
            // though the key is still selected with OP_READ in its ready set
            key.interestOps(OP_READ);
            assertEquals(1, c.client().read(ByteBuffer.allocate(2)));
            start = System.nanoTime();
            assertEquals(0, selector.select(300));
            assertTrue(System.nanoTime() - start >= TimeUnit.MILLISECONDS.toNanos(250), "select did not wait");
            assertEquals(Set.of(key), selector.selectedKeys());
            assertEquals(OP_READ, key.readyOps());

            // a blocked selection ends when the selected key becomes ready again, updating nothing
            Task<Integer> select = start("select", selector::select);
            awaitInSelect(select.thread(), selector);
            c.server().write(ByteBuffer.wrap(new byte[] {2}));
            assertEquals(0, select.result().get(10, TimeUnit.SECONDS));
            assertEquals(Set.of(key), selector.selectedKeys());
        }
    }

    /**
     * Another thread cancels keys while selections run over them, their ready sets already
     * in the selected set: a selection never throws for a key cancelled meanwhile (the
     * JDK's HttpClient closes its connections from other threads than its selector's; a
     * {@code CancelledKeyException} out of {@code selectNow} stopped its selector for good).
     */
    @ParameterizedTest
    @MethodSource("providers")
    void shouldNotThrowForAKeyCancelledDuringASelection(SelectorProvider provider) throws Exception {
        List<Connected> connections = new ArrayList<>();
        try (Selector selector = provider.openSelector()) {
            for (int i = 0; i < 16; i++) {
                Connected c = connect(provider);
                connections.add(c);
                c.client().configureBlocking(false);
            }
            long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(1500);
            while (System.nanoTime() - end < 0) {
                List<SelectionKey> keys = new ArrayList<>();
                for (Connected c : connections) {
                    keys.add(c.client().register(selector, OP_WRITE));
                }
                selector.selectNow();
                Thread canceller = Thread.ofPlatform().start(() -> keys.forEach(SelectionKey::cancel));
                while (canceller.isAlive()) {
                    selector.selectNow();
                }
                canceller.join();
                selector.selectNow();
                assertTrue(selector.keys().isEmpty());
                assertTrue(selector.selectedKeys().isEmpty());
            }
        } finally {
            for (Connected c : connections) {
                c.close();
            }
        }
    }

    @ParameterizedTest
    @MethodSource("providers")
    void shouldDropCancelledKeysAtTheNextSelection(SelectorProvider provider) throws Exception {
        try (Selector selector = provider.openSelector(); Connected c = connect(provider)) {
            c.client().configureBlocking(false);
            SelectionKey key = c.client().register(selector, OP_WRITE, "a");
            assertEquals(1, selector.select());
            key.cancel();
            assertFalse(key.isValid());
            assertThrows(CancelledKeyException.class, key::interestOps);
            assertThrows(CancelledKeyException.class, key::readyOps);
            assertThrows(CancelledKeyException.class, () -> key.interestOps(OP_READ));
            assertThrows(CancelledKeyException.class, () -> c.client().register(selector, OP_READ));
            key.cancel(); // no effect
            assertTrue(selector.keys().contains(key));
            assertTrue(c.client().isRegistered());

            assertEquals(0, selector.selectNow());
            assertFalse(selector.keys().contains(key));
            assertFalse(selector.selectedKeys().contains(key));
            assertFalse(c.client().isRegistered());
            assertNull(c.client().keyFor(selector));

            SelectionKey again = c.client().register(selector, OP_WRITE);
            assertNotSame(key, again);
            assertEquals(1, selector.select());
            assertEquals(Set.of(again), selector.selectedKeys());
        }
    }

    @ParameterizedTest
    @MethodSource("providers")
    void shouldDeregisterAClosedChannelAtTheNextSelection(SelectorProvider provider) throws Exception {
        try (Selector selector = provider.openSelector(); Connected c = connect(provider)) {
            c.client().configureBlocking(false);
            c.server().configureBlocking(false);
            SelectionKey closed = c.client().register(selector, OP_READ);
            SelectionKey open = c.server().register(selector, OP_READ);
            c.client().close();
            assertFalse(closed.isValid());
            // the peer sees end-of-stream; the closed channel's key is gone
            awaitReady(selector, open, OP_READ);
            assertEquals(-1, c.server().read(ByteBuffer.allocate(1)));
            assertEquals(Set.of(open), selector.keys());
            assertFalse(c.client().isRegistered());
        }
    }

    @ParameterizedTest
    @MethodSource("providers")
    void shouldSelectInEveryVariant(SelectorProvider provider) throws Exception {
        try (Selector selector = provider.openSelector(); Connected c = connect(provider)) {
            c.client().configureBlocking(false);
            SelectionKey key = c.client().register(selector, OP_READ);
            assertThrows(IllegalArgumentException.class, () -> selector.select(-1));
            assertThrows(IllegalArgumentException.class, () -> selector.select(k -> { }, -1));
            assertEquals(0, selector.selectNow());
            assertEquals(0, selector.select(20));
            List<SelectionKey> seen = new ArrayList<>();
            assertEquals(0, selector.selectNow(seen::add));
            assertEquals(0, selector.select(seen::add, 20));
            assertTrue(seen.isEmpty());

            c.server().write(ByteBuffer.wrap(new byte[] {7}));
            assertEquals(1, selector.select());
            assertEquals(Set.of(key), selector.selectedKeys());
            assertTrue(key.isReadable());
            selector.selectedKeys().clear();
            assertEquals(1, selector.select(10_000));
            selector.selectedKeys().clear();
            assertEquals(1, selector.selectNow());
            selector.selectedKeys().clear();

            // the action variants hand each ready key to the action once
            assertEquals(1, selector.select(seen::add));
            assertEquals(List.of(key), seen);
            assertEquals(OP_READ, key.readyOps());
            assertEquals(1, selector.select(seen::add, 10_000));
            assertEquals(1, selector.selectNow(seen::add));
            assertEquals(List.of(key, key, key), seen);
            assertEquals(1, c.client().read(ByteBuffer.allocate(2)));
            assertEquals(0, selector.selectNow(seen::add));
            assertEquals(0, selector.select(seen::add, 20));
            assertEquals(3, seen.size());
        }
    }

    @ParameterizedTest
    @MethodSource("providers")
    void shouldWakeABlockedSelectFromAnotherThread(SelectorProvider provider) throws Exception {
        try (Selector selector = provider.openSelector(); Connected c = connect(provider)) {
            c.client().configureBlocking(false);
            c.client().register(selector, OP_READ);
            for (int round = 0; round < 3; round++) {
                Task<Integer> select = start("select", selector::select);
                awaitInSelect(select.thread(), selector);
                selector.wakeup();
                assertEquals(0, select.result().get(10, TimeUnit.SECONDS));
            }
            Task<Integer> timed = start("select-timed", () -> selector.select(60_000));
            awaitInSelect(timed.thread(), selector);
            selector.wakeup();
            assertEquals(0, timed.result().get(10, TimeUnit.SECONDS));
        }
    }

    @ParameterizedTest
    @MethodSource("providers")
    void shouldEndABlockedSelectWhenItsThreadIsInterrupted(SelectorProvider provider) throws Exception {
        try (Selector selector = provider.openSelector(); Connected c = connect(provider)) {
            c.client().configureBlocking(false);
            c.client().register(selector, OP_READ);
            Task<Boolean> select = start("select", () -> {
                selector.select();
                return Thread.currentThread().isInterrupted();
            });
            awaitInSelect(select.thread(), selector);
            select.thread().interrupt();
            assertTrue(select.result().get(10, TimeUnit.SECONDS), "select returned, the interrupt status is kept");
            assertTrue(selector.isOpen());
            assertEquals(0, selector.selectNow());
        }
    }

    @ParameterizedTest
    @MethodSource("providers")
    void shouldReturnAtOnceAfterAnEarlierWakeup(SelectorProvider provider) throws Exception {
        try (Selector selector = provider.openSelector(); Connected c = connect(provider)) {
            c.client().configureBlocking(false);
            c.client().register(selector, OP_READ);
            selector.wakeup();
            assertEquals(0, selector.select());
            selector.wakeup();
            assertEquals(0, selector.select(60_000));
            selector.wakeup();
            List<SelectionKey> seen = new ArrayList<>();
            assertEquals(0, selector.select(seen::add));
            assertTrue(seen.isEmpty());
        }
    }

    @ParameterizedTest
    @MethodSource("providers")
    void shouldConsumeAWakeupInASelectionThatFindsAKeyReady(SelectorProvider provider) throws Exception {
        try (Selector selector = provider.openSelector(); Connected c = connect(provider)) {
            c.client().configureBlocking(false);
            SelectionKey key = c.client().register(selector, OP_READ);
            c.server().write(ByteBuffer.wrap(new byte[] {1}));
            awaitReady(selector, key, OP_READ);
            assertEquals(1, c.client().read(ByteBuffer.allocate(2)));
            selector.selectedKeys().clear();
            c.server().write(ByteBuffer.wrap(new byte[] {2}));
            try (Selector watcher = provider.openSelector()) {
                awaitReady(watcher, c.client().register(watcher, OP_READ), OP_READ);
            }

            // the wakeup comes before a selection that finds the key ready: that selection
            // is the one it ends, and the next one waits
            selector.wakeup();
            assertEquals(1, selector.select());
            assertEquals(1, c.client().read(ByteBuffer.allocate(2)));
            long start = System.nanoTime();
            assertEquals(0, selector.select(300));
            assertTrue(System.nanoTime() - start >= TimeUnit.MILLISECONDS.toNanos(250),
                    "a wakeup outlived the selection it ended");
        }
    }

    @ParameterizedTest
    @MethodSource("providers")
    void shouldForgetAWakeupInSelectNowAndCoalesceWakeups(SelectorProvider provider) throws Exception {
        try (Selector selector = provider.openSelector(); Connected c = connect(provider)) {
            c.client().configureBlocking(false);
            c.client().register(selector, OP_READ);
            selector.wakeup();
            assertEquals(0, selector.selectNow());
            long start = System.nanoTime();
            assertEquals(0, selector.select(300));
            assertTrue(System.nanoTime() - start >= TimeUnit.MILLISECONDS.toNanos(250),
                    "the wakeup consumed by selectNow ended a later select");

            // several wakeups between two selections count as one
            selector.wakeup();
            selector.wakeup();
            selector.wakeup();
            assertEquals(0, selector.select());
            start = System.nanoTime();
            assertEquals(0, selector.select(300));
            assertTrue(System.nanoTime() - start >= TimeUnit.MILLISECONDS.toNanos(250),
                    "a second wakeup carried over to the next selection");
        }
    }

    @ParameterizedTest
    @MethodSource("providers")
    void shouldApplyInterestOpsChangedByAnotherThreadDuringASelect(SelectorProvider provider) throws Exception {
        try (Selector selector = provider.openSelector(); Connected c = connect(provider)) {
            c.client().configureBlocking(false);
            SelectionKey key = c.client().register(selector, 0);
            Task<Integer> loop = start("event-loop", () -> {
                // an event loop: select until something is ready
                while (selector.selectedKeys().isEmpty()) {
                    selector.select();
                }
                return key.readyOps();
            });
            awaitInSelect(loop.thread(), selector);
            key.interestOps(OP_WRITE);
            selector.wakeup(); // the contract: the change takes effect at the next selection
            assertEquals(OP_WRITE, loop.result().get(10, TimeUnit.SECONDS));

            // and turned off again, the key is not selected any more
            key.interestOps(0);
            selector.selectedKeys().clear();
            assertEquals(0, selector.selectNow());
        }
    }

    @ParameterizedTest
    @MethodSource("providers")
    void shouldSelectAChannelRegisteredWithTwoSelectors(SelectorProvider provider) throws Exception {
        try (Selector one = provider.openSelector(); Selector two = provider.openSelector();
             Connected c = connect(provider)) {
            c.client().configureBlocking(false);
            SelectionKey a = c.client().register(one, OP_READ, "one");
            SelectionKey b = c.client().register(two, OP_READ | OP_WRITE, "two");
            assertNotSame(a, b);
            assertSame(a, c.client().keyFor(one));
            assertSame(b, c.client().keyFor(two));
            assertEquals(0, one.selectNow());
            assertEquals(1, two.selectNow());
            assertEquals(OP_WRITE, b.readyOps());

            c.server().write(ByteBuffer.wrap(new byte[] {1}));
            awaitReady(one, a, OP_READ);
            awaitReady(two, b, OP_READ | OP_WRITE);

            a.cancel();
            one.selectNow();
            assertTrue(c.client().isRegistered());
            assertTrue(b.isValid());
            two.selectedKeys().clear();
            assertEquals(1, two.selectNow());
            assertEquals(OP_READ | OP_WRITE, b.readyOps());
            b.cancel();
            two.selectNow();
            assertFalse(c.client().isRegistered());
        }
    }

    @ParameterizedTest
    @MethodSource("providers")
    void shouldDeregisterItsKeysWhenClosed(SelectorProvider provider) throws Exception {
        Selector selector = provider.openSelector();
        try (Connected c = connect(provider)) {
            c.client().configureBlocking(false);
            c.server().configureBlocking(false);
            SelectionKey a = c.client().register(selector, OP_WRITE);
            SelectionKey b = c.server().register(selector, OP_READ);
            assertEquals(1, selector.select());
            selector.close();
            assertFalse(selector.isOpen());
            assertFalse(a.isValid());
            assertFalse(b.isValid());
            assertFalse(c.client().isRegistered());
            assertFalse(c.server().isRegistered());
            assertNull(c.client().keyFor(selector));
            selector.close(); // no effect
            selector.wakeup(); // allowed

            assertThrows(ClosedSelectorException.class, selector::select);
            assertThrows(ClosedSelectorException.class, () -> selector.select(10));
            assertThrows(ClosedSelectorException.class, selector::selectNow);
            assertThrows(ClosedSelectorException.class, () -> selector.select(k -> { }));
            assertThrows(ClosedSelectorException.class, selector::keys);
            assertThrows(ClosedSelectorException.class, selector::selectedKeys);
            assertThrows(ClosedSelectorException.class, () -> c.client().register(selector, OP_READ));

            // not registered any more: the channels work in blocking mode again
            c.client().configureBlocking(true);
            c.server().configureBlocking(true);
            c.client().write(ByteBuffer.wrap(new byte[] {5}));
            ByteBuffer in = ByteBuffer.allocate(1);
            assertEquals(1, c.server().read(in));
            assertEquals(5, in.get(0));
        }
    }

    @ParameterizedTest
    @MethodSource("providers")
    void shouldEndABlockedSelectWhenClosed(SelectorProvider provider) throws Exception {
        Selector selector = provider.openSelector();
        try (Connected c = connect(provider)) {
            c.client().configureBlocking(false);
            c.client().register(selector, OP_READ);
            Task<Integer> select = start("select", selector::select);
            awaitInSelect(select.thread(), selector);
            selector.close();
            assertEquals(0, select.result().get(10, TimeUnit.SECONDS));
            assertFalse(c.client().isRegistered());
        }
    }
}
