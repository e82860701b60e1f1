package io.hadronio.it.apps;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * One row of the compatibility matrix: an application run in one {@link Pairing}, what it
 * exercised, whether it passed and its own figures. A test opens it, fills it as it checks,
 * calls {@link #pass()} after its last assertion, and {@link #close()} appends the row to
 * {@code target/compat/results.tsv} — as a failure when {@code pass()} was not reached.
 * {@code CompatibilityMatrix} turns that file into {@code docs/COMPATIBILITY.md}.
 */
public final class CompatRecord implements AutoCloseable {
    /** Where the rows go (relative to the module, where surefire runs). */
    public static final Path RESULTS = Path.of("target", "compat", "results.tsv");
    /** The columns of a row, in order. */
    public static final String HEADER = "application\tversion\texercised\tserver\tclient\tmode\ttransport\tresult\tfigures";

    private final String application;
    private final Pairing pairing;
    private String version = "?";
    private String exercised = "";
    private String transport = "?";
    private final Map<String, String> figures = new LinkedHashMap<>();
    private boolean passed;

    private CompatRecord(String application, Pairing pairing) {
        this.application = application;
        this.pairing = pairing;
    }

    public static CompatRecord start(String application, Pairing pairing) {
        return new CompatRecord(application, pairing);
    }

    public CompatRecord version(String version) {
        this.version = version;
        return this;
    }

    public CompatRecord exercised(String what) {
        this.exercised = what;
        return this;
    }

    /** The path the application's connections took, as the server side saw it. */
    public CompatRecord transport(String transport) {
        this.transport = transport;
        return this;
    }

    /** One of the application's natural figures ({@code requests/s}, {@code p99 µs}, ...). */
    public CompatRecord figure(String name, String value) {
        figures.put(name, value);
        return this;
    }

    public void pass() {
        passed = true;
    }

    @Override
    public void close() {
        String mode = io.hadronio.it.ChildJvm.UPGRADE_MODE ? "upgrade" : "eager";
        String row = String.join("\t", application, version, exercised, pairing.server().label(),
                pairing.client().label(), mode, transport, passed ? "pass" : "FAIL",
                figures.entrySet().stream().map(e -> e.getKey() + "=" + e.getValue()).collect(Collectors.joining("; ")));
        try {
            synchronized (CompatRecord.class) {
                Files.createDirectories(RESULTS.getParent());
                if (!Files.exists(RESULTS)) {
                    Files.writeString(RESULTS, HEADER + "\n", StandardCharsets.UTF_8);
                }
                Files.writeString(RESULTS, row.replace('\n', ' ') + "\n", StandardCharsets.UTF_8,
                        StandardOpenOption.APPEND);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
