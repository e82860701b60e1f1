package io.hadronio.app.grpc.kvs;

import io.grpc.MethodDescriptor;
import io.hadronio.app.grpc.Marshallers;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;

/**
 * The key-value service {@code hadronio.Kvs}, defined by hand (no protoc): unary calls
 * {@code Insert}, {@code Update}, {@code Read}, {@code Delete} and {@code Scan}, each taking a
 * {@link Request} and answering a {@link Reply}, in a small binary encoding.
 */
public final class KvsProtocol {
    public static final String SERVICE = "hadronio.Kvs";

    /**
     * A call's argument: the key; the value to store (Insert: the whole record; Update: the new
     * bytes of field {@code field}, or the whole record when {@code field} is -1); Scan: how many
     * records from {@code key} on ({@code count}).
     */
    public record Request(String key, byte[] value, int field, int count) {
        public static Request of(String key) {
            return new Request(key, new byte[0], -1, 0);
        }
    }

    /** A call's answer: whether the key was there (Insert: whether it was new), and the records read. */
    public record Reply(boolean found, List<byte[]> values) {
        static final Reply MISSING = new Reply(false, List.of());
    }

    static final MethodDescriptor.Marshaller<Request> REQUEST = new MethodDescriptor.Marshaller<>() {
        @Override
        public InputStream stream(Request r) {
            return encode(out -> {
                out.writeUTF(r.key());
                out.writeInt(r.field());
                out.writeInt(r.count());
                out.writeInt(r.value().length);
                out.write(r.value());
            });
        }

        @Override
        public Request parse(InputStream stream) {
            try (DataInputStream in = new DataInputStream(stream)) {
                String key = in.readUTF();
                int field = in.readInt();
                int count = in.readInt();
                return new Request(key, in.readNBytes(in.readInt()), field, count);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    };

    static final MethodDescriptor.Marshaller<Reply> REPLY = new MethodDescriptor.Marshaller<>() {
        @Override
        public InputStream stream(Reply r) {
            return encode(out -> {
                out.writeBoolean(r.found());
                out.writeInt(r.values().size());
                for (byte[] v : r.values()) {
                    out.writeInt(v.length);
                    out.write(v);
                }
            });
        }

        @Override
        public Reply parse(InputStream stream) {
            try (DataInputStream in = new DataInputStream(stream)) {
                boolean found = in.readBoolean();
                int n = in.readInt();
                List<byte[]> values = new ArrayList<>(n);
                for (int i = 0; i < n; i++) {
                    values.add(in.readNBytes(in.readInt()));
                }
                return new Reply(found, values);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    };

    public static final MethodDescriptor<Request, Reply> INSERT = method("Insert");
    public static final MethodDescriptor<Request, Reply> UPDATE = method("Update");
    public static final MethodDescriptor<Request, Reply> READ = method("Read");
    public static final MethodDescriptor<Request, Reply> DELETE = method("Delete");
    public static final MethodDescriptor<Request, Reply> SCAN = method("Scan");

    private KvsProtocol() {
    }

    private static MethodDescriptor<Request, Reply> method(String name) {
        return MethodDescriptor.<Request, Reply>newBuilder()
                .setType(MethodDescriptor.MethodType.UNARY)
                .setFullMethodName(MethodDescriptor.generateFullMethodName(SERVICE, name))
                .setRequestMarshaller(REQUEST)
                .setResponseMarshaller(REPLY)
                .build();
    }

    private interface Encoder {
        void write(DataOutputStream out) throws IOException;
    }

    private static InputStream encode(Encoder encoder) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            encoder.write(out);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return Marshallers.BYTES.stream(bytes.toByteArray());
    }
}
