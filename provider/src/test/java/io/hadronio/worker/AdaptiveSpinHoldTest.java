package io.hadronio.worker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * The hold of an adaptive waiter's yields: a yield that lost the core for long makes the
 * following waits sleep past their first pauses (a yielded thread is not woken by its data, a
 * sleeping one is) until the hold is over; the hold doubles while yields stay slow and starts
 * short again after a fast one. Times are given, not measured.
 */
class AdaptiveSpinHoldTest {
    private static final long WINDOW = 100_000;
    private static final long PAUSES = AdaptiveSpin.SPIN_BEFORE_YIELD_NANOS;
    private static final long T0 = 1_000_000_000L;

    @Test
    void slowYieldMakesTheNextWaitsSleepPastTheirPausesUntilTheHoldIsOver() {
        AdaptiveSpin spin = new AdaptiveSpin(WINDOW, true);
        spin.yielded(T0, AdaptiveSpin.SLOW_YIELD_NANOS);
        long holdEnd = T0 + AdaptiveSpin.SLOW_YIELD_NANOS + AdaptiveSpin.MIN_HOLD_NANOS;

        long wait = T0 + 1_000_000;
        spin.start(wait);
        assertTrue(spin.turn(wait + PAUSES / 2), "the first pauses stay: a ping-pong's answer comes within them");
        assertFalse(spin.turn(wait + PAUSES), "past its pauses a held waiter sleeps");

        assertTrue(spin.held(holdEnd - 1));
        assertFalse(spin.held(holdEnd + 1), "after the hold the waiter spins (and yields) again");
    }

    @Test
    void fastYieldsKeepTheSpin() {
        AdaptiveSpin spin = new AdaptiveSpin(WINDOW, true);
        spin.yielded(T0, 300);
        assertFalse(spin.held(T0 + 1));
        spin.start(T0);
        assertFalse(spin.turn(T0 + WINDOW), "the window still ends the spin");
        spin.stop();
    }

    @Test
    void holdDoublesWhileYieldsStaySlowAndStartsShortAgainAfterAFastOne() {
        AdaptiveSpin spin = new AdaptiveSpin(WINDOW, true);
        assertEquals(AdaptiveSpin.MIN_HOLD_NANOS, spin.holdNanos());
        spin.yielded(T0, AdaptiveSpin.SLOW_YIELD_NANOS);
        assertEquals(2 * AdaptiveSpin.MIN_HOLD_NANOS, spin.holdNanos());
        for (int i = 0; i < 40; i++) {
            spin.yielded(T0, 4_000_000);
        }
        assertEquals(AdaptiveSpin.MAX_HOLD_NANOS, spin.holdNanos(), "bounded: a contended core is asked again");
        spin.yielded(T0, 1_000);
        assertEquals(AdaptiveSpin.MIN_HOLD_NANOS, spin.holdNanos());
    }

    @Test
    void busyPollingNeverSleepsEvenWhenHeld() {
        AdaptiveSpin spin = new AdaptiveSpin(Long.MAX_VALUE, true);
        spin.yielded(T0, AdaptiveSpin.SLOW_YIELD_NANOS);
        spin.start(T0);
        assertTrue(spin.turn(T0 + PAUSES));
        spin.stop();
    }
}
