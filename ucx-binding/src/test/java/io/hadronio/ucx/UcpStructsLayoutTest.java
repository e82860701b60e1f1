package io.hadronio.ucx;

import static java.lang.foreign.MemoryLayout.PathElement.groupElement;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.lang.foreign.GroupLayout;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.StructLayout;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Compares the hand-written layouts of {@link UcpStructs} (and the flag and enum values
 * the binding hard-codes) with what the C compiler makes of the installed UCX headers.
 *
 * <p>A tiny C program is generated, compiled with gcc against {@code <ucp/api/ucp.h>},
 * and run; it prints {@code sizeof} and {@code offsetof} of every field of every struct
 * (the field lists below are copied from the UCX 1.13 headers, not from the Java
 * layouts, so a field missing on the Java side is reported by name) and the values of
 * the constants. gcc and the headers are installed by {@code scripts/env.sh}; without
 * them this test fails and says so.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class UcpStructsLayoutTest {
    /** C struct name -> its fields as C member designators (nested with '.'), from the headers. */
    private static final Map<String, List<String>> C_FIELDS = new LinkedHashMap<>();
    /** C struct name -> the Java layout that must match it. */
    private static final Map<String, StructLayout> JAVA_LAYOUTS = new LinkedHashMap<>();
    /** C constant -> the value the binding uses for it. */
    private static final Map<String, Long> CONSTANTS = new LinkedHashMap<>();
    /** The C prefix of the {@code field_mask} bits of each struct class; its FIELD_X is PREFIX_X. */
    private static final Map<String, String> FIELD_PREFIXES = Map.of(
            "UcpParams", "UCP_PARAM_FIELD_",
            "UcpWorkerParams", "UCP_WORKER_PARAM_FIELD_",
            "UcpEpParams", "UCP_EP_PARAM_FIELD_",
            "UcpRequestParam", "UCP_OP_ATTR_FIELD_",
            "UcpMemMapParams", "UCP_MEM_MAP_PARAM_FIELD_",
            "UcpAmHandlerParam", "UCP_AM_HANDLER_PARAM_FIELD_");
    /** FIELD_ constants of struct classes missing from FIELD_PREFIXES. */
    private static final List<String> UNMAPPED_FIELD_CONSTANTS = new ArrayList<>();

    static {
        struct("ucp_params_t", UcpStructs.UcpParams.LAYOUT,
                "field_mask", "features", "request_size", "request_init", "request_cleanup", "tag_sender_mask",
                "mt_workers_shared", "estimated_num_eps", "estimated_num_ppn", "name");
        struct("ucp_worker_params_t", UcpStructs.UcpWorkerParams.LAYOUT,
                "field_mask", "thread_mode", "cpu_mask", "events", "user_data", "event_fd", "flags", "name",
                "am_alignment", "client_id");
        struct("ucp_ep_params_t", UcpStructs.UcpEpParams.LAYOUT,
                "field_mask", "address", "err_mode", "err_handler", "err_handler.cb", "err_handler.arg",
                "user_data", "flags", "sockaddr", "sockaddr.addr", "sockaddr.addrlen", "conn_request", "name",
                "local_sockaddr", "local_sockaddr.addr", "local_sockaddr.addrlen");
        struct("ucs_sock_addr_t", UcpStructs.UcpEpParams.SOCK_ADDR, "addr", "addrlen");
        struct("ucp_request_param_t", UcpStructs.UcpRequestParam.LAYOUT,
                "op_attr_mask", "flags", "request", "cb", "datatype", "user_data", "reply_buffer", "memory_type",
                "recv_info", "memh");
        struct("ucp_tag_recv_info_t", UcpStructs.UcpTagRecvInfo.LAYOUT, "sender_tag", "length");
        struct("ucp_mem_map_params_t", UcpStructs.UcpMemMapParams.LAYOUT,
                "field_mask", "address", "length", "flags", "prot", "memory_type");
        struct("ucp_am_handler_param_t", UcpStructs.UcpAmHandlerParam.LAYOUT,
                "field_mask", "id", "flags", "cb", "arg");
        struct("ucp_am_recv_param_t", UcpStructs.UcpAmRecvParam.LAYOUT, "recv_attr", "reply_ep");

        fieldMaskConstants();
        constant("UCP_OP_ATTR_FLAG_NO_IMM_CMPL", UcpStructs.UcpRequestParam.FLAG_NO_IMM_CMPL);
        constant("UCP_EP_CLOSE_FLAG_FORCE", UcpStructs.UcpRequestParam.EP_CLOSE_FLAG_FORCE);
        constant("UCP_AM_RECV_ATTR_FLAG_DATA", UcpStructs.UcpAmRecvParam.RECV_ATTR_FLAG_DATA);
        constant("UCP_AM_RECV_ATTR_FLAG_RNDV", UcpStructs.UcpAmRecvParam.RECV_ATTR_FLAG_RNDV);
        // the public copies of the receive attributes
        CONSTANTS.put("UCP_AM_RECV_ATTR_FLAG_DATA + 0", UcxAmHandler.ATTR_DATA);
        CONSTANTS.put("UCP_AM_RECV_ATTR_FLAG_RNDV + 0", UcxAmHandler.ATTR_RENDEZVOUS);
        // what UcxWorker.setAmHandler writes into ucp_am_handler_param_t.flags
        CONSTANTS.put("UCP_AM_FLAG_WHOLE_MSG | UCP_AM_FLAG_PERSISTENT_DATA", 0b11L);

        constant("UCP_FEATURE_TAG", Feature.TAG.bit);
        constant("UCP_FEATURE_RMA", Feature.RMA.bit);
        constant("UCP_FEATURE_WAKEUP", Feature.WAKEUP.bit);
        constant("UCP_FEATURE_STREAM", Feature.STREAM.bit);
        constant("UCP_FEATURE_AM", Feature.AM.bit);
        constant("UCP_ERR_HANDLING_MODE_NONE", ErrorMode.NONE.value);
        constant("UCP_ERR_HANDLING_MODE_PEER", ErrorMode.PEER.value);
        constant("UCS_THREAD_MODE_SINGLE", ThreadMode.SINGLE.value);
        constant("UCS_THREAD_MODE_SERIALIZED", ThreadMode.SERIALIZED.value);
        constant("UCS_THREAD_MODE_MULTI", ThreadMode.MULTI.value);

        // ucs_status_t is a packed enum: downcalls must return it as a byte
        constant("sizeof(ucs_status_t)", UcsStatus.LAYOUT.byteSize());
        constant("UCS_OK", UcsStatus.OK);
        constant("UCS_INPROGRESS", UcsStatus.INPROGRESS);
        constant("UCS_ERR_INVALID_PARAM", UcsStatus.ERR_INVALID_PARAM);
        constant("UCS_ERR_INVALID_ADDR", UcsStatus.ERR_INVALID_ADDR);
        constant("UCS_ERR_MESSAGE_TRUNCATED", UcsStatus.ERR_MESSAGE_TRUNCATED);
        constant("UCS_ERR_UNREACHABLE", UcsStatus.ERR_UNREACHABLE);
        constant("UCS_ERR_BUSY", UcsStatus.ERR_BUSY);
        constant("UCS_ERR_CANCELED", UcsStatus.ERR_CANCELED);
        constant("UCS_ERR_TIMED_OUT", UcsStatus.ERR_TIMED_OUT);
        constant("UCS_ERR_UNSUPPORTED", UcsStatus.ERR_UNSUPPORTED);
        constant("UCS_ERR_NOT_CONNECTED", UcsStatus.ERR_NOT_CONNECTED);
        constant("UCS_ERR_CONNECTION_RESET", UcsStatus.ERR_CONNECTION_RESET);
        constant("UCS_ERR_ENDPOINT_TIMEOUT", UcsStatus.ERR_ENDPOINT_TIMEOUT);
        constant("UCS_ERR_LAST", UcsStatus.ERR_LAST);
    }

    /** Every {@code FIELD_*} bit of every struct class (FIELD_MASK is an offset, not a bit). */
    private static void fieldMaskConstants() {
        for (Class<?> struct : UcpStructs.class.getDeclaredClasses()) {
            for (java.lang.reflect.Field f : struct.getDeclaredFields()) {
                String name = f.getName();
                if (!name.startsWith("FIELD_") || name.equals("FIELD_MASK")
                        || !java.lang.reflect.Modifier.isStatic(f.getModifiers())) {
                    continue;
                }
                String prefix = FIELD_PREFIXES.get(struct.getSimpleName());
                if (prefix == null) {
                    UNMAPPED_FIELD_CONSTANTS.add(struct.getSimpleName() + "." + name);
                    continue;
                }
                try {
                    f.setAccessible(true);
                    constant(prefix + name.substring("FIELD_".length()), ((Number) f.get(null)).longValue());
                } catch (IllegalAccessException e) {
                    throw new AssertionError(e);
                }
            }
        }
    }

    private static void struct(String cName, StructLayout layout, String... fields) {
        C_FIELDS.put(cName, List.of(fields));
        JAVA_LAYOUTS.put(cName, layout);
    }

    private static void constant(String cName, long value) {
        CONSTANTS.put(cName, value);
    }

    /** "struct field" -> {offset, size}; "struct" -> {sizeof}; constant -> {value}. */
    private static Map<String, long[]> probe;

    @BeforeAll
    static void compileAndRun() throws IOException, InterruptedException {
        probe = runProgram(cProgram());
    }

    private static String cProgram() {
        StringBuilder c = new StringBuilder();
        c.append("#include <stdio.h>\n#include <stddef.h>\n#include <ucp/api/ucp.h>\n\n");
        c.append("#define S(t) printf(\"sizeof %s %zu\\n\", #t, sizeof(t))\n");
        c.append("#define F(t, f) printf(\"field %s %s %zu %zu\\n\", #t, #f, offsetof(t, f), sizeof(((t *) 0)->f))\n");
        c.append("#define C(name, v) printf(\"const %s %lld\\n\", name, (long long) (v))\n\n");
        c.append("int main(void) {\n");
        C_FIELDS.forEach((struct, fields) -> {
            c.append("    S(").append(struct).append(");\n");
            for (String f : fields) {
                c.append("    F(").append(struct).append(", ").append(f).append(");\n");
            }
        });
        for (String name : CONSTANTS.keySet()) {
            c.append("    C(\"").append(name.replace(" ", "_")).append("\", ").append(name).append(");\n");
        }
        c.append("    return 0;\n}\n");
        return c.toString();
    }

    private static Map<String, long[]> runProgram(String source) throws IOException, InterruptedException {
        Path dir = Files.createTempDirectory("hadronio-ucp-layout");
        try {
            Path src = dir.resolve("layout.c");
            Path exe = dir.resolve("layout");
            Files.writeString(src, source);
            String compilerOutput = run(dir, "gcc (install: apt-get install gcc, or source scripts/env.sh)",
                    "gcc", "-Wall", "-o", exe.toString(), src.toString());
            if (!Files.isExecutable(exe)) {
                fail("gcc could not compile the layout probe against <ucp/api/ucp.h>; are the UCX headers installed"
                        + " (apt-get install libucx-dev, as scripts/env.sh does)? /usr/include/ucp/api/ucp.h "
                        + (Files.exists(Path.of("/usr/include/ucp/api/ucp.h")) ? "exists" : "is missing")
                        + "\n--- gcc output ---\n" + compilerOutput + "\n--- source ---\n" + source);
            }
            String output = run(dir, "the compiled probe " + exe, exe.toString());
            Map<String, long[]> result = new TreeMap<>();
            for (String line : output.split("\n")) {
                String[] w = line.trim().split(" ");
                switch (w[0]) {
                    case "sizeof" -> result.put(w[1], new long[] {Long.parseLong(w[2])});
                    case "field" -> result.put(w[1] + " " + w[2],
                            new long[] {Long.parseLong(w[3]), Long.parseLong(w[4])});
                    case "const" -> result.put(w[1], new long[] {Long.parseLong(w[2])});
                    default -> fail("unexpected probe output: " + line + "\n" + output);
                }
            }
            return result;
        } finally {
            try (Stream<Path> files = Files.walk(dir)) {
                files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }

    /** Runs a command, returns its combined output; fails the test clearly when it cannot be started. */
    private static String run(Path dir, String what, String... command) throws IOException, InterruptedException {
        Process p;
        try {
            p = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true).start();
        } catch (IOException e) {
            fail("cannot run " + what + ": " + e.getMessage());
            throw e;
        }
        try {
            byte[] out = p.getInputStream().readAllBytes();
            if (!p.waitFor(60, TimeUnit.SECONDS)) {
                fail(what + " did not finish");
            }
            String text = new String(out, StandardCharsets.UTF_8);
            if (p.exitValue() != 0 && !command[0].equals("gcc")) {
                fail(what + " exited with " + p.exitValue() + ":\n" + text);
            }
            return text;
        } finally {
            p.destroyForcibly();
        }
    }

    @Test
    void shouldMatchStructSizesOfTheHeaders() {
        for (Map.Entry<String, StructLayout> e : JAVA_LAYOUTS.entrySet()) {
            long[] c = probe.get(e.getKey());
            assertTrue(c != null, "no sizeof for " + e.getKey());
            assertEquals(c[0], e.getValue().byteSize(), "sizeof(" + e.getKey() + ")");
        }
    }

    @Test
    void shouldMatchFieldOffsetsAndSizesOfTheHeaders() {
        List<String> mismatches = new ArrayList<>();
        C_FIELDS.forEach((struct, fields) -> {
            StructLayout layout = JAVA_LAYOUTS.get(struct);
            for (String field : fields) {
                long[] c = probe.get(struct + " " + field);
                MemoryLayout.PathElement[] path = Stream.of(field.split("\\."))
                        .map(MemoryLayout.PathElement::groupElement)
                        .toArray(MemoryLayout.PathElement[]::new);
                long offset;
                long size;
                try {
                    offset = layout.byteOffset(path);
                    size = layout.select(path).byteSize();
                } catch (IllegalArgumentException missing) {
                    mismatches.add(struct + "." + field + ": missing from the Java layout (C offset " + c[0]
                            + ", size " + c[1] + ")");
                    continue;
                }
                if (offset != c[0] || size != c[1]) {
                    mismatches.add(struct + "." + field + ": Java offset " + offset + " size " + size
                            + ", C offset " + c[0] + " size " + c[1]);
                }
            }
        });
        assertTrue(mismatches.isEmpty(), String.join("\n", mismatches));
    }

    @Test
    void shouldNameOnlyFieldsThatTheHeadersHave() {
        List<String> unknown = new ArrayList<>();
        JAVA_LAYOUTS.forEach((struct, layout) -> {
            TreeSet<String> javaFields = new TreeSet<>();
            collectNames(layout, "", javaFields);
            javaFields.removeAll(C_FIELDS.get(struct));
            javaFields.forEach(f -> unknown.add(struct + "." + f));
        });
        assertTrue(unknown.isEmpty(), "Java layout fields not in the C structs: " + unknown);
    }

    private static void collectNames(GroupLayout group, String prefix, TreeSet<String> out) {
        for (MemoryLayout member : group.memberLayouts()) {
            if (member.name().isEmpty()) {
                continue; // padding
            }
            String name = prefix + member.name().get();
            out.add(name);
            if (member instanceof GroupLayout nested) {
                collectNames(nested, name + ".", out);
            }
        }
    }

    @Test
    void shouldKnowTheCNameOfEveryFieldMaskBit() {
        assertTrue(UNMAPPED_FIELD_CONSTANTS.isEmpty(), "add their C prefix to FIELD_PREFIXES: "
                + UNMAPPED_FIELD_CONSTANTS);
        assertTrue(CONSTANTS.containsKey("UCP_OP_ATTR_FIELD_CALLBACK"), CONSTANTS::toString);
    }

    @Test
    void shouldUseTheFlagAndEnumValuesOfTheHeaders() {
        List<String> mismatches = new ArrayList<>();
        CONSTANTS.forEach((name, javaValue) -> {
            long[] c = probe.get(name.replace(" ", "_"));
            if (c == null) {
                mismatches.add(name + ": not printed by the probe");
            } else if (c[0] != javaValue) {
                mismatches.add(name + ": Java " + javaValue + ", C " + c[0]);
            }
        });
        assertTrue(mismatches.isEmpty(), String.join("\n", mismatches));
    }

    @Test
    void shouldReadTheFieldsTheBindingWritesAtTheHeaderOffsets() {
        // the offset constants the binding uses are derived from the layouts; spot-check the
        // hand-computed one (err_handler.arg) and the traps named in DESIGN.md
        assertEquals(probe.get("ucp_ep_params_t err_handler.arg")[0], UcpStructs.UcpEpParams.ERR_HANDLER_ARG);
        assertEquals(probe.get("ucp_ep_params_t err_handler.cb")[0], UcpStructs.UcpEpParams.ERR_HANDLER_CB);
        assertEquals(probe.get("ucp_worker_params_t name")[0], UcpStructs.UcpWorkerParams.NAME);
        assertEquals(probe.get("ucp_request_param_t memh")[0], UcpStructs.UcpRequestParam.MEMH);
        assertEquals(probe.get("ucp_ep_params_t name")[0], UcpStructs.UcpEpParams.NAME);
        assertEquals(UcpStructs.UcpEpParams.LAYOUT.byteOffset(groupElement("user_data")),
                UcpStructs.UcpEpParams.USER_DATA);
    }
}
