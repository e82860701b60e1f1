package io.hadronio.it.apps;

import io.hadronio.it.ChildJvm;
import java.util.List;

/** Which NIO provider one side of an application deployment runs on. */
public enum Side {
    /** The JDK's own provider: the application's class path alone, no property. */
    JDK("jdk"),
    /** hadroNIO: the application's class path plus hadronio.jar, and the provider property. */
    HADRONIO("hadronio");

    private final String label;

    Side(String label) {
        this.label = label;
    }

    public String label() {
        return label;
    }

    /** The JVM options this side adds to an application's own. */
    public List<String> jvmOptions() {
        return this == HADRONIO ? List.of("-D" + ChildJvm.PROVIDER_PROPERTY + "=" + ChildJvm.PROVIDER) : List.of();
    }

    /** The provider class a child on this side must report. */
    public boolean runs(String providerClass) {
        return this == HADRONIO ? providerClass.equals(ChildJvm.PROVIDER) : providerClass.startsWith("sun.nio.ch.");
    }
}
