package io.hadronio.app.grpc.kvs;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hadronio.app.grpc.kvs.KvsProtocol.Request;
import java.io.ByteArrayInputStream;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The store's operations and the protocol's encoding, without a server. */
class KvsStoreTest {
    @Test
    void shouldInsertUpdateFieldsReadScanAndDelete() {
        KvsStore store = new KvsStore();
        assertTrue(store.insert(new Request("b", new byte[] {1, 1, 2, 2}, -1, 0)).found());
        assertFalse(store.insert(new Request("b", new byte[] {1, 1, 2, 2}, -1, 0)).found(), "not new");
        assertTrue(store.insert(new Request("a", new byte[] {9}, -1, 0)).found());
        // field 1 of 2-byte fields: bytes 2..3
        assertTrue(store.update(new Request("b", new byte[] {7, 7}, 1, 0)).found());
        assertArrayEquals(new byte[] {1, 1, 7, 7}, store.read(Request.of("b")).values().getFirst());
        assertFalse(store.update(new Request("zz", new byte[] {7}, -1, 0)).found());
        assertEquals(List.of(9, 1), store.scan(new Request("a", new byte[0], -1, 5)).values().stream()
                .map(v -> (int) v[0]).toList());
        assertEquals(1, store.scan(new Request("a", new byte[0], -1, 1)).values().size());
        assertTrue(store.delete(Request.of("a")).found());
        assertFalse(store.read(Request.of("a")).found());
        assertEquals(1, store.size());
    }

    @Test
    void requestsAndRepliesShouldSurviveTheirEncoding() throws Exception {
        Request r = new Request("user42", new byte[] {1, 2, 3}, 4, 5);
        Request back = KvsProtocol.REQUEST.parse(KvsProtocol.REQUEST.stream(r));
        assertEquals(r.key(), back.key());
        assertArrayEquals(r.value(), back.value());
        assertEquals(4, back.field());
        assertEquals(5, back.count());
        KvsProtocol.Reply reply = new KvsProtocol.Reply(true, List.of(new byte[] {1}, new byte[0]));
        KvsProtocol.Reply parsed = KvsProtocol.REPLY.parse(new ByteArrayInputStream(
                KvsProtocol.REPLY.stream(reply).readAllBytes()));
        assertTrue(parsed.found());
        assertEquals(2, parsed.values().size());
        assertArrayEquals(new byte[] {1}, parsed.values().getFirst());
    }
}
