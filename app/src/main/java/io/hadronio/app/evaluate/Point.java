package io.hadronio.app.evaluate;

/** One measured point: a provider in a mode, one metric, one message size. Each repetition is one run of it. */
public record Point(Provider provider, Mode mode, Metric metric, int size) {
    public Point {
        if ((provider == Provider.UCX) != (mode == Mode.RAW)) {
            throw new IllegalArgumentException("the UCX binding runs in mode raw only, and only it does: " + provider
                    + "/" + mode);
        }
    }

    /** For file names and the progress line: {@code blocking-latency-hadronio-4096}. */
    String tag() {
        return mode.id() + "-" + metric.id() + "-" + provider.id() + "-" + size;
    }

    @Override
    public String toString() {
        return mode.id() + " " + metric.id() + " " + provider.label() + " " + Sizes.human(size);
    }
}
