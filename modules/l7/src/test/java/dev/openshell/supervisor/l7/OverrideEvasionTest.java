package dev.openshell.supervisor.l7;

import dev.openshell.middleware.spi.Body;
import static dev.openshell.supervisor.l7.RequestShapesTest.refused;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;

import dev.openshell.supervisor.l7.L7Decision.Outcome;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Bodies and queries that carry a {@code _method} override in a shape real frameworks read, under
 * {@code method_override: refuse} (the default) on a read-write REST endpoint: each is refused with
 * {@code 400 method_override} (the override was read) or {@code 400 method_override_unreadable} (the body cannot be
 * read with certainty), never forwarded.
 */
class OverrideEvasionTest {
    private static final String OVERRIDE = "method_override";
    private static final String UNREADABLE = "method_override_unreadable";
    private static final String JSON = "{\"_method\":\"DELETE\"}";
    private static final Charset UTF_32BE = Charset.forName("UTF-32BE");
    private static final Charset UTF_32LE = Charset.forName("UTF-32LE");

    private static Arguments c(String target, String contentType, byte[] body, String code) {
        return Arguments.of(target, contentType, body, code);
    }

    private static Arguments c(String contentType, String body, String code) {
        return c("/repos/x", contentType, body.getBytes(StandardCharsets.ISO_8859_1), code);
    }

    private static String part(String disposition) {
        return "--b\r\n" + disposition + "\r\n\r\nDELETE\r\n--b--\r\n";
    }

