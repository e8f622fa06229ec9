package dev.openshell.supervisor.l7;

import dev.openshell.middleware.spi.Body;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;

/** {@link OverrideForms} and {@link Multipart}: every place a framework reads a method override from. */
class OverrideFormsTest {
    private static L7Request post(String contentType, String body, String... headers) {
        List<L7Request.Header> h = new ArrayList<>();
        if (contentType != null) {
            h.add(new L7Request.Header("Content-Type", contentType));
        }
        h.add(new L7Request.Header("Content-Length", Integer.toString(body.length())));
        for (int i = 0; i < headers.length; i += 2) {
            h.add(new L7Request.Header(headers[i], headers[i + 1]));
        }
        return new L7Request("POST", "/x", h, Optional.of(Body.of(body.getBytes(StandardCharsets.ISO_8859_1))));
    }

    private static List<String> values(L7Request r) throws OverrideForms.Unreadable {
        return OverrideForms.find(r, QueryReadings.NONE).stream().map(OverrideForms.Form::value).toList();
    }

    @Test
    void headerFieldsInAnyCaseAndWithUnderscores() throws Exception {
        for (String name : List.of("X-HTTP-Method-Override", "x-http-method", "X-Method-Override",
                "X_HTTP_METHOD_OVERRIDE", "x_method-override")) {
            L7Request r = new L7Request("POST", "/x", List.of(new L7Request.Header(name, "DELETE")),
                    Optional.empty());
            assertEquals(List.of("DELETE"), values(r), name);
        }
        assertEquals(List.of(), values(new L7Request("POST", "/x", List.of(new L7Request.Header(
                "X-HTTP-Method-Overrides", "DELETE"), new L7Request.Header("X-Method", "DELETE")), Optional.empty())));
    }

    @Test
    void parameterNamesAreReadAsPhpAndRackReadThem() {
        for (String name : List.of("_method", "_METHOD", "_Method", ".method", " _method", "  .method", "_method[]",
                "_method[x]", "_method[", " method".replace(' ', '.'))) {
            assertTrue(OverrideForms.isParameter(name), name);
        }
        for (String name : List.of("method", "x_method", "_method_", "_methods", "__method", "_me thod", "[_method]",
                "")) {
            assertFalse(OverrideForms.isParameter(name), name);
        }
    }

    private static QueryReadings readings(String query) throws RequestTarget.InvalidTargetException {
        return QueryReadings.of(query, RequestTarget.parseQuery(query));
    }

    @Test
    void queryParameters() throws Exception {
        L7Request r = new L7Request("GET", "/x", List.of(), Optional.empty());
        assertEquals(2, OverrideForms.find(r, readings("_method=DELETE&_method=PUT&a=b")).size());
        assertEquals(1, OverrideForms.find(r, readings(".METHOD=DELETE")).size());
    }

    @Test
    void urlencodedFormsLenientlyDecoded() throws Exception {
        String form = "application/x-www-form-urlencoded";
        assertEquals(List.of("DELETE"), values(post(form, "a=1&_method=DELETE")));
        assertEquals(List.of("DELETE"), values(post(form, "a=1;_method=DELETE")), "; separates too (Rack)");
        assertEquals(List.of("DELETE"), values(post(form, "%5F%6Dethod=DELETE")));
        assertEquals(List.of("DELETE"), values(post(form + "; charset=utf-8", "+.method=DELETE")));
        assertEquals(List.of(""), values(post(form, "_method")));
        assertEquals(List.of("DELETE"), values(post(null, "_method=DELETE")), "no Content-Type: Rack reads a form");
        assertEquals(List.of(), values(post(form, "a=%zz&b=%E9&note=_method%3DDELETE&x_method=1")));
        assertEquals(List.of(), values(post("text/plain", "_method=DELETE")), "no framework parses text/plain");
    }

    @Test
    void onlyAPostWithABodyIsRead() throws Exception {
        L7Request put = new L7Request("PUT", "/x", List.of(new L7Request.Header("Content-Length", "14")),
                Optional.of(Body.of("_method=DELETE".getBytes(StandardCharsets.US_ASCII))));
        assertFalse(OverrideForms.bodyMayCarry(put));
        assertEquals(List.of(), values(put));
        assertFalse(OverrideForms.bodyMayCarry(new L7Request("POST", "/x", List.of(new L7Request.Header(
                "Content-Length", "0")), Optional.empty())));
        assertTrue(OverrideForms.bodyMayCarry(new L7Request("POST", "/x", List.of(new L7Request.Header(
                "Transfer-Encoding", "chunked"), new L7Request.Header("Content-Type", "application/vnd.x+json")),
                Optional.empty())));
        assertFalse(OverrideForms.bodyMayCarry(new L7Request("POST", "/x", List.of(new L7Request.Header(
                "Content-Length", "9"), new L7Request.Header("Content-Type", "application/octet-stream")),
                Optional.empty())));
    }

