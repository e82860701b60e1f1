package io.hadronio.path;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hadronio.config.HadronioConfig;
import io.hadronio.HadronioProvider;
import java.util.Properties;

/**
 * Providers for tests that play two JVMs in one and need every message on UCX and eager, as in
 * the soak's eager pass: connections on UCX from their first byte ({@code hadronio.upgrade=false})
 * and no rendezvous ({@code RNDV_THRESH=inf}), so that what a message needs from the other side
 * is only room in its shared-memory FIFO.
 */
final class EagerProviders {
    private EagerProviders() {
    }

    /** An accelerated provider whose connections receive into {@code sliceCount} slices. */
    static HadronioProvider eager(int sliceCount) {
        Properties p = new Properties();
        p.setProperty("hadronio.upgrade", "false");
        p.setProperty(HadronioConfig.UCX_PREFIX + "RNDV_THRESH", "inf");
        p.setProperty("hadronio.slice.count", Integer.toString(sliceCount));
        HadronioProvider provider = new HadronioProvider(HadronioConfig.from(p));
        assertTrue(provider.isAccelerated());
        return provider;
    }
}
