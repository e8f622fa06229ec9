package dev.openshell.supervisor.proxy.internal;

/**
 * The proxy refuses a request with a JSON error response and closes the connection.
 */
final class Refusal extends Exception {
    private static final long serialVersionUID = 1L;
    private final int status;
    private final String error;

    Refusal(int status, String error, String detail) {
        super(detail, null, false, false);
        this.status = status;
        this.error = error;
    }

    int status() {
        return status;
    }

    String error() {
        return error;
    }

    String detail() {
        return getMessage();
    }
}
