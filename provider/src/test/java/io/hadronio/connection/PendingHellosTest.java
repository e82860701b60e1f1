package io.hadronio.connection;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The bound on hellos that wait for their proof, per remote address, without sockets. */
class PendingHellosTest {
    private static InetAddress address(String a) throws Exception {
        return InetAddress.getByName(a);
    }

    @Test
    void shouldAdmitAtMostTheBoundFromOneAddress() throws Exception {
        PendingHellos<String> p = new PendingHellos<>(PendingHellos.MAX_PER_ADDRESS);
        InetAddress a = address("10.0.0.2");
        for (int i = 0; i < PendingHellos.MAX_PER_ADDRESS; i++) {
            assertTrue(p.admit(a, "h" + i), "hello " + i);
        }
        assertFalse(p.admit(a, "one too many"));
        assertEquals(PendingHellos.MAX_PER_ADDRESS, p.size(), "a refused hello is not counted");
        assertFalse(p.from(a).contains("one too many"));
    }

    @Test
    void shouldBoundEachAddressOnItsOwn() throws Exception {
        PendingHellos<String> p = new PendingHellos<>(2);
        InetAddress a = address("10.0.0.2");
        InetAddress b = address("10.0.0.3");
        assertTrue(p.admit(a, "a1"));
        assertTrue(p.admit(a, "a2"));
        assertFalse(p.admit(a, "a3"));
        // another host is not held up by the first one's hellos
        assertTrue(p.admit(b, "b1"));
        assertTrue(p.admit(b, "b2"));
        assertEquals(4, p.size());
        assertEquals(2, p.addresses());
    }

    @Test
    void shouldMakeRoomAsHellosStopWaiting() throws Exception {
        PendingHellos<String> p = new PendingHellos<>(2);
        InetAddress a = address("10.0.0.2");
        assertTrue(p.admit(a, "a1"));
        assertTrue(p.admit(a, "a2"));
        p.release(a, "a1");
        assertEquals(List.of("a2"), p.from(a));
        assertTrue(p.admit(a, "a3"));
        // releasing what was never admitted (a refused hello ends too) changes nothing
        p.release(a, "never admitted");
        p.release(address("10.0.0.9"), "a2");
        assertEquals(2, p.size());
        p.release(a, "a2");
        p.release(a, "a3");
        // nothing is kept for an address once nothing waits from it
        assertEquals(0, p.size());
        assertEquals(0, p.addresses());
        assertEquals(List.of(), p.from(a));
    }

    @Test
    void shouldRefuseANonsenseBound() {
        assertThrows(IllegalArgumentException.class, () -> new PendingHellos<String>(0));
    }
}
