package dev.openshell.middleware.spi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Optional;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;

/** The one header classification (issue 14, item 3): each column as RFC 9110 and RFC 0009 say. */
class HeaderTableTest {
    @Test
    void hopByHopOnForwardingIsRfc9110sListPlusTheProxyFieldsAndExpect() {
        for (String n : List.of("connection", "proxy-connection", "keep-alive", "te", "trailer", "upgrade",
                "proxy-authorization", "proxy-authenticate", "expect")) {
            assertTrue(HeaderTable.hopByHop(n), n);
        }
        for (String n : List.of("authorization", "cookie", "host", "content-length", "transfer-encoding",
                "x-amz-date", "x-openshell-credential-x", "accept", "set-cookie")) {
            assertFalse(HeaderTable.hopByHop(n), n);
        }
    }

    @Test
    void proxyAuthorizationIsBothACredentialHiddenFromMiddlewareAndHopByHop() {
        HeaderTable.Row r = HeaderTable.row("proxy-authorization").orElseThrow();
        assertEquals(HeaderTable.Kind.CREDENTIAL, r.kind());
        assertTrue(r.hiddenFromMiddleware() && r.protectedFromMutation() && r.hopByHop());
    }

    @Test
    void prefixesCoverTheirFamilyAndDeliberateOmissionsStayOut() {
        assertEquals(HeaderTable.Kind.CREDENTIAL, HeaderTable.row("x-amz-security-token").orElseThrow().kind());
        assertEquals(HeaderTable.Kind.CREDENTIAL, HeaderTable.row("x-openshell-credential").orElseThrow().kind());
        for (String n : List.of("set-cookie", "x-api-key", "api-key", "x-amzn-trace-id", "x-openshell-middleware-x")) {
            assertEquals(Optional.empty(), HeaderTable.row(n), n);
            assertFalse(HeaderTable.hiddenFromMiddleware(n) || HeaderTable.protectedFromMutation(n), n);
        }
    }

    @Test
    void expectIsVisibleToMiddlewareButNeverForwarded() {
        assertFalse(HeaderTable.hiddenFromMiddleware("expect"));
        assertFalse(HeaderTable.protectedFromMutation("expect"));
        assertTrue(HeaderTable.hopByHop("expect"));
    }

    @Test
    void onlyRoutingAndFramingFieldsCannotBeConnectionNominated() {
        assertTrue(HeaderTable.routingOrFraming("host"));
        assertTrue(HeaderTable.routingOrFraming("content-length"));
        assertTrue(HeaderTable.routingOrFraming("transfer-encoding"));
        assertFalse(HeaderTable.routingOrFraming("authorization"));
        assertFalse(HeaderTable.routingOrFraming("upgrade"));
        assertTrue(HeaderTable.framing("content-length") && !HeaderTable.framing("host"));
    }

    @Test
    void everyHiddenOrProtectedRowIsBoth() {
        for (HeaderTable.Row r : HeaderTable.ROWS) {
            assertEquals(r.hiddenFromMiddleware(), r.protectedFromMutation(), r.name());
            assertEquals(r.name(), r.name().toLowerCase(java.util.Locale.ROOT));
        }
    }

    /** A protected name (a row, or the middleware namespace) spelt with some '-' as '_' always shadows it. */
    @Property
    void underscoreSpellingsOfProtectedNamesShadowThem(@ForAll("underscored") String name) {
        assertTrue(HeaderTable.underscoreShadowsProtected(name), name);
    }

    @Provide
    Arbitrary<String> underscored() {
        Arbitrary<String> base = Arbitraries.of("transfer-encoding", "content-length", "proxy-authorization",
                "proxy-connection", "keep-alive", "x-amz-date", "x-openshell-middleware-tag",
                "x-openshell-credential-id", "proxy-authenticate");
        return Combinators.combine(base, Arbitraries.longs()).as((n, bits) -> {
            StringBuilder b = new StringBuilder(n);
            int k = 0;
            boolean any = false;
            for (int i = 0; i < b.length(); i++) {
                if (b.charAt(i) == '-' && ((bits >>> (k++ % 64)) & 1) == 1) {
                    b.setCharAt(i, '_');
                    any = true;
                }
            }
            if (!any) {
                b.setCharAt(n.indexOf('-'), '_');
            }
            return b.toString();
        });
    }

    @Property
    void namesWithoutUnderscoresNeverShadow(@ForAll("names") String name) {
        assertFalse(HeaderTable.underscoreShadowsProtected(name), name);
    }

    @Provide
    Arbitrary<String> names() {
        return Arbitraries.strings().withChars("abcdefghijklmnopqrstuvwxyz-0123456789").ofMinLength(1).ofMaxLength(30)
                .edgeCases(c -> c.add("transfer-encoding").add("host").add("x-openshell-middleware-a"));
    }

    @Test
    void ordinaryUnderscoreNamesDoNotShadow() {
        for (String n : List.of("x_request_id", "host_", "connection_", "my_transfer_encoding", "content_type")) {
            assertFalse(HeaderTable.underscoreShadowsProtected(n), n);
        }
    }

    /** The lookup (a hash probe, then the prefixes) answers as the first matching row of {@link HeaderTable#ROWS}. */
    @Property(tries = 500)
    void theLookupIsTheFirstMatchingRowInTableOrder(@ForAll("tableNames") String lower) {
        Optional<HeaderTable.Row> scan = HeaderTable.ROWS.stream().filter(r -> r.matches(lower)).findFirst();
        assertEquals(scan, HeaderTable.row(lower), lower);
    }

    @Provide
    Arbitrary<String> tableNames() {
        Arbitrary<String> rowNames = Arbitraries.of(HeaderTable.ROWS.stream().map(HeaderTable.Row::name).toList());
        Arbitrary<String> tails = Arbitraries.strings().withChars("abcz-_0").ofMaxLength(6);
        return Arbitraries.oneOf(rowNames, Combinators.combine(rowNames, tails).as(String::concat),
                Combinators.combine(tails, rowNames).as(String::concat), tails);
    }
}
