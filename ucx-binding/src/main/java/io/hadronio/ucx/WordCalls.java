package io.hadronio.ucx;

import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemoryLayout;
import java.util.Arrays;

/**
 * The few call shapes that every downcall and upcall of hadroNIO uses: every argument and the
 * result is a 64-bit word ({@code long}).
 *
 * <p><b>Why.</b> FFM makes a class and its lambda forms for each distinct pair of descriptor and
 * linker options, and shares them between handles of the same pair. In a young JVM each new
 * shape costs about 1.3-2.3 ms and a few dozen generated classes, each further handle of a known
 * shape about 0.2 ms (measured on JDK 25, docs/benchmarks/netty.md "Fewer call shapes"). The
 * generated classes are then compiled by the JIT in the application's first seconds, on the
 * application's cores. With one descriptor per arity, hadroNIO's ~50 distinct shapes became ~24.
 *
 * <p><b>Why it is correct.</b> On the 64-bit Linux ABIs this binding runs on (x86-64 System V,
 * AArch64), an integer argument of any width travels in a 64-bit register or an 8-byte stack slot
 * and the callee reads only its low bits; a narrower result leaves the upper bits of the result
 * register undefined. So a caller passes an {@code int} widened with its sign ({@code (long) fd})
 * and casts a narrower result down: {@code (int) (long) h.invokeExact(...)} for an {@code int},
 * {@code (byte)} for UCX's one-byte {@code ucs_status_t}. An upcall does the same with its
 * arguments. Pointers are {@code long} addresses already (see {@code Ucp}). Not for variadic
 * functions, floating-point values or structs passed by value: those keep their own descriptor.
 *
 * <p><b>Downcalls share even fewer shapes: {@link #call} and {@link #voidCall}.</b> A downcall
 * takes the descriptor of its arity rounded up to {@value #SHORT} or {@value #LONG} words, and its
 * caller passes {@code 0L} for the arguments the C function does not have (and an upcall keeps its
 * exact arity: UCX calls it). So all downcalls of the binding and the provider link through five
 * shapes (four and eight words, void of four, errno capture and {@code critical} of four), not
 * twenty: each shape left out spares a cold JVM ~0.5 MiB of garbage, a dozen or more generated
 * classes and their compilation (measured in docs/benchmarks/memory.md). Extra arguments are safe
 * on the ABIs above for functions that are not variadic: the caller places them (in argument
 * registers, the seventh and eighth on x86-64 in its own stack area, which it also removes) and
 * the callee never reads them; a {@code void} function's result register is ignored by the caller.
 */
public final class WordCalls {
    private static final int MAX_ARITY = 8;
    private static final FunctionDescriptor[] TO_WORD = new FunctionDescriptor[MAX_ARITY + 1];
    private static final FunctionDescriptor[] TO_VOID = new FunctionDescriptor[MAX_ARITY + 1];

    static {
        for (int arity = 0; arity <= MAX_ARITY; arity++) {
            MemoryLayout[] arguments = new MemoryLayout[arity];
            Arrays.fill(arguments, JAVA_LONG);
            TO_WORD[arity] = FunctionDescriptor.of(JAVA_LONG, arguments);
            TO_VOID[arity] = FunctionDescriptor.ofVoid(arguments);
        }
    }

    private WordCalls() {
    }

    /** Downcall descriptors have this many words for a function of up to this many arguments. */
    public static final int SHORT = 4;
    /** ... and this many for one of more (up to {@link #LONG}). */
    public static final int LONG = 8;

    /**
     * The descriptor of a downcall to {@code long f(...)} of {@code arity} word arguments: that of
     * {@link #SHORT} or {@link #LONG} words; the caller passes {@code 0L} for the rest.
     */
    public static FunctionDescriptor call(int arity) {
        return TO_WORD[checked(arity) <= SHORT ? SHORT : LONG];
    }

    /**
     * The descriptor of a downcall to {@code void f(...)} of up to {@link #SHORT} word arguments:
     * that of {@link #SHORT}; the caller passes {@code 0L} for the rest.
     */
    public static FunctionDescriptor voidCall(int arity) {
        if (checked(arity) > SHORT) {
            throw new IllegalArgumentException("void downcall of " + arity + " arguments: more than " + SHORT);
        }
        return TO_VOID[SHORT];
    }

    /** {@code long f(long, ...)} with {@code arity} arguments: upcalls (and their exact shape). */
    public static FunctionDescriptor word(int arity) {
        return TO_WORD[checked(arity)];
    }

    /** {@code void f(long, ...)} with {@code arity} arguments. */
    public static FunctionDescriptor noResult(int arity) {
        return TO_VOID[checked(arity)];
    }

    private static int checked(int arity) {
        if (arity < 0 || arity > MAX_ARITY) {
            throw new IllegalArgumentException("arity " + arity + " outside 0.." + MAX_ARITY);
        }
        return arity;
    }
}
