package dev.openshell.supervisor.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import jakarta.json.Json;
import jakarta.json.JsonObject;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * Issue 39, items 1 and 2, through {@code supervisor run} (the image) with real {@code curl} over plain HTTP and
 * intercepted HTTPS, against {@code openshell/regex} under {@code fail_closed} in deny mode and in redact mode: the
 * stage reads a body the way the reader of its declared media type will.
 *
 * <ul>
 *   <li>A byte order mark counts only where that reader honours it: JSON's detection of UTF-8, UTF-16 and UTF-32
 *       (the key in a UTF-16LE JSON body behind its mark is still found); a declared {@code UTF-16} charset, whose
 *       byte order the mark gives. Any other mark that would change the reading (UTF-16LE/BE or UTF-32LE before a
 *       form, {@code text/plain}, XML, a body without a media type or a multipart part, a UTF-8 mark before a body
 *       declared UTF-16LE) is undecodable: 403 {@code body_undecodable}, nothing upstream.</li>
 *   <li>A media type that repeats a parameter ({@code charset="utf-8"; charset=utf-7}, the same charset twice, any
 *       other parameter, a multipart {@code boundary}) is undecodable.</li>
 *   <li>A declared charset that is not ASCII-compatible does not hide a key written in ASCII bytes from a reader
 *       that ignores the declaration ({@code application/x-www-form-urlencoded; charset=UTF-16LE},
 *       {@code text/plain; charset=utf-16}, ...): both readings are scanned, so deny mode answers 403
 *       {@code secret_detected} (or the body is undecodable) and redact mode forwards a body that holds the key in
 *       neither reading; a charset the stage cannot read (EBCDIC) is undecodable.</li>
 *   <li>A key written as the upstream's parser decodes it (XML and HTML character references, adjacent CDATA
 *       sections, YAML double-quoted escapes, a {@code multipart/form-data} part declared {@code base64} that the
 *       receiver reads as sent) is denied in deny mode and reaches the upstream redacted in redact mode.</li>
 * </ul>
 * Nothing of a key appears in the answer, the audit log or the supervisor's output.
 */
class BodyReadingIT extends RunningWorld {
    /** A fake key in the OpenAI project-key format; never a real secret. */
    static final String OPENAI = "sk-proj-Ab3dE6gH9jK2mN5pQ8sT1vW4yZ7cF0iL";
    /** The key's 's' in UTF-7 (RFC 2152): {@code +AHM-}. */
    static final String OPENAI_UTF7 = "+AHM-k-proj-Ab3dE6gH9jK2mN5pQ8sT1vW4yZ7cF0iL";
    static final String KEY_PART = "Ab3dE6gH9jK2mN5pQ8";
    private static final byte[] UTF16LE_MARK = {(byte) 0xff, (byte) 0xfe};
    private static final byte[] UTF16BE_MARK = {(byte) 0xfe, (byte) 0xff};
    private static final byte[] UTF32LE_MARK = {(byte) 0xff, (byte) 0xfe, 0, 0};
    private static final byte[] UTF8_MARK = {(byte) 0xef, (byte) 0xbb, (byte) 0xbf};

    @AfterAll
    static void noKeyInTheLogs() throws Exception {
        if (supervisor != null) {
            String everything = Files.readString(world.audit) + supervisor.stdout();
            assertFalse(everything.contains(KEY_PART), "no key in any log or audit line");
        }
    }

    /** One agent input: its name, body and {@code Content-Type} ({@code null}: none). */
    record Input(String name, byte[] body, String contentType) {
    }

    static byte[] concat(byte[] a, byte[] b) {
        byte[] out = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }

    private static byte[] ascii(String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
    }

