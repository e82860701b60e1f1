package io.hadronio.reactor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.channels.spi.SelectorProvider;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The reactor's generic hooks, with no connection behind them: retry lists, ticks, and what
 * its counts show of them.
 */
@Timeout(30)
class ControlLoopTest {
    private ControlLoop loop;

    @BeforeEach
    void start() throws Exception {
        loop = new ControlLoop(SelectorProvider.provider());
    }

    @AfterEach
    void stop() {
        loop.shutdown();
    }

    @Test
    void shouldRetryAnItemHandedOverTwiceOnceAPassUntilItIsDone() throws Exception {
        AtomicInteger tries = new AtomicInteger();
        CountDownLatch done = new CountDownLatch(1);
        Reactor.RetryList<Object> list = loop.retryList("test.retrying", 0, (item, idle) -> {
            if (tries.incrementAndGet() < 5) {
                return Reactor.Retry.IDLE;
            }
            done.countDown();
            return Reactor.Retry.DONE;
        });
        Object item = new Object();
        list.request(item);
        list.request(item);
        // from an open-ended sleep: the request alone wakes the loop
        assertTrue(done.await(10, TimeUnit.SECONDS));
        assertEquals(0L, onLoop(() -> loop.counts().get("test.retrying")));
        assertEquals(5, tries.get(), "one item, tried until DONE and never again");
    }

    @Test
    void shouldTryEveryItemOncePerPassUntilItIsDoneWhenManyFinishInTheSamePass() throws Exception {
        // more items than the list's first arrays hold; items finish in every pass, so a done
        // item's place is taken by one that the pass has not tried yet, which it must try once
        int items = 100;
        java.util.Map<Integer, Integer> tries = new java.util.concurrent.ConcurrentHashMap<>();
        java.util.Map<Integer, Long> lastPass = new java.util.concurrent.ConcurrentHashMap<>();
        java.util.Set<Integer> triedTwiceInAPass = java.util.concurrent.ConcurrentHashMap.newKeySet();
        CountDownLatch done = new CountDownLatch(items);
        long[] pass = {0};
        Reactor.RetryList<Integer> list = loop.retryList("test.many", 0, (item, idle) -> {
            Long before = lastPass.put(item, pass[0]);
            if (before != null && before == pass[0]) {
                triedTwiceInAPass.add(item);
            }
            int n = tries.merge(item, 1, Integer::sum);
            if (n < 1 + item % 7) {
                return Reactor.Retry.IDLE;
            }
            done.countDown();
            return Reactor.Retry.DONE;
        });
        loop.execute(() -> {
            // a tick ends every pass (after the retries): it counts them
            loop.tickUntilDone(new Reactor.Ticked() {
                @Override
                public boolean tick() {
                    pass[0]++;
                    return done.getCount() > 0;
                }

                @Override
                public boolean owesPeer() {
                    return false;
                }
            });
            for (int i = 0; i < items; i++) {
                list.add(i);
                list.add(i);
            }
        });
        assertTrue(done.await(10, TimeUnit.SECONDS));
        assertEquals(0L, onLoop(() -> loop.counts().get("test.many")));
        for (int i = 0; i < items; i++) {
            assertEquals(1 + i % 7, tries.get(i), "item " + i + ": tried until DONE, never again");
        }
        assertEquals(java.util.Set.of(), triedTwiceInAPass, "items tried twice in one pass");
    }

    @Test
    void shouldStartAnItemsIdleTimeOverWhenItWasBusy() throws Exception {
        long patience = TimeUnit.MILLISECONDS.toNanos(50);
        List<Long> idle = new ArrayList<>();
        AtomicInteger busyAt = new AtomicInteger(-1);
        CountDownLatch done = new CountDownLatch(1);
        Reactor.RetryList<Object> list = loop.retryList("test.busy", 0, (item, idleNanos) -> {
            idle.add(idleNanos);
            if (idleNanos < patience) {
                return Reactor.Retry.IDLE;
            }
            if (busyAt.get() < 0) {
                busyAt.set(idle.size() - 1);
                return Reactor.Retry.BUSY;
            }
            done.countDown();
            return Reactor.Retry.DONE;
        });
        loop.execute(() -> list.add(new Object()));
        assertTrue(done.await(10, TimeUnit.SECONDS));
        List<Long> seen = onLoop(() -> List.copyOf(idle));
        // without the start over, the try after BUSY would have found the item idle past its patience
        assertTrue(seen.get(busyAt.get() + 1) < patience, "the try after BUSY counts from it: " + seen);
    }

