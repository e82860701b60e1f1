package io.hadronio.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;
import java.net.StandardProtocolFamily;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.nio.channels.Pipe;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * hadronio.enabled=false runs on the JDK's channels; a bad property value fails the
 * first NIO use with a message naming the property; channels hadroNIO does not
 * accelerate (DatagramChannel, Pipe) work with the provider enabled.
 */
@Timeout(60)
class ProviderFallbackTest extends ItSupport {

    @Test
    void shouldRunOnTheJdksChannelsWhenDisabled() throws Exception {
        try (ChildJvm child = ChildJvm.withProvider(List.of("-Dhadronio.enabled=false"), "selftest")) {
            assertEquals("io.hadronio.HadronioProvider", child.expect("PROVIDER "));
            assertEquals("sun.nio.ch.SocketChannelImpl", child.expect("CHANNEL "), child::report);
            child.expect("OK");
            assertEquals(0, child.awaitExit(), child::report);
        }
    }

    @Test
    void shouldRunOnHadronioChannelsWhenEnabled() throws Exception {
        try (ChildJvm child = ChildJvm.withProvider("selftest")) {
            // a HadronioSocketChannel, of the subclass FileChannel.transferTo trusts (SocketChannelFactory):
            // java.base let it load in an application JVM started with nothing but the provider property
            assertEquals("io.hadronio.nio.TrustedSocketChannel", child.expect("CHANNEL "), child::report);
            child.expect("OK");
            assertEquals(0, child.awaitExit(), child::report);
        }
    }

    @Test
    void shouldFailTheFirstNioUseNamingABadPropertyValue() throws Exception {
        try (ChildJvm child = ChildJvm.withProvider(List.of("-Dhadronio.slice.count=abc"), "selftest")) {
            String error = child.expect("ERROR ");
            assertTrue(error.contains("hadronio.slice.count") && error.contains("abc"),
                    "the error names the property and its value: " + error);
            assertEquals(3, child.awaitExit(), child::report);
        }
    }

    /** A value only UCX can judge (a typo in the transport list) fails as fast, naming property and value. */
    @Test
    void shouldFailTheFirstNioUseNamingAUcxValueUcxRefuses() throws Exception {
        try (ChildJvm child = ChildJvm.withProvider(List.of("-Dhadronio.ucx.TLS=bogus"), "selftest")) {
            String error = child.expect("ERROR ");
            assertTrue(error.contains("hadronio.ucx.TLS") && error.contains("bogus"),
                    "the error names the property and its value: " + error);
            assertEquals(3, child.awaitExit(), child::report);
        }
    }

    /** A key file that other users can read is refused, naming the property and the file. */
    @Test
    void shouldFailTheFirstNioUseWithAConfiguredKeyOthersCanRead(@org.junit.jupiter.api.io.TempDir
                                                                  java.nio.file.Path dir) throws Exception {
        java.nio.file.Path key = dir.resolve("key");
        java.nio.file.Files.write(key, new byte[32]);
        java.nio.file.Files.setPosixFilePermissions(key,
                java.nio.file.attribute.PosixFilePermissions.fromString("rw-r--r--"));
        try (ChildJvm child = ChildJvm.withProvider(List.of("-Dhadronio.secret.file=" + key), "selftest")) {
            String error = child.expect("ERROR ");
            assertTrue(error.contains("hadronio.secret.file") && error.contains(key.toString()),
                    "the error names the property and the file: " + error);
            assertEquals(3, child.awaitExit(), child::report);
        }
    }

    @Test
    void shouldFailTheFirstNioUseNamingAnUnknownProperty() throws Exception {
        try (ChildJvm child = ChildJvm.withProvider(List.of("-Dhadronio.slice.sise=64k"), "selftest")) {
            String error = child.expect("ERROR ");
            assertTrue(error.contains("hadronio.slice.sise"), "the error names the property: " + error);
            assertEquals(3, child.awaitExit(), child::report);
        }
    }

    @Test
    void shouldOpenWorkingDatagramChannelsWithTheProviderEnabled() throws Exception {
        try (DatagramChannel a = DatagramChannel.open(StandardProtocolFamily.INET);
             DatagramChannel b = DatagramChannel.open()) {
            a.bind(loopback(0));
            b.bind(loopback(0));
            b.send(ByteBuffer.wrap(Data.bytes(0, 1000)), a.getLocalAddress());
            ByteBuffer in = ByteBuffer.allocate(2000);
            InetSocketAddress from = (InetSocketAddress) a.receive(in);
            assertEquals(b.getLocalAddress(), from);
            assertEquals(ByteBuffer.wrap(Data.bytes(0, 1000)), in.flip());
        }
    }

    @Test
    void shouldOpenWorkingPipesWithTheProviderEnabled() throws Exception {
        Pipe pipe = Pipe.open();
        try (Pipe.SinkChannel sink = pipe.sink(); Pipe.SourceChannel source = pipe.source()) {
            ByteBuffer out = ByteBuffer.wrap(Data.bytes(0, 3000));
            while (out.hasRemaining()) {
                sink.write(out);
            }
            sink.close();
            ByteBuffer in = ByteBuffer.allocate(4000);
            while (source.read(in) >= 0) {
                // until end-of-stream
            }
            assertEquals(ByteBuffer.wrap(Data.bytes(0, 3000)), in.flip());
        }
    }
}
