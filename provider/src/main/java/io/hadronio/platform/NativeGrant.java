package io.hadronio.platform;

import java.io.File;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.security.CodeSource;
import java.util.jar.JarFile;
import java.util.zip.ZipEntry;

/**
 * hadroNIO's JNI library ({@code provider/src/main/c/hadronio_grant.c}): one function that calls
 * {@code java.base}'s private {@code Module.implAddExportsToAllUnnamed} (or {@code ...Opens...}),
 * as {@link JniThroughFfm} does through FFM. Why a library of our own for one call: a cold JVM's
 * first FFM downcall bootstraps the foreign linker, ~110-160 ms on one core
 * (docs/benchmarks/connections.md, "The first connection"), and the export sits in front of the
 * JVM's first {@code connect}; {@code System.load} of this library costs about a millisecond. UCX
 * needs FFM anyway, but in the background, once the application's connects pause.
 *
 * <p>The jar carries the library for the architecture it was built on
 * ({@code io/hadronio/native/linux-ARCH/}); it is copied to a directory of its own under
 * {@code java.io.tmpdir} (this user's only), loaded, and deleted at once: a loaded library stays
 * mapped. Everything here avoids what a cold JVM pays for at first use (see the methods). Where it is missing (a build without a C compiler, another
 * architecture) or cannot be loaded (a {@code noexec} temporary directory), {@link #available}
 * says no and the caller takes the FFM route.
 */
final class NativeGrant {
    // (concat, not +: see privateDirectory)
    static final String RESOURCE = "/io/hadronio/native/linux-".concat(System.getProperty("os.arch"))
            .concat("/libhadronio_grant.so");

    // null until the first load attempt; then whether call() is bound
    private static Boolean loaded;
    // why the load failed, for the fallback's message
    private static String failure;

    private NativeGrant() {
    }

    /** Loads the library once; true when {@link #call} can be used. */
    static synchronized boolean available() {
        if (loaded == null) {
            try {
                loaded = load();
            } catch (IOException | LinkageError | SecurityException e) {
                failure = String.valueOf(e);
                loaded = false;
            }
        }
        return loaded;
    }

    /** Why {@link #available} said no (null when it did not). */
    static synchronized String failure() {
        return failure;
    }

    private static boolean load() throws IOException {
        byte[] library = readLibrary();
        if (library == null) {
            failure = "no ".concat(RESOURCE).concat(" in the jar");
            return false;
        }
        File dir = privateDirectory();
        File file = new File(dir, "libhadronio_grant.so");
        try {
            try (FileOutputStream out = new FileOutputStream(file)) {
                out.write(library);
            }
            System.load(file.getPath());
            return true;
        } finally {
            file.delete();
            dir.delete();
        }
    }

    /**
     * The library's bytes from the jar (or classes directory) this class came from, or null.
     * Read with {@link JarFile} rather than {@code getResourceAsStream}: in a cold JVM the
     * latter's URL handlers cost ~19 ms, the former ~1 ms.
     */
    private static byte[] readLibrary() throws IOException {
        CodeSource source = NativeGrant.class.getProtectionDomain().getCodeSource();
        File origin = null;
        try {
            origin = source == null || source.getLocation() == null ? null : new File(source.getLocation().toURI());
        } catch (URISyntaxException | IllegalArgumentException e) {
            // not a file: ask the class loader below
        }
        String entry = RESOURCE.substring(1);
        if (origin != null && origin.isFile()) {
            try (JarFile jar = new JarFile(origin)) {
                ZipEntry e = jar.getEntry(entry);
                if (e == null) {
                    return null;
                }
                try (InputStream in = jar.getInputStream(e)) {
                    return in.readAllBytes();
                }
            }
        }
        if (origin != null && origin.isDirectory()) {
            File f = new File(origin, entry);
            return f.isFile() ? Files.readAllBytes(f.toPath()) : null;
        }
        try (InputStream in = NativeGrant.class.getResourceAsStream(RESOURCE)) {
            return in == null ? null : in.readAllBytes();
        }
    }

    /**
     * A new directory under {@code java.io.tmpdir} that only this user may enter. {@code mkdir}
     * fails on a name that exists (another's, made to catch ours), and we try another; until
     * its mode is narrowed, nobody else may write into it (the umask never grants that to
     * others), and we write nothing into it before. Not {@code Files.createTempDirectory}: its
     * first use initialises {@code SecureRandom} and the JCA providers, ~20 ms of a cold JVM's
     * first connect; nor string concatenation, whose first use links its bootstrap (~10 ms).
     */
    private static File privateDirectory() throws IOException {
        File tmp = new File(System.getProperty("java.io.tmpdir"));
        for (int attempt = 0; attempt < 8; attempt++) {
            File dir = new File(tmp, new StringBuilder("hadronio-jni-").append(Long.toHexString(System.nanoTime()))
                    .append('-').append(attempt).toString());
            if (dir.mkdir()) {
                if (dir.setReadable(false, false) && dir.setWritable(false, false) && dir.setExecutable(false, false)
                        && dir.setReadable(true, true) && dir.setWritable(true, true) && dir.setExecutable(true, true)) {
                    return dir;
                }
                dir.delete();
                throw new IOException(new StringBuilder("cannot restrict ").append(dir).toString());
            }
        }
        throw new IOException(new StringBuilder("cannot make a directory in ").append(tmp).toString());
    }

    /**
     * Calls {@code module.<method>(pkg)}, a method of {@link Module} taking a String, whatever its
     * access; throws what it throws ({@code NoSuchMethodError} when there is none).
     */
    static native void call(Module module, String method, String pkg);
}
