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
 * application's cores. With one descriptor per arity, hadroNIO's ~50 distinct shapes become ~15.
 *
 * <p><b>Why it is correct.</b> On the 64-bit Linux ABIs this binding runs on (x86-64 System V,
 * AArch64), an integer argument of any width travels in a 64-bit register or an 8-byte stack slot
 * and the callee reads only its low bits; a narrower result leaves the upper bits of the result
 * register undefined. So a caller passes an {@code int} widened with its sign ({@code (long) fd})
 * and casts a narrower result down: {@code (int) (long) h.invokeExact(...)} for an {@code int},
 * {@code (byte)} for UCX's one-byte {@code ucs_status_t}. An upcall does the same with its
 * arguments. Pointers are {@code long} addresses already (see {@code Ucp}). Not for variadic
 * functions, floating-point values or structs passed by value: those keep their own descriptor.
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

    /** {@code long f(long, ...)} with {@code arity} arguments. */
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
