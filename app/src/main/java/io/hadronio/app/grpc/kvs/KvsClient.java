package io.hadronio.app.grpc.kvs;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.MethodDescriptor;
import io.grpc.stub.ClientCalls;
import io.hadronio.app.grpc.kvs.KvsProtocol.Reply;
import io.hadronio.app.grpc.kvs.KvsProtocol.Request;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Blocking calls of the {@code hadronio.Kvs} service over one gRPC channel (thread-safe). */
public final class KvsClient {
    private final Channel channel;

    public KvsClient(Channel channel) {
        this.channel = channel;
    }

    private Reply call(MethodDescriptor<Request, Reply> method, Request request) {
        return ClientCalls.blockingUnaryCall(channel, method,
                CallOptions.DEFAULT.withDeadlineAfter(30, TimeUnit.SECONDS), request);
    }

    /** True when the key was new. */
    public boolean insert(String key, byte[] record) {
        return call(KvsProtocol.INSERT, new Request(key, record, -1, 0)).found();
    }

    /** Replaces field {@code field} (or, with -1, the whole record); false when the key is missing. */
    public boolean update(String key, int field, byte[] value) {
        return call(KvsProtocol.UPDATE, new Request(key, value, field, 0)).found();
    }

    /** The record, or null. */
    public byte[] read(String key) {
        Reply r = call(KvsProtocol.READ, Request.of(key));
        return r.found() ? r.values().getFirst() : null;
    }

    public boolean delete(String key) {
        return call(KvsProtocol.DELETE, Request.of(key)).found();
    }

    /** Up to {@code count} records from {@code key} on, in key order. */
    public List<byte[]> scan(String key, int count) {
        return call(KvsProtocol.SCAN, new Request(key, new byte[0], -1, count)).values();
    }
}
