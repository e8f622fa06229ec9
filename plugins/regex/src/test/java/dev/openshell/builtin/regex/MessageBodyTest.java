package dev.openshell.builtin.regex;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.openshell.middleware.spi.Decision;
import dev.openshell.middleware.spi.HttpRequestResult;
import dev.openshell.middleware.spi.MiddlewareException;
import jakarta.json.Json;
import jakarta.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Attacker pass 9, P11-6: a {@code message/*} entity or an {@code application/mbox} body, as a request body or as a
 * part, is read as a message ({@link MessageText}): its header block with encoded words decoded, its body by its own
 * {@code Content-Transfer-Encoding} and {@code Content-Type}.
 */
class MessageBodyTest {
    static final String KEY = Samples.ONE_OF_EACH.get("github_token");
    private static final JsonObject DENY = Json.createObjectBuilder().add("mode", "deny").build();
    private static final String H = "From: a@x.test\r\nTo: b@y.test\r\n";
    private final RegexProvider provider = new RegexProvider();

    static String qp(String s) {
        StringBuilder b = new StringBuilder();
        for (byte c : s.getBytes(StandardCharsets.US_ASCII)) {
            b.append(String.format("=%02X", c & 0xff));
        }
        return b.toString();
    }

    static String b64(String s) {
        return Base64.getEncoder().encodeToString(s.getBytes(StandardCharsets.UTF_8));
    }

    private HttpRequestResult deny(String body, String type) {
        return DecodedBodyTest.evaluate(provider, DENY, body.getBytes(StandardCharsets.ISO_8859_1),
                "content-type", type);
    }

    private HttpRequestResult redact(String body, String type) {
        return DecodedBodyTest.evaluate(provider, JsonObject.EMPTY_JSON_OBJECT,
                body.getBytes(StandardCharsets.ISO_8859_1), "content-type", type);
    }

    private static void denied(HttpRequestResult r) {
        assertEquals(Decision.DENY, r.decision());
        assertEquals("request body contains secrets: github_token", r.reason());
    }

    /** The encodings of the repro, each in a {@code message/rfc822}, {@code message/global} or mbox body. */
    static final String[] ENCODED = {
        H + "Subject: s\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n" + qp(KEY) + "\r\n",
        H + "Subject: s\r\nContent-Transfer-Encoding: Quoted-Printable\r\n\r\n" + KEY.substring(0, 5)
                + String.format("=%02X", (int) KEY.charAt(5)) + KEY.substring(6) + "\r\n",
        H + "Subject: s\r\nContent-Transfer-Encoding: base64\r\n\r\n" + b64(KEY) + "\r\n",
        H + "Subject: s\r\nContent-Transfer-Encoding: base64\r\n\r\n" + b64(KEY).substring(0, 20) + "\r\n"
                + b64(KEY).substring(20) + "\r\n",
        H + "Subject: =?utf-8?B?" + b64(KEY) + "?=\r\n\r\nhi\r\n",
        H + "Subject: =?utf-8?Q?" + qp(KEY) + "?=\r\n\r\nhi\r\n",
        H + "Subject: =?utf-8?B?" + b64(KEY.substring(0, 9)) + "?=\r\n =?utf-8?B?" + b64(KEY.substring(9)) + "?=\r\n\r\n",
        H + "X-Note: a =?iso-8859-1?Q?" + qp(KEY) + "?= b\r\n\r\nhi\r\n",
        H + "Subject: s\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=ZZ\r\n\r\n--ZZ\r\n"
                + "Content-Type: text/plain\r\nContent-Transfer-Encoding: base64\r\n\r\n" + b64(KEY) + "\r\n--ZZ--\r\n",
        H + "Content-Type: message/rfc822\r\n\r\n" + H + "Content-Transfer-Encoding: quoted-printable\r\n\r\n"
                + qp(KEY) + "\r\n",
        // no empty line: the header block ends at the first line that is no field (Python's feedparser)
        H + "Content-Transfer-Encoding: base64\r\n" + b64(KEY) + "\r\n",
        // "=" CR is a soft break to the next LF (Python's binascii.a2b_qp)
        H + "Content-Transfer-Encoding: quoted-printable\r\n\r\n" + KEY.substring(0, 8) + "=\rjunk\n"
                + KEY.substring(8) + "\r\n",
        "Subject: x\nContent-Transfer-Encoding: quoted-printable\n\n" + KEY.substring(0, 4) + "=\n" + KEY.substring(4)
                + "\n",
    };

    @Test
    void anEncodedKeyInAMessageBodyIsDenied() {
        for (String type : new String[] {"message/rfc822", "message/global", "Message/Partial; id=x; number=1"}) {
            for (String body : ENCODED) {
                denied(deny(body, type));
            }
        }
    }

    @Test
    void anEncodedKeyInAnyMessageOfAnMboxIsDenied() {
        for (String m : ENCODED) {
            denied(deny("From a@x.test Mon Dec  7 06:00:00 2026\r\n" + H + "Subject: s\r\n\r\nhello\r\n"
                    + "From b@y.test Mon Dec  7 06:00:01 2026\r\n" + m, "application/mbox"));
            denied(deny(m, "application/mbox")); // no From line: the text is one message
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"multipart/related; boundary=BB", "multipart/mixed; boundary=BB",
        "multipart/form-data; boundary=BB", "multipart/digest; boundary=BB"})
    void anEncodedKeyInAMessagePartIsDenied(String type) {
        for (String m : ENCODED) {
            String header = type.startsWith("multipart/digest") ? "\r\n" : "Content-Type: message/rfc822\r\n\r\n";
            denied(deny("--BB\r\nContent-Type: application/json; charset=UTF-8\r\n\r\n{}\r\n--BB\r\n" + header + m
                    + "\r\n--BB--\r\n", type));
        }
    }

    @Test
    void aTransferEncodedMessagePartIsReadDecodedAndAsSent() {
        String inner = H + "Content-Transfer-Encoding: quoted-printable\r\n\r\n" + qp(KEY) + "\r\n";
        denied(deny("--BB\r\nContent-Type: message/rfc822\r\nContent-Transfer-Encoding: base64\r\n\r\n"
                + Base64.getMimeEncoder().encodeToString(inner.getBytes(StandardCharsets.US_ASCII))
                + "\r\n--BB--\r\n", "multipart/mixed; boundary=BB"));
        denied(deny("--BB\r\nContent-Type: message/rfc822\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n"
                + inner + "\r\n--BB--\r\n", "multipart/mixed; boundary=BB"));
    }

    @Test
    void theKeyAsWrittenIsStillDeniedAndAPlainMessagePasses() {
        denied(deny(H + "Subject: s\r\n\r\n" + KEY + "\r\n", "message/rfc822"));
        denied(deny(H + "Subject: " + KEY + "\r\n\r\nhi\r\n", "message/rfc822"));
        String plain = H + "Subject: =?utf-8?Q?caf=C3=A9?=\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n"
                + "hello=20world=\r\n\r\n";
        for (String type : new String[] {"message/rfc822", "message/global", "application/mbox"}) {
            HttpRequestResult r = redact(plain, type);
            assertEquals(Decision.ALLOW, r.decision());
            assertTrue(r.body().isEmpty(), "a body without a key is forwarded unchanged");
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "Subject: s\r\nContent-Type: text/plain; charset=utf-7\r\n\r\n+AGcAaABw-\r\n",
        "Subject: =?utf-7?Q?+AGcAaABw-?=\r\n\r\nhi\r\n",
        "Subject: s\r\nContent-Transfer-Encoding: x-uuencode\r\n\r\nbegin 644 f\r\n",
        "Subject: s\r\nContent-Transfer-Encoding: base64\r\n\r\nZ2hwX\r\n",
        "Subject: s\rContent-Transfer-Encoding: base64\r\rZ2hw\r",
        "Subject: s\r\nContent-Type: message/rfc822\r\n\r\nContent-Type: message/rfc822\r\n\r\n"
                + "Content-Type: message/rfc822\r\n\r\nhi\r\n",
    })
    void aMessageThatCannotBeReadFailsTheBody(String body) {
        for (String type : new String[] {"message/rfc822", "application/mbox"}) {
            MiddlewareException e = assertThrows(MiddlewareException.class, () -> deny(body, type));
            assertEquals("body_undecodable", e.code());
        }
    }

    @Test
    void redactionRewritesAKeyInTheMessagesOwnEncoding() {
        String qpBody = H + "Subject: s\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n" + qp(KEY) + "\r\n";
        String out = new String(redacted(redact(qpBody, "message/rfc822")), StandardCharsets.US_ASCII);
        assertEquals(H + "Subject: s\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n"
                + "[REDACTED:github_token]\r\n", out);

        String b64Body = H + "Content-Transfer-Encoding: base64\r\n\r\n" + b64("key " + KEY + " end") + "\r\n";
        out = new String(redacted(redact(b64Body, "message/global")), StandardCharsets.US_ASCII);
        String encoded = out.substring(out.indexOf("\r\n\r\n") + 4).strip();
        assertEquals("key [REDACTED:github_token] end",
                new String(Base64.getMimeDecoder().decode(encoded), StandardCharsets.US_ASCII));

        String subject = H + "Subject: =?utf-8?B?" + b64(KEY) + "?=\r\n\r\nhi\r\n";
        out = new String(redacted(redact(subject, "message/rfc822")), StandardCharsets.US_ASCII);
        assertEquals(H + "Subject: [REDACTED:github_token]\r\n\r\nhi\r\n", out);

        String mbox = "From a@x.test Mon Dec  7 06:00:00 2026\r\n" + b64Body + "From b@y.test Mon Dec  7 06:00:01 2026\r\n"
                + subject;
        out = new String(redacted(redact(mbox, "application/mbox")), StandardCharsets.US_ASCII);
        assertTrue(out.endsWith("\r\nFrom b@y.test Mon Dec  7 06:00:01 2026\r\n" + H
                + "Subject: [REDACTED:github_token]\r\n\r\nhi\r\n"), out);

        String part = "--BB\r\nContent-Type: message/rfc822\r\n\r\n" + qpBody + "\r\n--BB--\r\n";
        out = new String(redacted(redact(part, "multipart/related; boundary=BB")), StandardCharsets.US_ASCII);
        assertFalse(out.contains(qp(KEY)), out);
        assertTrue(out.contains("[REDACTED:github_token]"), out);
    }

    private static byte[] redacted(HttpRequestResult r) {
        assertEquals(Decision.ALLOW, r.decision());
        return r.body().orElseThrow(() -> new AssertionError("nothing was redacted")).toByteArray();
    }
}
