package io.hadronio.app.doctor;

/**
 * One finding of {@code hadronio doctor}: what was checked, how it stands, what was found, and
 * the fix (empty when OK).
 *
 * @param name   a stable name ({@code ucx}, {@code key-file}, ...)
 * @param status OK, WARN or FAIL
 * @param detail what was found
 * @param fix    what to do about it; empty when OK
 */
public record Check(String name, Status status, String detail, String fix) {
    /** How a check stands; the command's exit status is the worst one's {@link #exitCode()}. */
    public enum Status {
        OK, WARN, FAIL;

        /** 0, 1 or 2. */
        public int exitCode() {
            return ordinal();
        }
    }

    static Check ok(String name, String detail) {
        return new Check(name, Status.OK, detail, "");
    }

    static Check warn(String name, String detail, String fix) {
        return new Check(name, Status.WARN, detail, fix);
    }

    static Check fail(String name, String detail, String fix) {
        return new Check(name, Status.FAIL, detail, fix);
    }
}
