package dev.openshell.supervisor.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Optional;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class HostPatternTest {
    @ParameterizedTest
    @CsvSource(delimiter = '|', quoteCharacter = '"', textBlock = """
            ""                            | it is empty
            api .example.com              | it contains whitespace
            "api.example.com\t"           | it contains whitespace
            *.{prod,staging}.example.com  | brace alternates are not supported: list each alternative as its own pattern
            api[12].example.com           | character classes ('[...]') are not supported: list each alternative as its own pattern (write IPv6 addresses without brackets)
            [::1]                         | character classes ('[...]') are not supported: list each alternative as its own pattern (write IPv6 addresses without brackets)
            api,example.com               | it contains ',', which cannot appear in a host name
            api/v1.example.com            | it has a path or fragment ('/' or '#'): write the host name only
            api.example.com#x             | it has a path or fragment ('/' or '#'): write the host name only
            https://api.example.com       | it has a scheme ('https://'): write the host name only
            user@api.example.com          | it has userinfo (text before '@'): write the host name only
            api.example.com:443           | it has a port (':443'): host patterns match the host name without its port, so this one would match no host; give the port in the endpoint's port or ports (a ':' appears in a host pattern only in an IPv6 address, written without brackets)
            api.example.com:*             | it has a port (':*'): host patterns match the host name without its port, so this one would match no host; give the port in the endpoint's port or ports (a ':' appears in a host pattern only in an IPv6 address, written without brackets)
            *.example.com:8080            | it has a port (':8080'): host patterns match the host name without its port, so this one would match no host; give the port in the endpoint's port or ports (a ':' appears in a host pattern only in an IPv6 address, written without brackets)
            api:t::1                      | it has a port (':1'): host patterns match the host name without its port, so this one would match no host; give the port in the endpoint's port or ports (a ':' appears in a host pattern only in an IPv6 address, written without brackets)
            bücher.example                | it contains the non-ASCII character 'ü': write internationalised names in their ASCII ('xn--') form
            .example.com                  | it has an empty DNS label (a leading, trailing or doubled '.')
            api.example.com.              | it has an empty DNS label (a leading, trailing or doubled '.')
            api..example.com              | it has an empty DNS label (a leading, trailing or doubled '.')
            api**.example.com             | '**' must be a whole DNS label, as in '**.example.com'
            ***.example.com               | '**' must be a whole DNS label, as in '**.example.com'
            """)
    void invalidPatternsSayWhy(String pattern, String reason) {
        assertEquals(reason, HostPattern.problem(pattern));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> HostPattern.parse(pattern));
        assertEquals("invalid host pattern '" + pattern.replace("\t", "\\u0009") + "': " + reason, e.getMessage());
    }

    @ParameterizedTest
    @CsvSource({"::1", "fe80::*", "2001:DB8::?", "::ffff:10.0.0.1", "*::1"})
    void ipv6ShapedPatternsKeepTheirColons(String pattern) {
        assertNull(HostPattern.problem(pattern));
    }

    @Test
    void lengthLimitsAreThoseOfDns() {
        String label63 = "a".repeat(63);
        assertNull(HostPattern.problem(label63 + ".com"));
        assertEquals("DNS label '" + "a".repeat(64) + "' is longer than 63 characters",
                HostPattern.problem("a".repeat(64) + ".com"));
        String longest = (label63 + ".").repeat(3) + "a".repeat(61); // 253 characters
        assertEquals(253, longest.length());
        assertNull(HostPattern.problem(longest));
        assertEquals("it is longer than 253 characters", HostPattern.problem(longest + "a"));
    }

    @Test
    void controlCharactersAreEscapedInMessages() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> HostPattern.parse("a\u001b.com"));
        assertEquals("invalid host pattern 'a\\u001B.com': it contains U+001B, which cannot appear in a host name",
                e.getMessage());
    }

    @Test
    void patternsAreComparedInLowercase() {
        HostPattern p = HostPattern.parse("*.Example.COM");
        assertEquals("*.example.com", p.source());
        assertEquals(HostPattern.parse("*.example.com"), p);
        assertEquals(HostPattern.parse("*.example.com").hashCode(), p.hashCode());
        assertEquals("*.example.com", p.toString());
    }

    @Test
    void literalPatternsHaveNoWildcard() {
        assertTrue(HostPattern.parse("api.example.com").isLiteral());
        assertTrue(HostPattern.parse("127.0.0.1").isLiteral());
        assertTrue(HostPattern.parse("::1").isLiteral());
        assertFalse(HostPattern.parse("a?i.example.com").isLiteral());
        assertFalse(HostPattern.parse("*-api.example.com").isLiteral());
        assertFalse(HostPattern.parse("**.example.com").isLiteral());
    }

    @Test
    void intraLabelWildcards() {
        HostPattern p = HostPattern.parse("*-api.example.com");
        assertTrue(p.matches("tenant-api.example.com"));
        assertTrue(p.matches("-api.example.com"), "'*' inside a label may match nothing");
        assertFalse(p.matches("tenant.x-api.example.com"));
        assertTrue(HostPattern.parse("a*b*c.x").matches("aXbYYc.x"));
        assertFalse(HostPattern.parse("a*b*c.x").matches("aXcYYb.x"));
        assertTrue(HostPattern.parse("?.x").matches("q.x"));
        assertFalse(HostPattern.parse("?.x").matches("qq.x"));
        assertTrue(HostPattern.parse("*").matches("localhost"));
        assertFalse(HostPattern.parse("*").matches(""));
    }

    @Test
    void hostsWithEmptyLabelsNeverMatch() {
        for (String host : List.of("", ".", "api.example.com.", ".api.example.com", "api..example.com")) {
            assertFalse(HostPattern.parse("**").matches(host), host);
            assertFalse(HostPattern.parse("*.example.com").matches(host), host);
        }
    }

    @Test
    void canonicalHostRemovesOneTrailingDotAndLowercasesAscii() {
        assertEquals("api.example.com", HostPattern.canonicalHost("API.Example.COM."));
        assertEquals("api.example.com.", HostPattern.canonicalHost("api.example.com.."),
                "only one dot is the absolute form; the rest stays unmatchable");
        assertEquals(".", HostPattern.canonicalHost("."));
        assertEquals("straße.de", HostPattern.canonicalHost("STRAßE.de"), "only ASCII letters change");
        assertTrue(HostPattern.parse("**").matches(HostPattern.canonicalHost("api.example.com.")));
        assertFalse(HostPattern.parse("**").matches(HostPattern.canonicalHost("api.example.com..")));
    }

    @Test
    void overlapExamples() {
        assertOverlap("*.example.com", "api.example.com", "api.example.com");
        assertOverlap("**.example.com", "deep.api.example.com", "deep.api.example.com");
        assertOverlap("**.example.com", "*.api.example.com", "a.api.example.com");
        assertOverlap("a*", "*b", "ab");
        assertOverlap("a*b*a.x", "*bab*.x", null);
        assertDisjoint("*.example.com", "deep.api.example.com");
        assertDisjoint("*.example.com", "*.other.com");
        assertDisjoint("**.example.com", "example.com");
        assertDisjoint("a*", "b*");
        assertDisjoint("?", "??");
        assertDisjoint("*.*", "*");
    }

    private static void assertOverlap(String a, String b, String expectedWitness) {
        HostPattern pa = HostPattern.parse(a);
        HostPattern pb = HostPattern.parse(b);
        Optional<String> shared = pa.sharedHost(pb);
        assertTrue(shared.isPresent(), a + " / " + b);
        assertTrue(pa.matches(shared.get()) && pb.matches(shared.get()), shared.get());
        if (expectedWitness != null) {
            assertEquals(expectedWitness, shared.get());
        }
        assertTrue(pb.overlaps(pa));
    }

    private static void assertDisjoint(String a, String b) {
        assertFalse(HostPattern.parse(a).overlaps(HostPattern.parse(b)), a + " / " + b);
        assertFalse(HostPattern.parse(b).overlaps(HostPattern.parse(a)), b + " / " + a);
    }

    @Test
    void selectorExclusionsAreHonouredExactly() {
        HostSelector selector = HostSelector.of(List.of("*.example.com"), List.of("api.example.com"));
        assertEquals(Optional.empty(), selector.sharedHost(HostPattern.parse("api.example.com")));
        assertEquals(Optional.of("a.example.com"), selector.sharedHost(HostPattern.parse("*.example.com")));

        HostSelector cdn = HostSelector.of(List.of("**.example.com"), List.of("**.cdn.example.com"));
        assertEquals(Optional.empty(), cdn.sharedHost(HostPattern.parse("*.cdn.example.com")),
                "an exclusion that covers the whole candidate removes the conflict");
        assertEquals(Optional.of("dn.example.com"), cdn.sharedHost(HostPattern.parse("*dn.example.com")),
                "'*' may match nothing, and dn.example.com is not under cdn.example.com");

        HostSelector twoExcludes = HostSelector.of(List.of("*.example.com"), List.of("a*.example.com", "*b.example.com"));
        Optional<String> left = twoExcludes.sharedHost(HostPattern.parse("?.example.com"));
        assertTrue(left.isPresent());
        assertTrue(twoExcludes.matches(left.get()));
        assertEquals(Optional.empty(),
                HostSelector.of(List.of("*.example.com"), List.of("a*.example.com", "*a.example.com"))
                        .sharedHost(HostPattern.parse("a.example.com")));
    }

    @Test
    void selectorNeedsAnInclude() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> HostSelector.of(List.of(), List.of("a.com")));
        assertEquals("a host selector needs at least one include pattern", e.getMessage());
        assertEquals("include=*.example.com;exclude=trusted.example.com",
                HostSelector.of(List.of("*.Example.COM"), List.of("trusted.example.com")).toString());
    }
}
