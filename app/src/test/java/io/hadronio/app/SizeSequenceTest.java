package io.hadronio.app;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import org.junit.jupiter.api.Test;

/** How a benchmark client's -l/-m/-t lists become the sizes it measures one after another. */
class SizeSequenceTest {

    @Test
    void shouldUseOneCountForEverySize() {
        assertEquals(List.of(new SizeSequence.Step(4, 1000, -1), new SizeSequence.Step(64, 1000, -1)),
                SizeSequence.of(List.of(4, 64), List.of(1000L), List.of(-1L), 1));
    }

    @Test
    void shouldPairCountsWithSizesInOrder() {
        assertEquals(List.of(new SizeSequence.Step(4, 1000, 10), new SizeSequence.Step(64, 500, 20)),
                SizeSequence.of(List.of(4, 64), List.of(1000L, 500L), List.of(10L, 20L), 1));
    }

    @Test
    void shouldKeepASingleSizeAsBefore() {
        assertEquals(List.of(new SizeSequence.Step(8, 100000, -1)),
                SizeSequence.of(List.of(8), List.of(100000L), List.of(-1L), 1));
    }

    @Test
    void shouldRejectCountListsOfAnotherLength() {
        assertThrows(IllegalArgumentException.class,
                () -> SizeSequence.of(List.of(4, 64, 1024), List.of(1000L, 500L), List.of(-1L), 1));
        assertThrows(IllegalArgumentException.class,
                () -> SizeSequence.of(List.of(4, 64), List.of(1000L), List.of(1L, 2L, 3L), 1));
    }

    @Test
    void shouldRejectLengthsBelowTheMinimumAndEmptyCounts() {
        assertThrows(IllegalArgumentException.class, () -> SizeSequence.of(List.of(0), List.of(1L), List.of(-1L), 1));
        assertEquals(0, SizeSequence.of(List.of(0), List.of(1L), List.of(-1L), 0).getFirst().length());
        assertThrows(IllegalArgumentException.class, () -> SizeSequence.of(List.of(8), List.of(0L), List.of(-1L), 1));
        assertThrows(IllegalArgumentException.class, () -> SizeSequence.of(List.of(), List.of(1L), List.of(-1L), 1));
    }
}
