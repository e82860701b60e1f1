package io.hadronio.benchmarks;

import io.hadronio.ucx.Feature;
import io.hadronio.ucx.ThreadMode;
import io.hadronio.ucx.UcxContext;
import io.hadronio.ucx.UcxWorker;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * {@code ucp_worker_progress} through the binding on a worker with nothing to do: what every
 * busy-poll turn of a waiting reader or selector costs (the downcall and UCX's empty pass).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
public class WorkerProgressBenchmark {
    private UcxContext context;
    private UcxWorker worker;

    @Setup(Level.Trial)
    public void open() throws Exception {
        context = UcxContext.builder().features(Feature.TAG).name("hadronio-jmh").open();
        worker = context.newWorker(ThreadMode.SINGLE, "jmh-idle");
    }

    @TearDown(Level.Trial)
    public void close() throws Exception {
        worker.close();
        context.close();
    }

    @Benchmark
    public int idleProgress() {
        return worker.progress();
    }
}
