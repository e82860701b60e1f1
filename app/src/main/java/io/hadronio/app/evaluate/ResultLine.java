package io.hadronio.app.evaluate;

import java.util.HashMap;
import java.util.Map;

/** The {@code RESULT key=value ...} line every benchmark client prints, as a map. */
final class ResultLine {
    static final String PREFIX = "RESULT ";

    private final Map<String, String> fields = new HashMap<>();

    ResultLine(String line) {
        if (!line.startsWith(PREFIX)) {
            throw new IllegalArgumentException("not a RESULT line: " + line);
        }
        for (String word : line.substring(PREFIX.length()).trim().split("\\s+")) {
            int eq = word.indexOf('=');
            if (eq > 0) {
                fields.put(word.substring(0, eq), word.substring(eq + 1));
            }
        }
    }

    boolean has(String key) {
        return fields.containsKey(key);
    }

    double number(String key) {
        String v = fields.get(key);
        if (v == null) {
            throw new IllegalArgumentException("RESULT line has no " + key + ": " + fields);
        }
        return Double.parseDouble(v);
    }

    String text(String key, String otherwise) {
        return fields.getOrDefault(key, otherwise);
    }
}
