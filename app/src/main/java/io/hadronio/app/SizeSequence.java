package io.hadronio.app;

import java.util.ArrayList;
import java.util.List;

/**
 * The message sizes one benchmark client measures one after another, each with its own
 * measured and warm-up counts: {@code -l 64,4096 -m 100000,20000 -t 5000}. A count list
 * holds either one value (for every size) or one per size. Running many sizes in one
 * server/client pair of JVMs is what lets {@code hadronio evaluate} measure a whole
 * size sweep for the price of one JVM start-up instead of one per size.
 */
public final class SizeSequence {
    /**
     * One size of the sequence.
     *
     * @param length   bytes per message
     * @param messages measured messages (or round trips)
     * @param warmup   messages before the measured ones; -1: the command's default
     */
    public record Step(int length, long messages, long warmup) {
    }

    private SizeSequence() {
    }

    /**
     * The steps of {@code lengths} with their counts.
     *
     * @param minLength the smallest length the benchmark takes (the UCX binding's can send 0 bytes)
     * @throws IllegalArgumentException a count list of another length than 1 or {@code lengths.size()}, a
     *                                  length below {@code minLength} or a measured count below 1
     */
    public static List<Step> of(List<Integer> lengths, List<Long> messages, List<Long> warmups, int minLength) {
        if (lengths.isEmpty()) {
            throw new IllegalArgumentException("no --length");
        }
        List<Step> steps = new ArrayList<>();
        for (int i = 0; i < lengths.size(); i++) {
            Step s = new Step(lengths.get(i), pick(messages, i, lengths.size(), "--messages"),
                    pick(warmups, i, lengths.size(), "--threshold/--warmup"));
            if (s.length() < minLength) {
                throw new IllegalArgumentException("--length must be >= " + minLength + ", not " + s.length());
            }
            if (s.messages() < 1) {
                throw new IllegalArgumentException("--messages must be > 0, not " + s.messages());
            }
            steps.add(s);
        }
        return steps;
    }

    private static long pick(List<Long> values, int i, int n, String option) {
        if (values.size() == 1) {
            return values.getFirst();
        }
        if (values.size() != n) {
            throw new IllegalArgumentException(option + " needs one value or one per --length (" + n + "), not "
                    + values.size());
        }
        return values.get(i);
    }
}
