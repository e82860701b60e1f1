import java.lang.foreign.*;
import java.lang.invoke.*;
import java.nio.file.*;

/**
 * What the first use of FFM costs a JVM by itself (docs/benchmarks/memory.md, Known limits):
 * "none" does nothing, "ffm" one downcall (getpid through a four-word shape, as the provider's
 * WordCalls), "ffm5" that and eight more downcall shapes and an upcall stub. Prints VmRSS and
 * the heap. Run each in a fresh JVM pinned to one core:
 *
 *   javac -d /tmp/ffp docs/repro/FfmFootprint.java
 *   taskset -c 1 java --enable-native-access=ALL-UNNAMED -cp /tmp/ffp FfmFootprint ffm
 *   taskset -c 1 java -XX:+PrintCompilation --enable-native-access=ALL-UNNAMED -cp /tmp/ffp FfmFootprint ffm | grep -c '::'
 */
public class FfmFootprint {
    public static void main(String[] a) throws Throwable {
        if (a[0].equals("ffm") || a[0].equals("ffm5")) {
            Linker l = Linker.nativeLinker();
            MethodHandle h = l.downcallHandle(l.defaultLookup().find("getpid").orElseThrow(), FunctionDescriptor.of(ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG));
            long pid = (long) h.invokeExact(0L, 0L, 0L, 0L);
            if (a[0].equals("ffm5")) {
                for (int n = 1; n <= 8; n++) {
                    ValueLayout[] args = new ValueLayout[n]; java.util.Arrays.fill(args, ValueLayout.JAVA_LONG);
                    l.downcallHandle(l.defaultLookup().find("getpid").orElseThrow(), FunctionDescriptor.of(ValueLayout.JAVA_LONG, args));
                }
                MethodHandle target = MethodHandles.lookup().findStatic(FfmFootprint.class, "cb", MethodType.methodType(long.class, long.class));
                MemorySegment stub = l.upcallStub(target, FunctionDescriptor.of(ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG), Arena.global());
            }
        }
        for (String line : Files.readAllLines(Path.of("/proc/self/status"))) if (line.startsWith("VmRSS")) System.out.println(a[0] + " " + line);
        var mx = java.lang.management.ManagementFactory.getMemoryMXBean();
        System.out.println(a[0] + " heap used " + mx.getHeapMemoryUsage().getUsed() / 1024 / 1024 + " MB, nonheap " + mx.getNonHeapMemoryUsage().getUsed() / 1024 / 1024 + " MB");
    }
    static long cb(long x) { return x; }
}