    /** {@return bodies a mark would make read otherwise than their media type's reader reads them} */
    static List<Input> markedBodies() {
        List<Input> in = new ArrayList<>();
        // issue 39 item 1 as reported: a form parser reads note = the key, a UTF-16LE reading CJK characters
        in.add(new Input("form after a UTF-16LE mark", concat(UTF16LE_MARK, ascii("&note=" + OPENAI)),
                "application/x-www-form-urlencoded"));
        in.add(new Input("form (charset=utf-8) after a UTF-16LE mark", concat(UTF16LE_MARK, ascii("&note=" + OPENAI)),
                "application/x-www-form-urlencoded; charset=utf-8"));
        in.add(new Input("form after a UTF-16BE mark", concat(UTF16BE_MARK, ascii("&note=" + OPENAI)),
                "application/x-www-form-urlencoded"));
        in.add(new Input("text after a UTF-16LE mark", concat(UTF16LE_MARK, ascii("k " + OPENAI)), "text/plain"));
        in.add(new Input("XML after a UTF-16BE mark", concat(UTF16BE_MARK, ascii("<a>" + OPENAI + "</a>.")),
                "application/xml"));
        in.add(new Input("text after a UTF-32LE mark", concat(UTF32LE_MARK, ascii("key " + OPENAI + " ")),
                "text/plain; charset=utf-8"));
        in.add(new Input("no media type after a UTF-16LE mark", concat(UTF16LE_MARK, ascii("k " + OPENAI)), null));
        in.add(new Input("UTF-8 mark before a body declared UTF-16LE", concat(UTF8_MARK, ascii("x " + OPENAI)),
                "text/plain; charset=utf-16le"));
        in.add(new Input("multipart part after a UTF-16LE mark", concat(concat(ascii("--b0und\r\n"
                + "Content-Disposition: form-data; name=\"note\"\r\nContent-Type: text/plain\r\n\r\n"), UTF16LE_MARK),
                ascii("k " + OPENAI + "\r\n--b0und--\r\n")), "multipart/form-data; boundary=b0und"));
        return in;
    }

    /** {@return bodies whose media type repeats a parameter (RFC 6838 section 4.3)} */
    static List<Input> repeatedParameters() {
        byte[] utf7 = ascii("{\"content\":\"" + OPENAI_UTF7 + "\"}");
        List<Input> in = new ArrayList<>();
        // issue 39 item 2 as reported
        in.add(new Input("charset=\"utf-8\"; charset=utf-7", utf7,
                "application/json; charset=\"utf-8\"; charset=utf-7"));
        in.add(new Input("charset=utf-7; charset=utf-8", utf7, "application/json; charset=utf-7; charset=utf-8"));
        in.add(new Input("the same charset twice", utf7, "application/json; charset=utf-8; Charset=utf-8"));
        in.add(new Input("another parameter twice", ascii("note=" + OPENAI_UTF7),
                "application/x-www-form-urlencoded; a=1; a=2"));
        in.add(new Input("two boundaries", ascii("--b0und\r\nContent-Type: text/plain\r\n\r\n" + OPENAI_UTF7
                + "\r\n--b0und--\r\n"), "multipart/form-data; boundary=other; boundary=b0und"));
        in.add(new Input("a part's charset twice", ascii("--b0und\r\nContent-Type: text/plain; charset=utf-8; "
                + "charset=utf-7\r\n\r\n" + OPENAI_UTF7 + "\r\n--b0und--\r\n"), "multipart/form-data; boundary=b0und"));
        return in;
    }

    private static Curl.Result post(boolean tls, String host, Input input) throws Exception {
        return post(tls, host, "/v1", input.body(), input.contentType());
    }

    private static JsonObject json(String body) {
        return Json.createReader(new StringReader(body)).readObject();
    }

    private static void refusedAsUndecodable(List<Input> inputs) throws Exception {
        List<String> failures = new ArrayList<>();
        for (boolean tls : new boolean[] {false, true}) {
            RawUpstream upstream = tls ? world.tls : world.plain;
            for (String host : List.of(ProxyWorld.DENY, ProxyWorld.REDACT)) {
                for (Input input : inputs) {
                    int before = upstream.count();
                    Curl.Result r = post(tls, host, input);
                    String what = (tls ? "HTTPS " : "HTTP ") + host + ", " + input.name() + ": ";
                    String code = r.status() == 403 ? json(r.body()).getString("reason_code", "") : "";
                    if (r.status() != 403 || !code.equals("body_undecodable")) {
                        failures.add(what + r.status() + " " + code);
                    }
                    if (upstream.count() != before) {
                        failures.add(what + "reached the upstream");
                        upstream.drain();
                    }
                    assertFalse(r.body().contains(KEY_PART), what + "the answer does not echo the key");
                }
            }
        }
        assertTrue(failures.isEmpty(), "each is refused as undecodable, nothing upstream:\n"
                + String.join("\n", failures));
    }

    @Test
    void aByteOrderMarkThatWouldChangeTheReadingIsUndecodable() throws Exception {
        refusedAsUndecodable(markedBodies());
    }

