package dev.openshell.middleware.spi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Optional;
import org.junit.jupiter.api.Test;

class HttpRequestResultTest {
    @Test
    void hasBodyDistinguishesKeepFromEmptyReplacement() {
        assertEquals(Optional.empty(), HttpRequestResult.allow().body());
        assertEquals(Optional.of(Body.empty()),
                HttpRequestResult.builder(Decision.ALLOW).body(Body.empty()).build().body());
    }

    @Test
    void collectionsAreImmutable() {
        HttpRequestResult r = HttpRequestResult.builder(Decision.ALLOW).metadata("k", "v")
                .finding(Finding.of("t", "l", 1)).build();
        assertThrows(UnsupportedOperationException.class, () -> r.metadata().put("x", "y"));
        assertThrows(UnsupportedOperationException.class, () -> r.findings().clear());
    }

    @Test
    void toStringLeaksNoText() {
        String s = HttpRequestResult.builder(Decision.DENY).reason("found sk-secret").reasonCode("secret")
                .metadata("k", "sk-secret").body(Body.ofUtf8("sk-secret")).build().toString();
        assertFalse(s.contains("sk-secret"), s);
    }

    @Test
    void bindingLimits() {
        assertThrows(IllegalArgumentException.class,
                () -> MiddlewareBinding.httpRequest("x", EnvelopeLimits.MAX_BODY_BYTES + 1L));
        assertEquals(EnvelopeLimits.MAX_BODY_BYTES,
                MiddlewareBinding.httpRequest("x", EnvelopeLimits.MAX_BODY_BYTES).maxBodyBytes());
    }
}
