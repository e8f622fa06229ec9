package dev.openshell.supervisor.proxy;

import dev.openshell.middleware.spi.Body;
import java.time.Duration;
import java.util.List;

/**
 * The inspecting response stages of one response, as the proxy drives them ({@link ResponseVerdict.Deliver}): the
 * decoded (and, on a credential-bound host, scrubbed) body goes in piece by piece as the upstream sends it, and what
 * comes out is delivered. Used by the exchange's thread only.
 */
public interface ResponseBody {
    /** {@return whether a whole-body stage still holds: the response head must not be committed yet} */
    boolean holdsHead();

    /** {@return how long the proxy waits for a held body to arrive complete} */
    Duration accumulationDeadline();

    /**
     * Pushes one piece of the body through the stages.
     *
     * @param data the next decoded bytes, possibly empty
     * @param endOfStream whether the body ends with them
     * @return what to deliver now, in order
     * @throws Failure when a {@code fail_closed} stage failed
     */
    List<Body> unit(Body data, boolean endOfStream) throws Failure;

    /**
     * The held body did not arrive within {@link #accumulationDeadline()}.
     *
     * @return what to deliver now
     * @throws Failure when a {@code fail_closed} whole-body stage held it
     */
    List<Body> accumulationTimedOut() throws Failure;

    /**
     * Ends the stages and records what they did. Called once, also after a failure.
     *
     * @param complete whether the response was delivered complete
     */
    void end(boolean complete);

    /** A {@code fail_closed} stage failed: the answer to give when the head is not committed yet. */
    final class Failure extends Exception {
        private static final long serialVersionUID = 1L;
        private final transient Answer answer;

        /** @param answer the platform answer for the client */
        public Failure(Answer answer) {
            super(answer.error(), null, false, false);
            this.answer = answer;
        }

        /** {@return the platform answer} */
        public Answer answer() {
            return answer;
        }
    }
}
