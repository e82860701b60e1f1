package io.hadronio.ucx;

/**
 * UCX cannot be used in this process: the libraries are missing, too old, or the
 * native access the binding needs is not allowed. The message says what to install
 * or change.
 */
public final class UcxUnavailableException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public UcxUnavailableException(String message, Throwable cause) {
        super(message, cause);
    }

    public UcxUnavailableException(String message) {
        super(message);
    }
}