    static Stream<Arguments> evasions() {
        return Stream.of(
                // 1. every JSON media type JSON readers accept
                c("text/json", JSON, OVERRIDE),
                c("TEXT/JSON; charset=utf-8", JSON, OVERRIDE),
                c("application/x-json", JSON, OVERRIDE),
                c("text/x-json", JSON, OVERRIDE),
                c("application/vnd.api+JSON", JSON, OVERRIDE),
                c("foo/json ; q=1", JSON, OVERRIDE),
                // 2. JSON in a charset other than UTF-8, declared or detected (RFC 4627 section 3)
                c("application/json; charset=utf-16be", JSON, UNREADABLE),
                c("application/json; charset=\"ISO-8859-1\"", JSON, UNREADABLE),
                c("application/json; CHARSET=utf-32", JSON, UNREADABLE),
                c("/repos/x", "application/json", JSON.getBytes(StandardCharsets.UTF_16BE), UNREADABLE),
                c("/repos/x", "application/json", JSON.getBytes(StandardCharsets.UTF_16LE), UNREADABLE),
                c("/repos/x", "application/json", JSON.getBytes(UTF_32BE), UNREADABLE),
                c("/repos/x", "application/json", JSON.getBytes(UTF_32LE), UNREADABLE),
                c("/repos/x", "text/json", JSON.getBytes(StandardCharsets.UTF_16LE), UNREADABLE),
                c("application/json", "{\"a\":1}\u0000", UNREADABLE),
                // 2b. a form in a charset whose bytes are not read as ASCII here (UTF-16 puts NULs between letters)
                c("/repos/x", "application/x-www-form-urlencoded; charset=utf-16le",
                        "_method=DELETE".getBytes(StandardCharsets.UTF_16LE), UNREADABLE),
                c("application/x-www-form-urlencoded; charset=\"UTF-16\"", "a=1", UNREADABLE),
                c("application/x-www-form-urlencoded;charset=shift_jis", "a=1", UNREADABLE),
                c("application/x-www-form-urlencoded; charset=utf-7", "a=1", UNREADABLE),
                c("application/x-www-form-urlencoded; charset*=UTF-8''utf-16le", "a=1", UNREADABLE),
                c("application/x-www-form-urlencoded; charset*0=utf-; charset*1=16", "a=1", UNREADABLE),
                c("application/json; charset*=''utf%2D32", JSON, UNREADABLE),
                // 3. every multipart subtype
                c("multipart/mixed; boundary=b", part("Content-Disposition: form-data; name=\"_method\""), OVERRIDE),
                c("multipart/related; boundary=b", part("Content-Disposition: form-data; name=_method"), OVERRIDE),
                c("Multipart/Alternative; boundary=b", part("Content-Disposition: form-data; name=_method"), OVERRIDE),
                // 4. folded part header fields, encoded part names
                c("multipart/form-data; boundary=b", part("Content-Disposition: form-data;\r\n name=\"_method\""),
                        OVERRIDE),
                c("multipart/form-data; boundary=b", part("Content-Disposition:\r\n\tform-data;\r\n\tname=_method"),
                        OVERRIDE),
                c("multipart/form-data; boundary=b", part("Content-Disposition: form-data; name=\"%5Fmethod\""),
                        UNREADABLE),
                c("multipart/form-data; boundary=b", part("Content-Disposition: form-data; name=\"%5fMETHOD\""),
                        UNREADABLE),
                c("multipart/form-data; boundary=b",
                        part("Content-Disposition: form-data; name=\"=?utf-8?Q?=5Fmethod?=\""), OVERRIDE),
                c("multipart/form-data; boundary=b",
                        part("Content-Disposition: form-data; name=\"=?UTF-8?B?X21ldGhvZA==?=\""), OVERRIDE),
                c("multipart/form-data; boundary=b",
                        part("Content-Disposition: form-data; name=\"=?utf-8?Q?x?=\""), UNREADABLE),
                // 4b. RFC 2231 continuations and extended values in any charset (attacker pass 8, P8-2)
                c("multipart/form-data; boundary=b",
                        part("Content-Disposition: form-data; name*0=\"_me\"; name*1=\"thod\""), OVERRIDE),
                c("multipart/form-data; boundary=b",
                        part("Content-Disposition: form-data; name*0*=UTF-8''%5Fme; name*1*=thod"), OVERRIDE),
                c("multipart/form-data; boundary=b", part("Content-Disposition: form-data; name*0=\"_method\""),
                        OVERRIDE),
                c("multipart/form-data; boundary=b",
                        part("Content-Disposition: form-data; name*00=\"_me\"; name*01=thod"), OVERRIDE),
                c("multipart/form-data; boundary=b",
                        part("Content-Disposition: form-data; name*1=thod; name*0=_me"), OVERRIDE),
                c("multipart/form-data; boundary=b", part("Content-Disposition: form-data; name=x;\r\n name*0=_me;"
                        + "\r\n\tname*1=thod"), OVERRIDE),
                c("multipart/form-data; boundary=b", part("Content-Disposition: form-data; name*=UTF-16LE''"
                        + "%5F%00m%00e%00t%00h%00o%00d%00"), OVERRIDE),
                c("multipart/form-data; boundary=b", part("Content-Disposition: form-data; name*=IBM037''"
                        + "%6D%94%85%A3%88%96%84"), OVERRIDE),
                c("multipart/form-data; boundary=x; boundary*0=e; boundary*1=vil", HIDDEN, OVERRIDE),
                // 4b. a name, charset or boundary in a charset that cannot be decoded (attacker pass 7, P9-4: Python's
                // email reads UTF-7 and unicode_escape, so what it finds there is not known); cp037 is read
                c("multipart/form-data; boundary=b", part("Content-Disposition: form-data; name*=x-unknown''_method"),
                        UNREADABLE),
                c("multipart/form-data; boundary=b", part("Content-Disposition: form-data; name*=UTF-7''"
                        + "+AF8-method"), UNREADABLE),
                c("multipart/form-data; boundary=b", part("Content-Disposition: form-data; name*=unicode_escape''"
                        + "%5Cx5fmethod"), UNREADABLE),
                c("multipart/form-data; boundary=b", part("Content-Disposition: form-data; name*0*=utf_7''+AF8-me;"
                        + " name*1=thod"), UNREADABLE),
                c("multipart/form-data; boundary=b", part("Content-Disposition: form-data;"
                        + " name=\"=?UTF-7?Q?+AF8-method?=\""), UNREADABLE),
                // attacker pass 8, P10-5: escapes the JDK rejects and Python's iso2022_jp_2 / iso2022_kr read
                c("multipart/form-data; boundary=b", part("Content-Disposition: form-data; name*=iso-2022-jp-2''"
                        + "%5F%1B%2E%41method"), UNREADABLE),
                c("multipart/form-data; boundary=b", part("Content-Disposition: form-data; name*=iso-2022-jp-2''"
                        + "%5F%1B%24%41%1B%28%42method"), UNREADABLE),
                c("multipart/form-data; boundary=b", part("Content-Disposition: form-data; name*=iso-2022-kr''"
                        + "%1B%24%29%43%5F%1B%28%42method"), UNREADABLE),
                c("multipart/form-data; boundary=b", part("Content-Disposition: form-data; name*=iso-2022-jp''"
                        + "%5F%1B%28%42method"), OVERRIDE), // clean ISO-2022-JP: read, the override found
                c("multipart/form-data; boundary=b", part("Content-Disposition: form-data; name*=utf-16''"
                        + "%5F%00m%00e%00t%00h%00o%00d%00"), OVERRIDE), // Python: no byte order mark, little-endian
                c("multipart/form-data; boundary=b", part("Content-Disposition: form-data; name*=cp037''"
                        + "%6D%94%85%A3%88%96%84"), OVERRIDE),
                c("multipart/form-data; boundary=b", part("Content-Disposition: form-data; name*=x-unknown''a;"
                        + " name=_method"), UNREADABLE),
                c("multipart/form-data; boundary=x; boundary*=UTF-7''b", part("Content-Disposition: form-data;"
                        + " name=a"), UNREADABLE),
                c("application/x-www-form-urlencoded; charset*=x-unknown''utf-8", "a=1", UNREADABLE),
                c("application/json; charset*=unicode_escape''utf-8", "{\"a\":1}", UNREADABLE),
                // 5. a query split at ';', a JSON member name with control characters
                c("/repos/x?a=1;_method=DELETE", null, null, OVERRIDE),
                c("/repos/x?a=1&b=2;%5Fmethod=DELETE", null, null, OVERRIDE),
                c("application/json", "{\"_method\\u0000\":\"DELETE\"}", UNREADABLE),
                c("application/json", "{\"\\u0007_method\\u001f\":\"DELETE\"}", UNREADABLE),
                // 6. PHP cuts a parameter name at NUL (query, form body, multipart)
                c("/repos/x?_method%00=DELETE", null, null, OVERRIDE),
                c("/repos/x?a=1;_method%00x=DELETE", null, null, OVERRIDE),
                c("/repos/x?a=1&+.method%00%00[x]=DELETE", null, null, OVERRIDE),
                c("application/x-www-form-urlencoded", "_method%00=DELETE", OVERRIDE),
                c("application/x-www-form-urlencoded", "a=1&_method%00garbage=DELETE", OVERRIDE),
                c("multipart/form-data; boundary=b", part("Content-Disposition: form-data; name=\"_method\u0000x\""),
                        OVERRIDE),
                // 7. PHP's multipart parser: single quotes, the last name, an unquoted name cut at a space
                c("multipart/form-data; boundary=b", part("Content-Disposition: form-data; name='_method'"), OVERRIDE),
                c("multipart/form-data; boundary=b",
                        part("Content-Disposition: form-data; name=\"x\"; name=\"_method\""), OVERRIDE),
                c("multipart/form-data; boundary=b",
                        part("Content-Disposition: form-data; name='x'; name='_method'"), OVERRIDE),
                c("multipart/form-data; boundary=b", part("Content-Disposition: form-data; name=_method x"),
                        OVERRIDE),
                c("multipart/form-data; boundary=b",
                        part("Content-Disposition: form-data; name=\"x\"; name*=UTF-8''_method"), OVERRIDE),
                c("multipart/form-data; boundary=b", part("Content-Disposition: form-data; name=x\r\n"
                        + "Content-Disposition: form-data; name=_method"), OVERRIDE),
                // 8. a media type cut at ',' (Rack) or a space (PHP) too
                c("application/x-www-form-urlencoded, text/plain", "_method=DELETE", OVERRIDE),
                c("Application/X-WWW-Form-Urlencoded,text/plain", "_method=DELETE", OVERRIDE),
                c("application/x-www-form-urlencoded text/plain", "_method=DELETE", OVERRIDE),
                c("application/json, text/plain", JSON, OVERRIDE),
                c("application/x-www-form-urlencoded, charset=utf-16", "a=1", UNREADABLE),
                c("application/json,charset=utf-16be", JSON, UNREADABLE),
                c("multipart/form-data, boundary=b", part("Content-Disposition: form-data; name=_method"),
                        UNREADABLE),
                // 9. a Content-Type with more than one boundary reading (PHP: the first "boundary" substring; Rack:
                // the last "boundary="; Commons FileUpload: the last boundary or boundary* parameter): every one
                c("multipart/form-data; xboundary=evil; boundary=bnd", HIDDEN, OVERRIDE),
                c("multipart/form-data; boundary=bnd; xboundary=evil", HIDDEN, OVERRIDE),
                c("multipart/form-data; boundary=bnd; x-boundary=evil", HIDDEN, OVERRIDE),
                c("multipart/form-data; boundary=bnd; charset=\"boundary=evil\"", HIDDEN, OVERRIDE),
                c("multipart/form-data; boundary=bnd; boundary*=utf-8''evil", HIDDEN, OVERRIDE),
                c("multipart/form-data; boundary=bnd; BOUNDARY*=UTF-8''%65vil", HIDDEN, OVERRIDE),
                c("multipart/form-data; Boundary=\"bnd\"; xboundary=\"evil\"", HIDDEN, OVERRIDE),
                c("multipart/form-data; boundary=bnd; x-boundary=evil", SHOWN, UNREADABLE),
                c("multipart/form-data; boundary=bnd; boundary*=utf-8''other", SHOWN, UNREADABLE),
                // 10. a part whose Content-Disposition has no disposition type, or a parameter without '=' (PHP)
                c("multipart/form-data; boundary=b", part("Content-Disposition: name=\"_method\""), OVERRIDE),
                c("multipart/form-data; boundary=b", part("Content-Disposition: name=_method"), OVERRIDE),
                c("multipart/form-data; boundary=b", part("Content-Disposition:name='_method'"), OVERRIDE),
                c("multipart/form-data; boundary=b", part("Content-Disposition: form-data; x; name=_method"),
                        OVERRIDE),
                // 11. a Content-Type that holds /json or +json anywhere (Laravel's isJson())
                c("text/plain, application/json", JSON, OVERRIDE),
                c("text/plain; x=/json", JSON, OVERRIDE),
                c("text/plain; x=\"a+json\"", JSON, OVERRIDE),
                c("application/octet-stream; v=/json", JSON, OVERRIDE),
                c("application/jsonx", JSON, OVERRIDE),
                c("APPLICATION/JSONX", JSON, OVERRIDE),
                c("text/plain; x=/JSON; charset=utf-16", JSON, UNREADABLE),
                c("application/x-www-form-urlencoded; x=/json", JSON, OVERRIDE),
                c("multipart/form-data; boundary=b; x=+json", JSON, UNREADABLE),
                c("text/plain; x=/json", "_method=DELETE", UNREADABLE));
    }

