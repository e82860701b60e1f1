package io.hadronio;

import static java.nio.channels.SelectionKey.OP_READ;
import static java.nio.channels.SelectionKey.OP_WRITE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedSelectorException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.spi.SelectorProvider;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The selections that hand ready keys to an action ({@code select(Consumer)},
 * {@code select(Consumer, long)}, {@code selectNow(Consumer)}), on the JDK's provider and on
 * hadroNIO. What the JDK does beyond the Javadoc (the selected-key set left alone, a
 * reentrant selection refused) is what {@code sun.nio.ch.SelectorImpl} does.
 */
@Timeout(30)
class SelectorActionContractTest extends ContractSupport {

    /** The selections with an action, each as a function of the action. */
    interface ActionSelect {
        int select(Selector selector, Consumer<SelectionKey> action) throws IOException;
    }

    static final List<ActionSelect> VARIANTS = List.of(
            Selector::selectNow, Selector::select, (s, action) -> s.select(action, 10_000));

    @ParameterizedTest
    @MethodSource("providers")
    void shouldHandReadyKeysToTheActionAndLeaveTheSelectedSetAlone(SelectorProvider provider) throws Exception {
        try (Selector selector = provider.openSelector(); Selector watcher = provider.openSelector();
             Connected c = connect(provider)) {
            c.client().configureBlocking(false);
            c.server().configureBlocking(false);
            SelectionKey a = c.client().register(selector, OP_READ | OP_WRITE);
            SelectionKey b = c.server().register(selector, OP_READ);
            assertEquals(1, selector.select());
            assertEquals(Set.of(a), selector.selectedKeys());
            assertEquals(OP_WRITE, a.readyOps());

            // a byte each way, seen by another selector first
            c.server().write(ByteBuffer.wrap(new byte[] {1}));
            c.client().write(ByteBuffer.wrap(new byte[] {2}));
            awaitReady(watcher, c.client().register(watcher, OP_READ), OP_READ);
            awaitReady(watcher, c.server().register(watcher, OP_READ), OP_READ);

            // each ready key once, with the selector and its selected-key set locked
            Map<SelectionKey, Integer> seen = new HashMap<>();
            Consumer<SelectionKey> record = k -> {
                assertNull(seen.put(k, k.readyOps()), "a key handed to the action twice");
                assertTrue(Thread.holdsLock(selector));
                assertTrue(Thread.holdsLock(selector.selectedKeys()));
            };
            for (ActionSelect variant : VARIANTS) {
                seen.clear();
                assertEquals(2, variant.select(selector, record));
                assertEquals(Map.of(a, OP_READ | OP_WRITE, b, OP_READ), seen);
                // the selected-key set is neither used nor cleared: b is not added, a stays
                assertEquals(Set.of(a), selector.selectedKeys());
            }

            // the ready set is what is ready now, even for a key in the selected set (where a
            // selection without action would only add to it)
            assertEquals(1, c.client().read(ByteBuffer.allocate(2)));
            for (ActionSelect variant : VARIANTS) {
                seen.clear();
                assertEquals(2, variant.select(selector, record));
                assertEquals(Map.of(a, OP_WRITE, b, OP_READ), seen);
                assertEquals(OP_WRITE, a.readyOps());
                assertEquals(Set.of(a), selector.selectedKeys());
            }

            // a selection without action adds b; a, ready as its ready set says, is not updated
            assertEquals(1, selector.selectNow());
            assertEquals(Set.of(a, b), selector.selectedKeys());
            assertEquals(OP_WRITE, a.readyOps());
            // keys in the selected set are handed to the action all the same, and stay there
            seen.clear();
            assertEquals(2, selector.selectNow(record));
            assertEquals(Map.of(a, OP_WRITE, b, OP_READ), seen);
            assertEquals(Set.of(a, b), selector.selectedKeys());
        }
    }

    @ParameterizedTest
    @MethodSource("providers")
    void shouldWaitForAReadyKeyAndHandItToTheActionOnTheSelectingThread(SelectorProvider provider)
            throws Exception {
        try (Selector selector = provider.openSelector(); Connected c = connect(provider)) {
            c.client().configureBlocking(false);
            SelectionKey key = c.client().register(selector, OP_READ);
            List<SelectionKey> seen = new ArrayList<>();
            List<Integer> ops = new ArrayList<>();
            Task<Integer> select = start("select", () -> selector.select(k -> {
                seen.add(k);
                ops.add(k.readyOps());
                assertEquals("select", Thread.currentThread().getName());
            }));
            awaitInSelect(select.thread(), selector);
            c.server().write(ByteBuffer.wrap(new byte[] {1}));
            assertEquals(1, select.result().get(10, TimeUnit.SECONDS));
            assertEquals(List.of(key), seen);
            assertEquals(List.of(OP_READ), ops);
            assertTrue(selector.selectedKeys().isEmpty());

            // a wakeup ends the selection, ready keys are handed over all the same
            selector.wakeup();
            assertEquals(1, selector.select(seen::add));
            assertEquals(List.of(key, key), seen);

            // nothing ready: the timed variant waits out its timeout
            assertEquals(1, c.client().read(ByteBuffer.allocate(2)));
            long start = System.nanoTime();
            assertEquals(0, selector.select(seen::add, 300));
            assertTrue(System.nanoTime() - start >= TimeUnit.MILLISECONDS.toNanos(250), "select did not wait");
            assertEquals(2, seen.size());
        }
    }