    @Test
    void jsonTopLevelMembers() throws Exception {
        assertEquals(List.of("DELETE"), values(post("application/json", "{\"a\":1,\"_method\":\"DELETE\"}")));
        assertEquals(List.of("1"), values(post("application/merge-patch+json", "{\"_METHOD\":1}")));
        assertEquals(List.of(), values(post("application/json", "{\"a\":{\"_method\":\"DELETE\"}}")));
        assertEquals(List.of(), values(post("application/json", "[{\"_method\":\"DELETE\"}]")));
        assertEquals(List.of(), values(post("application/json", " ")));
        assertEquals(List.of(), values(post("application/json", "{\"a\":" + "[".repeat(500) + "]".repeat(500)
                + "}")), "a body no reader could find _method in goes on");
        assertThrows(OverrideForms.Unreadable.class, () -> values(post("application/json",
                "{\"_method\":\"GET\",\"_method\":\"DELETE\"}")));
        assertThrows(OverrideForms.Unreadable.class, () -> values(post("application/json",
                "{\"\\u005fmethod\":\"DELETE\",}")));
        assertThrows(OverrideForms.Unreadable.class, () -> values(post("application/json", "\u00ff\u00fe{}")));
    }

    @Test
    void aBodyWithAContentCodingIsUnreadable() {
        assertThrows(OverrideForms.Unreadable.class, () -> values(post("application/x-www-form-urlencoded", "x",
                "Content-Encoding", "gzip")));
    }

    @Test
    void multipartPartsByName() throws Exception {
        String type = "multipart/form-data; boundary=\"b-1\"";
        String body = "preamble\r\n--b-1\r\nContent-Disposition: form-data; name=\"note\"\r\n\r\nhello\r\n"
                + "--b-1\r\ncontent-disposition: form-data; filename=\"f\"; name=\"_method\"\r\n"
                + "Content-Type: text/plain\r\n\r\nDELETE\r\n--b-1--\r\nepilogue";
        assertEquals(List.of("DELETE"), values(post(type, body)));
        assertEquals(List.of("PUT"), values(post("multipart/form-data; boundary=b", "--b\r\nContent-Disposition:"
                + " form-data; name*=UTF-8''%5Fmethod\r\n\r\nPUT\r\n--b--")));
        assertEquals(List.of("PATCH"), values(post("multipart/form-data; boundary=b", "--b  \r\nContent-Disposition:"
                + " form-data; name=.METHOD\r\n\r\nPATCH\r\n--b--")));
        assertEquals(List.of(""), values(post("multipart/form-data; boundary=b", "--b\r\nContent-Disposition:"
                + " form-data; name=\"_method\"\r\n\r\n\r\n--b--")));
        assertEquals(List.of(), values(post("multipart/form-data; boundary=b", "--b\r\nContent-Disposition:"
                + " form-data; name=\"a\"; filename=\"_method\"\r\n\r\n_method\r\n--b--")));
    }

    @Test
    void anIncompleteMultipartBodyIsUnreadable() {
        for (String[] c : new String[][] {
                {"multipart/form-data", "--x\r\n\r\n"},
                {"multipart/form-data; boundary=", "--\r\n"},
                {"multipart/form-data; boundary=b", "no delimiter"},
                {"multipart/form-data; boundary=b", "--b\r\nContent-Disposition: form-data; name=a\r\n\r\nx"},
                {"multipart/form-data; boundary=b", "--b\r\nContent-Disposition: form-data; name=a"},
                {"multipart/form-data; boundary=b", "--b\nContent-Disposition: form-data; name=_method\n\nDELETE\n--b--"},
        }) {
            assertThrows(OverrideForms.Unreadable.class, () -> values(post(c[0], c[1])), c[1]);
        }
    }

    @Property
    void aMethodPartIsFoundWhereverItStands(@ForAll("names") List<String> names, @ForAll("position") int at) {
        List<String> parts = new ArrayList<>(names);
        parts.add(Math.min(at, parts.size()), "_method");
        StringBuilder body = new StringBuilder();
        for (String n : parts) {
            body.append("--B\r\nContent-Disposition: form-data; name=\"").append(n).append("\"\r\n\r\nv\r\n");
        }
        body.append("--B--\r\n");
        List<String> found;
        try {
            found = values(post("multipart/form-data; boundary=B", body.toString()));
        } catch (OverrideForms.Unreadable e) {
            throw new AssertionError(e);
        }
        assertEquals(1, found.size());
    }

    @Provide
    Arbitrary<List<String>> names() {
        return Arbitraries.strings().alpha().ofMinLength(1).ofMaxLength(8).list().ofMaxSize(6);
    }

    @Provide
    Arbitrary<Integer> position() {
        return Arbitraries.integers().between(0, 6);
    }
}
