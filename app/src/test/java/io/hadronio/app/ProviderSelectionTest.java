package io.hadronio.app;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** DISABLE_HADRONIO=1 used to run hadroNIO: only "true" counted, and anything else meant false. */
class ProviderSelectionTest {

    @Test
    void shouldTakeTheUsualWaysOfSayingYesAndNo() {
        for (String yes : new String[] {"true", "TRUE", "1", "yes", " true "}) {
            assertTrue(ProviderSelection.disabled(yes), yes);
        }
        for (String no : new String[] {"false", "0", "no", ""}) {
            assertFalse(ProviderSelection.disabled(no), no);
        }
        assertFalse(ProviderSelection.disabled(null));
    }

    @Test
    void shouldRefuseAnythingElseNamingTheVariable() {
        var e = assertThrows(IllegalArgumentException.class, () -> ProviderSelection.disabled("ture"));
        assertTrue(e.getMessage().contains("DISABLE_HADRONIO") && e.getMessage().contains("ture"), e.getMessage());
    }
}
