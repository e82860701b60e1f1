package io.hadronio.connection;

import java.io.IOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.util.Set;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The key that peers prove they know before either side trusts the other with a UCX
 * worker address: HMAC-SHA256 over the handshake's messages.
 *
 * <p>By default it is per user on one host: {@code ~/.hadronio/secret}, 32 random bytes
 * made on first use in a file that only its owner may read (a directory of mode 0700,
 * a file of mode 0600). Processes of one user share it and accelerate each other;
 * other users cannot read it, so their processes get plain TCP. Across hosts (or
 * users), give every process the same file with {@code hadronio.secret.file}. A file
 * that others may read or write is refused: a key anyone can read authenticates nobody.
 */
public final class Secret {
    static final int LENGTH = 32;
    private static final Set<PosixFilePermission> OWNER_ONLY = PosixFilePermissions.fromString("rw-------");

    private final SecretKeySpec key;
    // one Mac per thread, initialised with the key once: Mac.getInstance and init at every call
    // looked the algorithm up in the JCA providers and derived the HMAC pads again, a few KB of
    // garbage per call and several calls per handshake (1,000 connections: MBs left in the
    // young generation); doFinal leaves a Mac ready for the next message under the same key
    private final ThreadLocal<Mac> macs = ThreadLocal.withInitial(this::newMac);

    private Secret(byte[] bytes) {
        this.key = new SecretKeySpec(bytes, "HmacSHA256");
    }

    /** A key from bytes (tests). */
    public static Secret of(byte[] bytes) {
        if (bytes.length < 16) {
            throw new IllegalArgumentException("a secret needs at least 16 bytes");
        }
        return new Secret(bytes.clone());
    }

    /**
     * Reads the key from {@code file}, making it first if it does not exist.
     *
     * @throws IOException naming the file when it cannot be read or made, or when users
     *                     other than its owner may read or change it
     */
    public static Secret load(Path file) throws IOException {
        if (!Files.exists(file, LinkOption.NOFOLLOW_LINKS)) {
            create(file);
        }
        checkPrivate(file);
        byte[] bytes = Files.readAllBytes(file);
        for (int attempt = 0; bytes.length < LENGTH && attempt < 100; attempt++) {
            // another process made it a moment ago and is still writing it
            try {
                Thread.sleep(10);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
            bytes = Files.readAllBytes(file);
        }
        if (bytes.length < 16) {
            throw new IOException("hadroNIO secret " + file + " holds " + bytes.length
                    + " bytes; at least 16 are needed (delete it to have a new one made)");
        }
        return new Secret(bytes);
    }

    private static void create(Path file) throws IOException {
        Path dir = file.toAbsolutePath().getParent();
        if (dir != null && !Files.isDirectory(dir)) {
            try {
                Files.createDirectories(dir, PosixFilePermissions.asFileAttribute(
                        PosixFilePermissions.fromString("rwx------")));
            } catch (FileAlreadyExistsException e) {
                // made concurrently
            }
        }
        byte[] bytes = new byte[LENGTH];
        new SecureRandom().nextBytes(bytes);
        // write a private temporary file, then link it into place: a concurrent reader never
        // sees a partial key, and of two processes making it at once exactly one wins
        Path tmp = Files.createTempFile(dir, ".secret", ".tmp", PosixFilePermissions.asFileAttribute(OWNER_ONLY));
        try {
            Files.write(tmp, bytes, StandardOpenOption.WRITE);
            try {
                Files.createLink(file, tmp);
            } catch (FileAlreadyExistsException e) {
                // another process made it first: use theirs
            } catch (UnsupportedOperationException e) {
                Files.move(tmp, file);
            }
        } finally {
            Files.deleteIfExists(tmp);
        }
    }

    private static void checkPrivate(Path file) throws IOException {
        Set<PosixFilePermission> perms = Files.getPosixFilePermissions(file);
        for (PosixFilePermission p : perms) {
            if (p.name().startsWith("GROUP") || p.name().startsWith("OTHERS")) {
                throw new IOException("hadroNIO secret " + file + " is accessible to other users (mode "
                        + PosixFilePermissions.toString(perms) + "); make it rw------- (chmod 600)");
            }
        }
        String owner = Files.getOwner(file).getName();
        String me = System.getProperty("user.name");
        if (me != null && !owner.equals(me)) {
            throw new IOException("hadroNIO secret " + file + " belongs to " + owner + ", not to " + me);
        }
    }

    /** HMAC-SHA256 of the parts, in order, under this key. */
    public byte[] mac(byte[]... parts) {
        Mac mac = macs.get();
        for (byte[] part : parts) {
            mac.update(part);
        }
        return mac.doFinal();
    }

    private Mac newMac() {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(key);
            return mac;
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256", e);
        }
    }

    /** Constant-time comparison of a received MAC with the expected one. */
    public static boolean matches(byte[] expected, byte[] received) {
        return java.security.MessageDigest.isEqual(expected, received);
    }
}
