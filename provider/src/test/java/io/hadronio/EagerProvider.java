package io.hadronio;

import io.hadronio.config.HadronioConfig;

import java.util.Properties;

/**
 * A provider in the default connection mode, whatever mode the suite runs in: the
 * authenticated handshake runs before {@code connect} returns, so a connection between
 * two hadroNIO channels is on UCX at once. Tests of that handshake and of what it leads to
 * (control records, the rendezvous registration, a stalled handshake) use it; the
 * {@code hadronio.upgrade} mode, where connections start as plain TCP, has its own tests
 * ({@code UpgradeTest}).
 */
public final class EagerProvider {
    private static HadronioProvider instance;

    private EagerProvider() {
    }

    /** The suite's provider when it is in the default mode, else one of our own (made once). */
    public static synchronized HadronioProvider get() {
        if (instance == null) {
            if (!ContractSupport.HADRONIO.config().upgrade()) {
                instance = ContractSupport.HADRONIO;
            } else {
                Properties p = new Properties();
                p.putAll(System.getProperties());
                p.setProperty("hadronio.upgrade", "false");
                instance = new HadronioProvider(HadronioConfig.from(p));
            }
        }
        return instance;
    }
}
