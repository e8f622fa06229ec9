package dev.openshell.middleware.spi;

import static org.apiguardian.api.API.Status.EXPERIMENTAL;

import org.apiguardian.api.API;

/**
 * One stage's session over one HTTP response (wire {@code HttpResponsePreReturn.Evaluate}: one stream per stage and
 * response): {@link #preflight} once, then, for an inspecting stage with a body mode, {@link #body} for each unit in
 * lockstep (the next unit is sent only after the previous result passed validation), then at most one {@link #end}.
 *
 * <p>Made by {@link MiddlewareProvider#openResponse} per response; used by one thread at a time. The host enforces
 * the stage's timeout on every call; a {@link RuntimeException} is a stage failure handled by {@code on_error}.
 */
@API(status = EXPERIMENTAL, since = "0.2")
public interface HttpResponseStage {
    /**
     * Decides on the response head.
     *
     * @param preflight the head as this stage sees it
     * @return skip, inspect or block delivery; never {@code null}
     */
    @API(status = EXPERIMENTAL, since = "0.2")
    HttpResponsePreflightDecision preflight(HttpResponsePreflight preflight);

    /**
     * Answers one body unit. The default passes every unit through.
     *
     * @param unit the unit
     * @return the result for exactly this unit; never {@code null}
     */
    @API(status = EXPERIMENTAL, since = "0.2")
    default HttpResponseBodyResult body(HttpResponseBodyUnit unit) {
        return HttpResponseBodyResult.passThrough(unit.sequence());
    }

    /**
     * Best-effort notification that the session ends; it answers nothing. The default does nothing.
     *
     * @param reason why
     */
    @API(status = EXPERIMENTAL, since = "0.2")
    default void end(SessionEndReason reason) {
    }
}
