import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The docs check of {@code scripts/check-docs.sh} (a single-file Java program: the JDK is all it needs,
 * offline): every relative link and anchor in README.md, CHANGELOG.md and docs/ resolves, every script the
 * README names exists and is executable, and every {@code hadronio} subcommand the README names answers
 * {@code --help}. Prints each problem with its file and line, and exits 1 if there is any.
 *
 * <pre>java scripts/DocsCheck.java ROOT [APP_JAR]</pre>
 *
 * Without APP_JAR the subcommands are not checked. Anchors are GitHub's: a heading's text in lower case,
 * punctuation other than '-' and '_' dropped, spaces as '-', repeated headings numbered -1, -2, ...; an
 * {@code <a id="...">} or {@code <a name="...">} counts too. Links inside code (fenced blocks, `spans`) are
 * text, not links.
 */
public final class DocsCheck {
    private static final Pattern LINK = Pattern.compile("!?\\[(?:[^\\]\\[]|\\[[^\\]]*\\])*\\]\\(\\s*<?([^)\\s>]+)>?(?:\\s+\"[^\"]*\")?\\s*\\)");
    private static final Pattern HTML_ANCHOR = Pattern.compile("<a\\s+(?:id|name)=\"([^\"]+)\"");
    private static final Pattern HEADING = Pattern.compile("^(#{1,6})\\s+(.*?)\\s*#*\\s*$");
    private static final Pattern SCRIPT = Pattern.compile("(?<![\\w/.-])(?:\\./)?(scripts/[\\w.-]+\\.sh)");
    private static final Pattern HADRONIO_COMMAND = Pattern.compile(
            "(?:hadronio-app\\.jar|(?<![\\w.-])hadronio)(\\s+.*)");

    private final Path root;
    private final List<String> problems = new ArrayList<>();
    private final Map<Path, Set<String>> anchors = new HashMap<>();

