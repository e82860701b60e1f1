package io.hadronio.app;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import org.junit.jupiter.api.Test;

class PracticeRoundsTest {
    @Test
    void shouldSplitTheWarmUpIntoRoundsThatFitTheMeasuredBufferAndEndWithTheMeasuredRound() {
        for (long[] c : new long[][] {{1_000_000, 300_000}, {10_000, 100_000}, {1_000, 10}, {17, 5}, {8, 100}}) {
            long warmup = c[0];
            long messages = c[1];
            long[] rounds = PracticeRounds.of(warmup, messages);
            assertEquals(messages, rounds[rounds.length - 1], "the measured round is last");
            long practice = Arrays.stream(rounds, 0, rounds.length - 1).sum();
            assertEquals(warmup, practice, "practice rounds add up to the warm-up: " + Arrays.toString(rounds));
            assertTrue(rounds.length - 1 >= PracticeRounds.MIN_PRACTICE, Arrays.toString(rounds));
            assertTrue(Arrays.stream(rounds).allMatch(n -> n > 0 && n <= messages), Arrays.toString(rounds));
        }
    }

    @Test
    void shouldRunFewerPracticeRoundsOnlyWhenTheWarmUpIsShorterThanThat() {
        assertArrayEquals(new long[] {7}, PracticeRounds.of(0, 7));
        assertArrayEquals(new long[] {1, 1, 1, 50}, PracticeRounds.of(3, 50));
    }

    @Test
    void shouldRejectANegativeWarmUpOrNoMessages() {
        assertThrows(IllegalArgumentException.class, () -> PracticeRounds.of(-1, 10));
        assertThrows(IllegalArgumentException.class, () -> PracticeRounds.of(10, 0));
    }
}
