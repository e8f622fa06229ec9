package dev.openshell.supervisor.engine.chain;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.openshell.middleware.spi.Body;
import dev.openshell.middleware.spi.HttpHeader;
import java.util.List;
import org.junit.jupiter.api.Test;

class ChainRequestTest {
    @Test
    void namesAreLowercasedAndOrderKept() {
        ChainRequest r = Stages.request(List.of(new HttpHeader("X-B", "1"), new HttpHeader("Connection", "X-B"),
                new HttpHeader("x-a", "2")), Body.empty());
        assertEquals(List.of(new HttpHeader("x-b", "1"), new HttpHeader("connection", "X-B"),
                new HttpHeader("x-a", "2")), r.headers());
        assertEquals(List.of("x-b"), List.copyOf(r.connectionNominated()));
    }

    @Test
    void malformedHeadersAreRefusedWithoutTheirValue() {
        assertThrows(IllegalArgumentException.class,
                () -> Stages.request(List.of(new HttpHeader("bad name", "v")), Body.empty()));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Stages.request(List.of(new HttpHeader("x-a", "secret\r\ninjected")), Body.empty()));
        assertFalse(e.getMessage().contains("secret"), e.getMessage());
    }

    @Test
    void printingShowsNoHeaderValueOrBody() {
        String printed = Stages.request(List.of(new HttpHeader("authorization", "Bearer tok")),
                Body.ofUtf8("body-text")).toString();
        assertFalse(printed.contains("tok") || printed.contains("body-text"), printed);
    }
}
