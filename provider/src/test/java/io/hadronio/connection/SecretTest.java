package io.hadronio.connection;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The per-user key: made on first use, private, shared by concurrent first users, refused when exposed. */
// no provider, no connection mode: test.sh's eager pass leaves it out
@Tag("own-properties")
class SecretTest {
    @Test
    void shouldMakeAPrivateKeyOnFirstUse(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("sub").resolve("secret");
        Secret.load(file);
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(file)));
        assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(file.getParent())));
        assertEquals(Secret.LENGTH, Files.size(file));
        byte[] first = Files.readAllBytes(file);
        Secret.load(file);
        assertArrayEquals(first, Files.readAllBytes(file));
    }

    @Test
    void shouldGiveConcurrentFirstUsersOneKey(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("secret");
        ExecutorService pool = Executors.newFixedThreadPool(8);
        try {
            List<Future<byte[]>> macs = new ArrayList<>();
            for (int i = 0; i < 16; i++) {
                macs.add(pool.submit(() -> Secret.load(file).mac(new byte[] {1})));
            }
            byte[] expected = macs.get(0).get();
            for (Future<byte[]> f : macs) {
                assertArrayEquals(expected, f.get());
            }
        } finally {
            pool.shutdown();
        }
        try (var files = Files.list(dir)) {
            assertEquals(1, files.count(), "temporary files left behind");
        }
    }

    @Test
    void shouldRefuseAKeyOthersCanRead(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("secret");
        Secret.load(file);
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-r--r--"));
        IOException e = assertThrows(IOException.class, () -> Secret.load(file));
        assertTrue(e.getMessage().contains(file.toString()), e.getMessage());
    }

    @Test
    void shouldRefuseAShortKey(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("secret");
        Files.write(file, new byte[4]);
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
        assertThrows(IOException.class, () -> Secret.load(file));
    }
}