    @Test
    void aRepeatedMediaTypeParameterIsUndecodable() throws Exception {
        refusedAsUndecodable(repeatedParameters());
    }

    /** {@return a key in ASCII bytes under a charset that reads those bytes as other characters, and kin} */
    static List<Input> declaredWideCharsets() {
        List<Input> in = new ArrayList<>();
        // the attacker's two inputs: an upstream parser that ignores the charset reads the key
        in.add(new Input("ASCII form declared UTF-16LE", ascii("&note=" + OPENAI),
                "application/x-www-form-urlencoded; charset=UTF-16LE"));
        in.add(new Input("ASCII text declared utf-16", ascii("k " + OPENAI), "text/plain; charset=utf-16"));
        in.add(new Input("ASCII text declared UTF-16BE", ascii("k " + OPENAI), "text/plain; charset=UTF-16BE"));
        in.add(new Input("ASCII form declared utf-16", ascii("a=1&note=" + OPENAI + " "),
                "application/x-www-form-urlencoded; charset=utf-16"));
        in.add(new Input("percent-encoded ASCII form declared UTF-16LE",
                ascii("note=sk%2Dproj%2D" + OPENAI.substring(8) + "&"),
                "application/x-www-form-urlencoded; charset=UTF-16LE"));
        in.add(new Input("ASCII JSON declared utf-16le", ascii("{\"k\":\"" + OPENAI + "\"}"),
                "application/json; charset=utf-16le"));
        in.add(new Input("multipart part of ASCII declared UTF-16LE", ascii("--b0und\r\nContent-Type: text/plain; "
                + "charset=UTF-16LE\r\n\r\nk " + OPENAI + "\r\n--b0und--\r\n"), "multipart/form-data; boundary=b0und"));
        in.add(new Input("the key in UTF-16LE declared UTF-16LE", ("k " + OPENAI).getBytes(StandardCharsets.UTF_16LE),
                "text/plain; charset=UTF-16LE"));
        in.add(new Input("the key in EBCDIC declared IBM037", ("k " + OPENAI).getBytes(java.nio.charset.Charset
                .forName("IBM037")), "text/plain; charset=IBM037"));
        in.add(new Input("ASCII text declared x-UTF-16LE-BOM", ascii("k " + OPENAI),
                "text/plain; charset=x-UTF-16LE-BOM"));
        return in;
    }

    /** {@return what is wrong with one answer and what the upstream got (nothing when it is right)} */
    private static List<String> caught(boolean tls, String host, Input input) throws Exception {
        RawUpstream upstream = tls ? world.tls : world.plain;
        int before = upstream.count();
        Curl.Result r = post(tls, host, input);
        String what = (tls ? "HTTPS " : "HTTP ") + host + ", " + input.name() + ": ";
        List<String> failures = new ArrayList<>();
        if (r.body().contains(KEY_PART)) {
            failures.add(what + "the answer echoes the key");
        }
        if (r.status() == 403) {
            String code = json(r.body()).getString("reason_code", "");
            if (!code.equals("secret_detected") && !code.equals("body_undecodable")) {
                failures.add(what + "403 " + code);
            }
            if (upstream.count() != before) {
                failures.add(what + "refused, yet reached the upstream");
                upstream.drain();
            }
        } else if (r.status() == 200 && host.equals(ProxyWorld.REDACT)) {
            byte[] got = upstream.take().body();
            for (java.nio.charset.Charset reading : List.of(StandardCharsets.ISO_8859_1, StandardCharsets.UTF_16LE,
                    StandardCharsets.UTF_16BE)) {
                if (new String(got, reading).contains(KEY_PART)) {
                    failures.add(what + "the upstream reads the key as " + reading);
                }
            }
        } else {
            failures.add(what + r.status());
            upstream.drain();
        }
        return failures;
    }

    @Test
    void aDeclaredCharsetThatIsNotAsciiCompatibleHidesNoKey() throws Exception {
        List<String> failures = new ArrayList<>();
        for (boolean tls : new boolean[] {false, true}) {
            for (String host : List.of(ProxyWorld.DENY, ProxyWorld.REDACT)) {
                for (Input input : declaredWideCharsets()) {
                    failures.addAll(caught(tls, host, input));
                }
            }
            // the attacker's inputs in deny mode: denied for the key, not merely undecodable
            for (Input input : declaredWideCharsets().subList(0, 2)) {
                Curl.Result r = post(tls, ProxyWorld.DENY, input);
                assertEquals(403, r.status(), input.name());
                assertEquals("secret_detected", json(r.body()).getString("reason_code"), input.name());
            }
        }
        assertTrue(failures.isEmpty(), "each is denied, refused or forwarded without the key:\n"
                + String.join("\n", failures));
    }

