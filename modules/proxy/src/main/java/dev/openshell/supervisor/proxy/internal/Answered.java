package dev.openshell.supervisor.proxy.internal;

/**
 * A step of the {@link Pipeline} answered the client itself (a refusal, or a local answer): the exchange ends there.
 * Thrown after the answer was sent; the pipeline's driver catches it and returns whether the connection stays open.
 */
final class Answered extends Exception {
    private static final long serialVersionUID = 1L;
    private final boolean keepAlive;

    /** @param keepAlive whether the client connection stays open after the answer */
    Answered(boolean keepAlive) {
        super(null, null, false, false);
        this.keepAlive = keepAlive;
    }

    boolean keepAlive() {
        return keepAlive;
    }
}
