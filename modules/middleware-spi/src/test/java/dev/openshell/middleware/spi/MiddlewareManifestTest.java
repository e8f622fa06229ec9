package dev.openshell.middleware.spi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The one sharing rule for binding IDs: unique per operation and phase. */
class MiddlewareManifestTest {
    private static final BindingId ID = new BindingId("acme/guard");

    private static MiddlewareBinding message(Phase phase) {
        return new MiddlewareBinding(ID, Operation.WEBSOCKET_MESSAGE, phase, 1024, Optional.empty());
    }

    @Test
    void oneIdCarriesARequestAResponseAndBothMessageDirections() {
        MiddlewareManifest m = new MiddlewareManifest("guard", "1", List.of(
                MiddlewareBinding.httpRequest(ID.value(), 1024), MiddlewareBinding.httpResponse(ID.value(), 1024),
                message(Phase.PRE_CREDENTIALS), message(Phase.PRE_RETURN)));
        assertEquals(4, m.bindings().size());
    }

    @Test
    void anIdTwiceForOneOperationAndPhaseIsRefused() {
        for (List<MiddlewareBinding> twice : List.of(
                List.of(MiddlewareBinding.httpRequest(ID.value(), 1024), MiddlewareBinding.httpRequest(ID.value(), 8)),
                List.of(MiddlewareBinding.httpResponse(ID.value(), 1024),
                        MiddlewareBinding.httpResponse(ID.value(), 8)),
                List.of(message(Phase.PRE_RETURN), message(Phase.PRE_RETURN)))) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> new MiddlewareManifest("guard", "1", twice));
            assertEquals("manifest 'guard' declares a binding ID twice for one operation and phase", e.getMessage());
        }
    }
}