    @Test
    void inJsonTheMarkStillShowsTheEncoding() throws Exception {
        byte[] utf16 = concat(UTF16LE_MARK, ("{\"content\":\"my key " + OPENAI + "\"}")
                .getBytes(StandardCharsets.UTF_16LE));
        byte[] utf8 = concat(UTF8_MARK, ascii("{\"content\":\"my key " + OPENAI + "\"}"));
        for (boolean tls : new boolean[] {false, true}) {
            RawUpstream upstream = tls ? world.tls : world.plain;
            for (Input input : List.of(new Input("UTF-16LE JSON", utf16, "application/json"),
                    new Input("UTF-8 JSON", utf8, "application/json; charset=utf-8"))) {
                int before = upstream.count();
                Curl.Result denied = post(tls, ProxyWorld.DENY, input);
                assertEquals(403, denied.status(), input.name() + " " + denied);
                assertEquals("secret_detected", json(denied.body()).getString("reason_code"), denied.body());
                assertEquals(before, upstream.count(), input.name());

                upstream.drain();
                Curl.Result redacted = post(tls, ProxyWorld.REDACT, input);
                assertEquals(200, redacted.status(), input.name() + " " + redacted);
                RawUpstream.Received got = upstream.take();
                String text = input.name().startsWith("UTF-16")
                        ? new String(got.body(), 2, got.body().length - 2, StandardCharsets.UTF_16LE)
                        : new String(got.body(), 3, got.body().length - 3, StandardCharsets.UTF_8);
                assertEquals("{\"content\":\"my key [REDACTED:openai_api_key]\"}", text, input.name());
            }
        }
    }
    /** An input, the secret in it and how the upstream's parser reads the bytes it receives. */
    record Parsed(Input input, String secret, java.util.function.UnaryOperator<String> reader) {
    }

    private static String refs(String s, String form) {
        StringBuilder b = new StringBuilder();
        s.chars().forEach(c -> b.append(String.format(form, c)));
        return b.toString();
    }

    /** {@return the text an XML or HTML parser reads: comments dropped, CDATA opened, references decoded} */
    static String markup(String s) {
        String t = s.replaceAll("(?s)<!--.*?-->", "").replace("<![CDATA[", "").replace("]]>", "");
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("&#(x[0-9a-fA-F]+|[0-9]+);?").matcher(t);
        return m.replaceAll(r -> java.util.regex.Matcher.quoteReplacement(Character.toString(r.group(1)
                .startsWith("x") ? Integer.parseInt(r.group(1).substring(1), 16) : Integer.parseInt(r.group(1)))));
    }

    /** {@return the text a YAML parser reads from double-quoted escapes} */
    static String yaml(String s) {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("\\\\(?:x([0-9a-fA-F]{2})|u([0-9a-fA-F]{4})"
                + "|U([0-9a-fA-F]{8})|\n[ \t]*)").matcher(s);
        return m.replaceAll(r -> {
            String hex = r.group(1) != null ? r.group(1) : r.group(2) != null ? r.group(2) : r.group(3);
            return hex == null ? "" : java.util.regex.Matcher.quoteReplacement(
                    Character.toString(Integer.parseInt(hex, 16)));
        });
    }

