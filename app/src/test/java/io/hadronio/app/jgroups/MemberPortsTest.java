package io.hadronio.app.jgroups;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.Arrays;
import org.junit.jupiter.api.RepeatedTest;

class MemberPortsTest {

    /** CI once chose 10671 and 10771: the first member's FD_SOCK2 took the third member's port. */
    @RepeatedTest(50)
    void noMembersPortIsWhereAnotherMembersFailureDetectionListens() throws IOException {
        int[] ports = MemberPorts.free(3);
        assertEquals(3, Arrays.stream(ports).distinct().count(), Arrays.toString(ports));
        for (int a : ports) {
            for (int b : ports) {
                int distance = Math.abs(a - b);
                assertFalse(distance >= 80 && distance <= 120, () -> Arrays.toString(ports));
            }
            assertTrue(a >= 10_000, () -> Arrays.toString(ports));
        }
    }
}
