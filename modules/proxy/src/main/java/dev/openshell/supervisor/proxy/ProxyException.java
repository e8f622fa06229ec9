package dev.openshell.supervisor.proxy;

/**
 * The proxy could not start: the listen address is taken, the CA state cannot be read or written, or a trust file is
 * unreadable. The message names the address or file and is safe to show an operator.
 */
public class ProxyException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param message a safe message naming the address or file
     */
    public ProxyException(String message) {
        super(message);
    }

    /**
     * Creates the exception.
     *
     * @param message a safe message
     * @param cause the cause
     */
    public ProxyException(String message, Throwable cause) {
        super(message, cause);
    }
}