    /**
     * {@return a key written as an XML, HTML or YAML parser decodes it, or in a form-data part that the receiver
     * reads as sent although it declares base64 (attack report F2, F6)}
     */
    static List<Parsed> parserForms() {
        String aws = "AKIAQWERTYUIOPASDFGH";
        return List.of(
                new Parsed(new Input("XML hex character references", ascii("<a>" + refs(OPENAI, "&#x%x;") + "</a>"),
                        "application/xml"), OPENAI, BodyReadingIT::markup),
                new Parsed(new Input("XML split CDATA", ascii("<a><![CDATA[" + OPENAI.substring(0, 12) + "]]><![CDATA["
                        + OPENAI.substring(12) + "]]></a>"), "application/xml"), OPENAI, BodyReadingIT::markup),
                new Parsed(new Input("HTML decimal references", ascii("<p>" + refs(OPENAI, "&#%d;") + "</p>"),
                        "text/html"), OPENAI, BodyReadingIT::markup),
                new Parsed(new Input("references in text/plain", ascii("k " + refs(OPENAI, "&#x%x;")), "text/plain"),
                        OPENAI, BodyReadingIT::markup),
                new Parsed(new Input("YAML \\x escapes", ascii("a: \"" + refs(OPENAI, "\\x%02x") + "\"\n"),
                        "application/yaml"), OPENAI, BodyReadingIT::yaml),
                new Parsed(new Input("form-data part declared base64", ascii("--b0und\r\nContent-Disposition: form-data; "
                        + "name=\"a\"\r\nContent-Type: text/plain; charset=iso-8859-1\r\nContent-Transfer-Encoding: base64"
                        + "\r\n\r\n" + aws + "\r\n--b0und--\r\n"), "multipart/form-data; boundary=b0und"), aws, s -> s),
                partHeader("part filename*=UTF-16LE''", "form-data; name=\"f\"; filename*=UTF-16LE''"
                        + pct(OPENAI.getBytes(StandardCharsets.UTF_16LE))),
                partHeader("part filename*0/*1", "form-data; name=\"f\"; filename*0=\"" + OPENAI.substring(0, 12)
                        + "\"; filename*1=\"" + OPENAI.substring(12) + "\""),
                partHeader("part filename RFC 2047 B", "form-data; name=\"f\"; filename=\"=?utf-8?B?"
                        + java.util.Base64.getEncoder().encodeToString(ascii(OPENAI)) + "?=\""));
    }

    /** A multipart body whose one part's {@code Content-Disposition} is {@code disposition} (attacker pass 8, P8-1). */
    private static Parsed partHeader(String name, String disposition) {
        return new Parsed(new Input(name, ascii("--b0und\r\nContent-Disposition: " + disposition
                + "\r\nContent-Type: text/plain\r\n\r\nhello\r\n--b0und--\r\n"), "multipart/form-data; boundary=b0und"),
                OPENAI, BodyReadingIT::partHeaders);
    }

    private static String pct(byte[] b) {
        StringBuilder s = new StringBuilder();
        for (byte x : b) {
            s.append(String.format("%%%02X", x & 0xff));
        }
        return s.toString();
    }

    /** {@return the body, then every reading of every header line's parameters, as Python's email reads them} */
    private static String partHeaders(String body) {
        StringBuilder b = new StringBuilder(body);
        for (String line : body.split("\r\n")) {
            int colon = line.indexOf(':');
            if (colon > 0) {
                dev.openshell.middleware.spi.internal.HeaderParameters.readings(line.substring(colon + 1), false)
                        .byName().values().forEach(l -> l.forEach(r -> b.append('\n').append(r)));
            }
        }
        return b.toString();
    }

    @Test
    void aKeyAsAParserDecodesItIsDeniedOrRedacted() throws Exception {
        List<String> failures = new ArrayList<>();
        for (boolean tls : new boolean[] {false, true}) {
            RawUpstream upstream = tls ? world.tls : world.plain;
            for (Parsed p : parserForms()) {
                String what = (tls ? "HTTPS " : "HTTP ") + p.input().name() + ": ";
                int before = upstream.count();
                Curl.Result denied = post(tls, ProxyWorld.DENY, p.input());
                String code = denied.status() == 403 ? json(denied.body()).getString("reason_code", "") : "";
                if (!code.equals("secret_detected") || upstream.count() != before) {
                    failures.add(what + "deny mode answered " + denied.status() + " " + code);
                    upstream.drain();
                }
                Curl.Result redacted = post(tls, ProxyWorld.REDACT, p.input());
                if (redacted.status() != 200) {
                    failures.add(what + "redact mode answered " + redacted.status());
                    upstream.drain();
                    continue;
                }
                String got = new String(upstream.take().body(), StandardCharsets.ISO_8859_1);
                if (p.reader().apply(got).contains(p.secret()) || !got.contains("[REDACTED:")) {
                    failures.add(what + "the upstream's parser reads the key");
                }
            }
        }
        assertTrue(failures.isEmpty(), "each is denied for the key, or forwarded redacted:\n"
                + String.join("\n", failures));
    }
}
