package io.hadronio.app.grpc.kvs;

import io.grpc.MethodDescriptor;
import io.grpc.ServerServiceDefinition;
import io.grpc.stub.ServerCalls;
import io.hadronio.app.grpc.kvs.KvsProtocol.Reply;
import io.hadronio.app.grpc.kvs.KvsProtocol.Request;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.function.Function;

/**
 * The server's records, in key order (Scan reads a range), and the {@code hadronio.Kvs}
 * service over them. An update of one field rewrites that field's bytes in place of the
 * record's, atomically per key.
 */
public final class KvsStore {
    private final ConcurrentSkipListMap<String, byte[]> records = new ConcurrentSkipListMap<>();

    public int size() {
        return records.size();
    }

    Reply insert(Request r) {
        return new Reply(records.put(r.key(), r.value().clone()) == null, List.of());
    }

    Reply update(Request r) {
        boolean[] found = {false};
        records.computeIfPresent(r.key(), (k, old) -> {
            found[0] = true;
            if (r.field() < 0) {
                return r.value().clone();
            }
            byte[] updated = old.clone();
            int at = r.field() * r.value().length;
            if (at + r.value().length <= updated.length) {
                System.arraycopy(r.value(), 0, updated, at, r.value().length);
            }
            return updated;
        });
        return found[0] ? new Reply(true, List.of()) : Reply.MISSING;
    }

    Reply read(Request r) {
        byte[] v = records.get(r.key());
        return v == null ? Reply.MISSING : new Reply(true, List.of(v));
    }

    Reply delete(Request r) {
        return records.remove(r.key()) == null ? Reply.MISSING : new Reply(true, List.of());
    }

    Reply scan(Request r) {
        List<byte[]> values = new ArrayList<>(Math.max(0, r.count()));
        for (Map.Entry<String, byte[]> e : records.tailMap(r.key(), true).entrySet()) {
            if (values.size() >= r.count()) {
                break;
            }
            values.add(e.getValue());
        }
        return new Reply(!values.isEmpty(), values);
    }

    /** The service; {@code log} sees each call's method and key (null: quiet, for benchmarks). */
    public ServerServiceDefinition definition(java.util.function.BiConsumer<String, Request> log) {
        return ServerServiceDefinition.builder(KvsProtocol.SERVICE)
                .addMethod(KvsProtocol.INSERT, handler(KvsProtocol.INSERT, this::insert, log))
                .addMethod(KvsProtocol.UPDATE, handler(KvsProtocol.UPDATE, this::update, log))
                .addMethod(KvsProtocol.READ, handler(KvsProtocol.READ, this::read, log))
                .addMethod(KvsProtocol.DELETE, handler(KvsProtocol.DELETE, this::delete, log))
                .addMethod(KvsProtocol.SCAN, handler(KvsProtocol.SCAN, this::scan, log))
                .build();
    }

    private static io.grpc.ServerCallHandler<Request, Reply> handler(MethodDescriptor<Request, Reply> method,
            Function<Request, Reply> op, java.util.function.BiConsumer<String, Request> log) {
        String name = method.getBareMethodName();
        return ServerCalls.asyncUnaryCall((request, reply) -> {
            if (log != null) {
                log.accept(name, request);
            }
            reply.onNext(op.apply(request));
            reply.onCompleted();
        });
    }
}
