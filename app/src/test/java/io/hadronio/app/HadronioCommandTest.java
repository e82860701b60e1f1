package io.hadronio.app;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.Set;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** What {@code main} builds for its arguments: the subcommand they name, or every subcommand. */
class HadronioCommandTest {
    @Test
    void shouldBuildOnlyTheSubcommandTheArgumentsName() {
        for (String name : HadronioCommand.commandLine().getSubcommands().keySet()) {
            if (name.equals("help")) {
                continue;
            }
            CommandLine commandLine = HadronioCommand.commandLine(new String[] {name, "--help"});
            assertEquals(Set.of(name), commandLine.getSubcommands().keySet(), name);
        }
    }

    @Test
    void shouldBuildEverySubcommandForTheHelpAnOptionOrAnUnknownName() {
        Set<String> all = HadronioCommand.commandLine().getSubcommands().keySet();
        assertTrue(all.size() > 10, all.toString());
        for (String[] args : new String[][] {{}, {"--help"}, {"-V"}, {"help"}, {"help", "load"}, {"lod"}}) {
            assertEquals(all, HadronioCommand.commandLine(args).getSubcommands().keySet(), String.join(" ", args));
        }
    }

    @Test
    void shouldSuggestTheSubcommandsForATypo() {
        StringWriter err = new StringWriter();
        CommandLine commandLine = HadronioCommand.commandLine(new String[] {"lod"});
        commandLine.setErr(new PrintWriter(err));
        assertEquals(2, commandLine.execute("lod"));
        assertTrue(err.toString().contains("Did you mean: hadronio load"), err.toString());
    }

    @Test
    void shouldRunTheNamedSubcommand() {
        StringWriter out = new StringWriter();
        CommandLine commandLine = HadronioCommand.commandLine(new String[] {"load", "--help"});
        commandLine.setOut(new PrintWriter(out));
        assertEquals(0, commandLine.execute("load", "--help"));
        assertTrue(out.toString().startsWith("Usage: hadronio load"), out.toString());
    }
}