    @Test
    void shouldRetryTheListsInTheOrderTheyWereMadeBeforeTheTicks() throws Exception {
        List<String> order = new ArrayList<>();
        Reactor.RetryList<String> first = loop.retryList("test.first", 0, (item, idle) -> {
            order.add(item);
            return Reactor.Retry.DONE;
        });
        Reactor.RetryList<String> second = loop.retryList("test.second", 0, (item, idle) -> {
            order.add(item);
            return Reactor.Retry.DONE;
        });
        CompletableFuture<List<String>> seen = new CompletableFuture<>();
        loop.execute(() -> {
            second.add("second");
            first.add("first");
            loop.tickUntilDone(new Reactor.Ticked() {
                @Override
                public boolean tick() {
                    order.add("tick");
                    seen.complete(List.copyOf(order));
                    return false;
                }

                @Override
                public boolean owesPeer() {
                    return false;
                }
            });
        });
        assertEquals(List.of("first", "second", "tick"), seen.get(10, TimeUnit.SECONDS));
    }

    @Test
    void shouldTickEveryMillisecondUntilDoneAndCountWhatIsOpenAtExit() throws Exception {
        AtomicInteger ticks = new AtomicInteger();
        CountDownLatch done = new CountDownLatch(1);
        Reactor.ClosedAtExit open = () -> { };
        long start = System.nanoTime();
        loop.execute(() -> {
            assertTrue(loop.inReactorThread());
            loop.closeAtExit(open);
            loop.tickUntilDone(new Reactor.Ticked() {
                @Override
                public boolean tick() {
                    if (ticks.incrementAndGet() < 20) {
                        return true;
                    }
                    done.countDown();
                    return false;
                }

                @Override
                public boolean owesPeer() {
                    return true;
                }
            });
        });
        assertTrue(done.await(10, TimeUnit.SECONDS));
        // twenty ticks: the loop did not sleep without a timeout while something was ticked
        assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(5));
        Map<String, Long> counts = loop.counts();
        assertEquals(1L, counts.get("control.open"));
        assertEquals(0L, counts.get("control.ticking"));
        loop.execute(() -> loop.removeExitClose(open));
        assertEquals(0L, loop.counts().get("control.open"));
    }

    /** Takes {@code s} on the loop's thread, after the passes that ran before. */
    /**
     * A deadline that passes while the loop is held up (a slow task, a loaded machine) must not
     * end what it guards before the loop has looked at the bytes that came before it: the
     * server's handshake took a client's hello that had come in time for no hello, and handed
     * it to the application as plain data (HandshakeFuzzTest saw its own CLIENT_HELLO echoed).
     */
    @Test
    void shouldLookAtBytesThatCameInTimeBeforeTheirDeadlineExpires() throws Exception {
        java.nio.channels.Pipe pipe = SelectorProvider.provider().openPipe();
        try {
            pipe.source().configureBlocking(false);
            List<String> order = java.util.Collections.synchronizedList(new ArrayList<>());
            CountDownLatch expired = new CountDownLatch(1);
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(200);
            Reactor.Deadlined guard = new Reactor.Deadlined() {
                @Override
                public boolean due(long now) {
                    return now - deadline > 0;
                }

                @Override
                public void expire() {
                    order.add("expired");
                    loop.removeDeadline(this);
                    expired.countDown();
                }
            };
            CountDownLatch registered = new CountDownLatch(1);
            loop.execute(() -> {
                try {
                    loop.register(pipe.source(), java.nio.channels.SelectionKey.OP_READ, key -> {
                        order.add("read");
                        try {
                            pipe.source().read(java.nio.ByteBuffer.allocate(16));
                        } catch (java.io.IOException e) {
                            throw new java.io.UncheckedIOException(e);
                        }
                        key.cancel();
                    });
                } catch (java.io.IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
                loop.addDeadline(guard);
                registered.countDown();
            });
            assertTrue(registered.await(10, TimeUnit.SECONDS));
            // the loop held up past the deadline; the bytes come well before it
            CountDownLatch holding = new CountDownLatch(1);
            loop.execute(() -> {
                holding.countDown();
                try {
                    Thread.sleep(600);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            assertTrue(holding.await(10, TimeUnit.SECONDS));
            pipe.sink().write(java.nio.ByteBuffer.wrap(new byte[] {1, 2, 3}));
            assertTrue(expired.await(10, TimeUnit.SECONDS), "the deadline never expired");
            assertEquals(List.of("read", "expired"), List.copyOf(order),
                    "bytes that came before the deadline are looked at before it expires");
        } finally {
            pipe.sink().close();
            pipe.source().close();
        }
    }

    private <T> T onLoop(java.util.function.Supplier<T> s) throws Exception {
        CompletableFuture<T> f = new CompletableFuture<>();
        loop.execute(() -> f.complete(s.get()));
        return f.get(10, TimeUnit.SECONDS);
    }
}
