package io.hadronio.app.evaluate;

/**
 * The file transfers' share of a profile: a file of {@code bytes} sent with
 * {@code FileChannel.transferTo} into the accepted socket channel (a broker serving a log
 * segment to a consumer) and as many bytes stored with {@code transferFrom}, each a JVM pair
 * per provider and repetition.
 *
 * @param bytes        the file's size, and the bytes per upload
 * @param warmupPasses unmeasured transfers before the measured ones, on the same connection
 * @param passes       measured transfers
 * @param repetitions  JVM pairs per pattern and provider
 */
record TransferPlan(long bytes, int warmupPasses, int passes, int repetitions) {
    static TransferPlan of(Profile profile) {
        return switch (profile) {
            case SMOKE -> new TransferPlan(8L << 20, 1, 2, 1);
            case QUICK, STEADY -> new TransferPlan(1L << 30, 2, 3, 3);
            case FULL -> new TransferPlan(1L << 30, 2, 3, 5);
        };
    }
}