    /** A {@code _method} part under boundary {@code evil}, before the body under boundary {@code bnd}. */
    private static final String HIDDEN = "--evil\r\nContent-Disposition: form-data; name=\"_method\"\r\n\r\n"
            + "DELETE\r\n--evil--\r\n--bnd\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n1\r\n--bnd--\r\n";
    /** A body with no {@code _method} part under boundary {@code bnd}. */
    private static final String SHOWN = "--bnd\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n1\r\n--bnd--\r\n";

    @ParameterizedTest
    @MethodSource("evasions")
    void refusedNotForwarded(String target, String contentType, byte[] body, String code) {
        refused(send(target, contentType, body), 400, code);
    }

    static Stream<Arguments> notOverrides() {
        return Stream.of(
                c("application/x-www-form-urlencoded", "%255Fmethod=DELETE", null),
                c("application/json; charset=UTF-8", "{\"a\":\"_method\"}", null),
                c("application/json; charset=us-ascii", "{\"method\":\"DELETE\"}", null),
                c("text/json", "{\"a\":1}", null),
                c("multipart/mixed; boundary=b", part("Content-Disposition: form-data; name=\"x_method\""), null),
                c("multipart/form-data; boundary=b", part("Content-Disposition: form-data;\r\n name=\"%41\""), null),
                c("/repos/x?a=1;b=_method", null, null, null),
                c("text/plain; charset=utf-16", "_method=DELETE", null),
                c("application/x-www-form-urlencoded; charset=UTF-8", "a=_method", null),
                c("application/x-www-form-urlencoded; charset=us-ascii", "a=1", null),
                c("application/x-www-form-urlencoded; charset=\"iso-8859-1\"", "a=\u00e9", null),
                c("/repos/x?x_method%00=DELETE&_methodx%00=DELETE", null, null, null),
                c("multipart/form-data; boundary=b", part("Content-Disposition: form-data; name='x_method'"), null),
                c("multipart/form-data; boundary=b", part("Content-Disposition: form-data; name=\"_method x\""), null),
                c("text/plain, application/x-www-form-urlencoded", "_method=DELETE", null),
                c("multipart/form-data; boundary=----WebKitFormBoundaryX7", "------WebKitFormBoundaryX7\r\n"
                        + "Content-Disposition: form-data; name=\"a\"\r\n\r\n1\r\n------WebKitFormBoundaryX7--\r\n", null),
                c("multipart/form-data; boundary=\"bnd\"; charset=utf-8", SHOWN, null),
                c("multipart/form-data; BOUNDARY=bnd", SHOWN, null),
                c("multipart/form-data; boundary=b", part("Content-Disposition: form-data; name=\"x\"; x_method=1"),
                        null),
                c("text/plain; x=/json", "{\"a\":\"DELETE\"}", null),
                c("application/jsonx", "{\"a\":1}", null),
                c("text/plain; x=/json", "a=1&b=2", null),
                c("text/plain", JSON, null));
    }

    @ParameterizedTest
    @MethodSource("notOverrides")
    void forwarded(String target, String contentType, byte[] body, String code) {
        assertEquals(Outcome.ALLOW, send(target, contentType, body).outcome());
    }

    private static L7Decision send(String target, String contentType, byte[] body) {
        List<L7Request.Header> h = new ArrayList<>();
        if (contentType != null) {
            h.add(new L7Request.Header("Content-Type", contentType));
        }
        if (body != null) {
            h.add(new L7Request.Header("Content-Length", Integer.toString(body.length)));
        }
        L7Engine e = RequestShapesTest.rest("enforce", "");
        return e.decide("api.test", 443, new L7Request("POST", target, h, Optional.ofNullable(body).map(Body::of))).orElseThrow();
    }
}