    @ParameterizedTest
    @MethodSource("providers")
    void shouldRefuseASelectionStartedByTheAction(SelectorProvider provider) throws Exception {
        try (Selector selector = provider.openSelector(); Connected c = connect(provider)) {
            c.client().configureBlocking(false);
            SelectionKey key = c.client().register(selector, OP_WRITE);
            Consumer<SelectionKey> none = k -> { };
            List<Executable> selections = List.of(selector::selectNow, selector::select, () -> selector.select(10),
                    () -> selector.selectNow(none), () -> selector.select(none), () -> selector.select(none, 10));
            List<SelectionKey> seen = new ArrayList<>();
            Consumer<SelectionKey> reenter = k -> {
                seen.add(k);
                for (Executable selection : selections) {
                    assertThrows(IllegalStateException.class, selection);
                }
            };
            for (ActionSelect variant : VARIANTS) {
                assertEquals(1, variant.select(selector, reenter));
            }
            assertEquals(List.of(key, key, key), seen);

            // the refusals left no selection in progress behind
            assertEquals(1, selector.selectNow());
            assertEquals(Set.of(key), selector.selectedKeys());
            assertEquals(1, selector.selectNow(seen::add));
        }
    }

    @ParameterizedTest
    @MethodSource("providers")
    void shouldRelayAnExceptionOfTheAction(SelectorProvider provider) throws Exception {
        try (Selector selector = provider.openSelector(); Connected c = connect(provider)) {
            c.client().configureBlocking(false);
            c.server().configureBlocking(false);
            SelectionKey a = c.client().register(selector, OP_WRITE);
            SelectionKey b = c.server().register(selector, OP_WRITE);
            RuntimeException boom = new IllegalArgumentException("boom");
            for (ActionSelect variant : VARIANTS) {
                List<SelectionKey> seen = new ArrayList<>();
                assertSame(boom, assertThrows(IllegalArgumentException.class, () -> variant.select(selector, k -> {
                    seen.add(k);
                    throw boom;
                })));
                // the selection ended there: the other key was not handed over
                assertEquals(1, seen.size());
            }
            // and the selector works on
            List<SelectionKey> seen = new ArrayList<>();
            assertEquals(2, selector.selectNow(seen::add));
            assertEquals(Set.of(a, b), Set.copyOf(seen));
            assertTrue(selector.selectedKeys().isEmpty());
        }
    }

    @ParameterizedTest
    @MethodSource("providers")
    void shouldThrowClosedSelectorExceptionWhenTheActionClosesTheSelector(SelectorProvider provider)
            throws Exception {
        for (ActionSelect variant : VARIANTS) {
            Selector selector = provider.openSelector();
            try (Connected c = connect(provider)) {
                c.client().configureBlocking(false);
                c.server().configureBlocking(false);
                c.client().register(selector, OP_WRITE);
                c.server().register(selector, OP_WRITE);
                List<SelectionKey> seen = new ArrayList<>();
                assertThrows(ClosedSelectorException.class, () -> variant.select(selector, k -> {
                    seen.add(k);
                    try {
                        selector.close();
                    } catch (IOException e) {
                        throw new UncheckedIOException(e);
                    }
                }));
                // thrown when the first action returned
                assertEquals(1, seen.size());
                assertFalse(selector.isOpen());
                assertFalse(c.client().isRegistered());
                assertFalse(c.server().isRegistered());
                assertThrows(ClosedSelectorException.class, () -> variant.select(selector, seen::add));
                assertEquals(1, seen.size());
            } finally {
                selector.close();
            }
        }
    }

    @ParameterizedTest
    @MethodSource("providers")
    void shouldDropCancelledKeysBeforeTheActionSeesThem(SelectorProvider provider) throws Exception {
        try (Selector selector = provider.openSelector(); Connected c = connect(provider)) {
            c.client().configureBlocking(false);
            c.server().configureBlocking(false);
            SelectionKey a = c.client().register(selector, OP_WRITE);
            SelectionKey b = c.server().register(selector, OP_WRITE);
            a.cancel();
            List<SelectionKey> seen = new ArrayList<>();
            assertEquals(1, selector.selectNow(seen::add));
            assertEquals(List.of(b), seen);
            assertEquals(Set.of(b), selector.keys());
            assertFalse(c.client().isRegistered());

            assertThrows(NullPointerException.class, () -> selector.selectNow(null));
            assertThrows(NullPointerException.class, () -> selector.select((Consumer<SelectionKey>) null));
            assertThrows(NullPointerException.class, () -> selector.select(null, 10));
            assertThrows(IllegalArgumentException.class, () -> selector.select(seen::add, -1));
            assertEquals(1, seen.size());
        }
    }
}