    private DocsCheck(Path root) {
        this.root = root;
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 1) {
            System.err.println("usage: java scripts/DocsCheck.java ROOT [APP_JAR]");
            System.exit(2);
        }
        DocsCheck check = new DocsCheck(Path.of(args[0]).toAbsolutePath().normalize());
        List<Path> pages = check.pages();
        for (Path page : pages) {
            check.links(page);
        }
        Path readme = check.root.resolve("README.md");
        check.scripts(readme);
        int commands = 0;
        if (args.length > 1) {
            commands = check.commands(readme, Path.of(args[1]));
        }
        if (!check.problems.isEmpty()) {
            check.problems.forEach(p -> System.out.println("docs check: " + p));
            System.out.println("docs check: " + check.problems.size() + " problem(s)");
            System.exit(1);
        }
        System.out.printf("docs check: %d pages, links and anchors resolve; README's scripts exist; %s%n", pages.size(),
                args.length > 1 ? commands + " hadronio subcommands answer --help" : "subcommands not checked (no jar)");
    }

    /** README.md, CHANGELOG.md and every Markdown file under docs/ but the raw results nobody commits. */
    private List<Path> pages() throws IOException {
        List<Path> pages = new ArrayList<>();
        for (String top : List.of("README.md", "CHANGELOG.md")) {
            if (Files.exists(root.resolve(top))) {
                pages.add(root.resolve(top));
            }
        }
        Path docs = root.resolve("docs");
        if (Files.isDirectory(docs)) {
            try (Stream<Path> s = Files.walk(docs)) {
                s.filter(p -> p.toString().endsWith(".md"))
                        .filter(p -> !root.relativize(p).startsWith(Path.of("docs", "results", "raw")))
                        .sorted().forEach(pages::add);
            }
        }
        return pages;
    }

    private void links(Path page) throws IOException {
        List<String> lines = proseLines(page);
        for (int i = 0; i < lines.size(); i++) {
            Matcher m = LINK.matcher(lines.get(i));
            while (m.find()) {
                check(page, i + 1, m.group(1));
            }
        }
    }

    private void check(Path page, int line, String target) {
        if (target.matches("^[a-zA-Z][a-zA-Z0-9+.-]*:.*")) {
            return; // http:, https:, mailto: — outside this repository; this check runs offline
        }
        int hash = target.indexOf('#');
        String path = hash < 0 ? target : target.substring(0, hash);
        String anchor = hash < 0 ? null : target.substring(hash + 1);
        Path file = path.isEmpty() ? page : page.getParent().resolve(decode(path)).normalize();
        String where = root.relativize(page) + ":" + line;
        if (!file.startsWith(root)) {
            problems.add(where + ": link leaves the repository: " + target);
            return;
        }
        if (!Files.exists(file)) {
            problems.add(where + ": no such file: " + target);
            return;
        }
        if (anchor != null && !anchor.isEmpty()) {
            if (!file.toString().endsWith(".md")) {
                problems.add(where + ": anchor into a file that is not Markdown: " + target);
            } else if (!anchorsOf(file).contains(anchor)) {
                problems.add(where + ": no heading or anchor '#" + anchor + "' in " + root.relativize(file));
            }
        }
    }

    private Set<String> anchorsOf(Path file) {
        return anchors.computeIfAbsent(file, f -> {
            try {
                Set<String> out = new LinkedHashSet<>();
                Map<String, Integer> seen = new HashMap<>();
                for (String l : lines(f, false)) {
                    Matcher h = HEADING.matcher(l);
                    if (h.matches()) {
                        String slug = slug(h.group(2));
                        int n = seen.merge(slug, 1, Integer::sum) - 1;
                        out.add(n == 0 ? slug : slug + "-" + n);
                    }
                    Matcher a = HTML_ANCHOR.matcher(l);
                    while (a.find()) {
                        out.add(a.group(1));
                    }
                }
                return out;
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
    }

    /** GitHub's heading anchor: markup and punctuation dropped, lower case, spaces to hyphens. */
    static String slug(String heading) {
        String text = heading.replaceAll("\\[([^\\]]*)\\]\\([^)]*\\)", "$1") // a link's text only
                .replaceAll("<[^>]+>", "");
        StringBuilder s = new StringBuilder();
        text.toLowerCase(Locale.ROOT).codePoints().forEach(c -> {
            if (Character.isLetterOrDigit(c) || c == '-' || c == '_') {
                s.appendCodePoint(c);
            } else if (c == ' ') {
                s.append('-');
            }
        });
        return s.toString();
    }

    /** The file's lines with fenced code blocks blanked and inline code spans removed (line numbers kept). */
    private static List<String> proseLines(Path file) throws IOException {
        return lines(file, true);
    }

    /** The file's lines with fenced code blocks blanked, and inline code spans too if {@code spans}. */
    private static List<String> lines(Path file, boolean spans) throws IOException {
        List<String> out = new ArrayList<>();
        boolean fenced = false;
        for (String l : Files.readAllLines(file, StandardCharsets.UTF_8)) {
            if (l.stripLeading().startsWith("```")) {
                fenced = !fenced;
                out.add("");
            } else {
                out.add(fenced ? "" : spans ? l.replaceAll("`[^`]*`", "``") : l);
            }
        }
        return out;
    }

    private static String decode(String path) {
        return path.replace("%20", " ");
    }

    /** Every {@code scripts/*.sh} the README names exists and may be run. */
    private void scripts(Path readme) throws IOException {
        List<String> lines = Files.readAllLines(readme, StandardCharsets.UTF_8);
        for (int i = 0; i < lines.size(); i++) {
            Matcher m = SCRIPT.matcher(lines.get(i));
            while (m.find()) {
                Path script = root.resolve(m.group(1));
                if (!Files.isExecutable(script)) {
                    problems.add("README.md:" + (i + 1) + ": " + m.group(1) + (Files.exists(script) ? " is not executable"
                            : " does not exist"));
                }
            }
        }
    }

    /**
     * Every {@code hadronio} command the README shows (in code: `hadronio evaluate render`, or after
     * {@code hadronio-app.jar}) answers {@code --help} with exit status 0 and its own usage line. The words
     * after "hadronio" up to the first option or argument are the subcommand.
     */
    private int commands(Path readme, Path jar) throws IOException, InterruptedException {
        if (!Files.isRegularFile(jar)) {
            problems.add("the application jar " + jar + " is missing: build first (./mvnw package -DskipTests)");
            return 0;
        }
        Set<List<String>> seen = new LinkedHashSet<>();
        for (String code : codeOf(readme)) {
            Matcher m = HADRONIO_COMMAND.matcher(code);
            while (m.find()) {
                List<String> words = new ArrayList<>();
                for (String w : m.group(1).trim().split("\\s+")) {
                    if (!w.matches("[a-z][a-z0-9-]*") || w.equals("hadronio")) {
                        break;
                    }
                    words.add(w);
                }
                if (!words.isEmpty()) {
                    seen.add(words);
                }
            }
        }
        String java = ProcessHandle.current().info().command().orElse("java");
        for (List<String> words : seen) {
            List<String> cmd = new ArrayList<>(List.of(java, "-jar", jar.toString()));
            cmd.addAll(words);
            cmd.add("--help");
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            byte[] out = p.getInputStream().readAllBytes();
            if (!p.waitFor(60, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                problems.add("README.md: 'hadronio " + String.join(" ", words) + " --help' did not finish in 60 s");
            } else {
                // picocli prints the nearest command's help for a word it does not know as a subcommand: the
                // usage line must name every word
                String usage = "Usage: hadronio " + String.join(" ", words);
                String first = new String(out, StandardCharsets.UTF_8).lines().findFirst().orElse("");
                if (p.exitValue() != 0 || !(first.equals(usage) || first.startsWith(usage + " "))) {
                    problems.add("README.md: 'hadronio " + String.join(" ", words) + " --help' exited " + p.exitValue()
                            + " with '" + first + "': no such command");
                }
            }
        }
        return seen.size();
    }

    /** The README's code: fenced blocks and inline spans. */
    private static List<String> codeOf(Path file) throws IOException {
        List<String> code = new ArrayList<>();
        boolean fenced = false;
        for (String l : Files.readAllLines(file, StandardCharsets.UTF_8)) {
            if (l.stripLeading().startsWith("```")) {
                fenced = !fenced;
            } else if (fenced) {
                code.add(l);
            } else {
                Matcher m = Pattern.compile("`([^`]+)`").matcher(l);
                while (m.find()) {
                    code.add(m.group(1));
                }
            }
        }
        return code;
    }
}
