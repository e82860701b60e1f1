package io.hadronio.connection;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A table a test prints from a transition function, and its copies between two markers in
 * docs/architecture.md and in the function's Javadoc (each Javadoc line prefixed " * "): the
 * copies must equal the printed table, or are rewritten when the system property
 * {@code writeProperty} is true.
 */
public final class GeneratedTable {
    private static final Path DOCS = Path.of("..", "docs", "architecture.md");

    private GeneratedTable() {
    }

    public static void check(String table, String begin, String end, Path javadoc, String writeProperty, String test)
            throws IOException {
        String docs = Files.readString(DOCS);
        String source = Files.readString(javadoc);
        if (Boolean.getBoolean(writeProperty)) {
            Files.writeString(DOCS, replaced(docs, table, "", begin, end));
            Files.writeString(javadoc, replaced(source, table, " * ", begin, end));
            return;
        }
        String how = ": run " + test + " with -D" + writeProperty + "=true";
        assertEquals(table, between(docs, "", begin, end), DOCS + how);
        assertEquals(table, between(source, " * ", begin, end), javadoc + how);
    }

    /** The copy between the markers in {@code text}, each line with {@code prefix} taken off. */
    private static String between(String text, String prefix, String begin, String end) {
        int a = text.indexOf(begin);
        int z = text.indexOf(end);
        assertTrue(a >= 0 && z > a, "no generated table between " + begin + " and " + end);
        StringBuilder b = new StringBuilder();
        // (up to the end marker's line: a Javadoc's " * " before it is no row)
        for (String line : text.substring(text.indexOf('\n', a) + 1, text.lastIndexOf('\n', z) + 1).split("\n")) {
            if (line.startsWith(prefix)) {
                b.append(line.substring(prefix.length())).append('\n');
            }
        }
        return b.toString();
    }

    private static String replaced(String text, String table, String prefix, String begin, String end) {
        int a = text.indexOf(begin);
        int z = text.indexOf(end);
        StringBuilder b = new StringBuilder(text.substring(0, text.indexOf('\n', a) + 1));
        for (String line : table.split("\n")) {
            b.append(prefix).append(line).append('\n');
        }
        return b.append(text.substring(text.lastIndexOf('\n', z) + 1)).toString();
    }
}
