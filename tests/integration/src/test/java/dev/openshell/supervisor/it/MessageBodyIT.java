package dev.openshell.supervisor.it;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.openshell.middleware.spi.internal.EncodedWords;
import jakarta.json.Json;
import java.io.ByteArrayOutputStream;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * Attacker pass 9, P11-6, through {@code supervisor run} (the image) with real {@code curl} over plain HTTP and
 * intercepted HTTPS, against {@code openshell/regex} under {@code fail_closed}: a key in a {@code message/rfc822},
 * {@code message/global} or {@code application/mbox} body, or in a {@code message/rfc822} part of a
 * {@code multipart/related} body (Gmail's upload shapes), written quoted-printable, base64 or in an RFC 2047 word
 * of a header, is denied in deny mode (403 {@code secret_detected}, nothing upstream) and reaches the upstream
 * redacted in redact mode (a MIME reader of what it gets finds no key); a message in UTF-7 is refused as
 * {@code body_undecodable}. Nothing of the key appears in the answer, the audit log or the supervisor's output.
 */
class MessageBodyIT extends RunningWorld {
    /** A fake key in the GitHub token format; never a real secret. */
    static final String KEY = "ghp_R8xq2LmT5vW9zK3nB7cF1hJ4pD6sG0aYeU2i";
    static final String KEY_PART = "2LmT5vW9zK3nB7cF1hJ4";
    private static final String H = "From: a@x.test\r\nTo: b@y.test\r\n";

    @AfterAll
    static void noKeyInTheLogs() throws Exception {
        if (supervisor != null) {
            String everything = Files.readString(world.audit) + supervisor.stdout();
            assertFalse(everything.contains(KEY_PART), "no key in any log or audit line");
        }
    }

    private static String qp(String s) {
        StringBuilder b = new StringBuilder();
        for (char c : s.toCharArray()) {
            b.append(String.format("=%02X", (int) c));
        }
        return b.toString();
    }

    private static String b64(String s) {
        return Base64.getEncoder().encodeToString(s.getBytes(StandardCharsets.US_ASCII));
    }

    /** One body: its name, text and {@code Content-Type}. */
    record Input(String name, String body, String contentType) {
    }

    static List<Input> inputs() {
        String qpMessage = H + "Subject: s\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n" + qp(KEY) + "\r\n";
        String b64Message = H + "Subject: s\r\nContent-Transfer-Encoding: base64\r\n\r\n" + b64(KEY).substring(0, 20)
                + "\r\n" + b64(KEY).substring(20) + "\r\n";
        String subject = H + "Subject: =?utf-8?B?" + b64(KEY) + "?=\r\n\r\nhi\r\n";
        String nested = H + "MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=ZZ\r\n\r\n--ZZ\r\n"
                + "Content-Type: text/plain\r\nContent-Transfer-Encoding: base64\r\n\r\n" + b64(KEY) + "\r\n--ZZ--\r\n";
        return List.of(new Input("message/rfc822 QP body", qpMessage, "message/rfc822"),
                new Input("message/rfc822 base64 body", b64Message, "message/rfc822"),
                new Input("message/rfc822 RFC 2047 subject", subject, "message/rfc822"),
                new Input("message/rfc822 nested multipart", nested, "message/rfc822"),
                new Input("message/global QP body", qpMessage, "message/global"),
                new Input("application/mbox", "From a@x.test Mon Dec  7 06:00:00 2026\r\n" + b64Message
                        + "From b@y.test Mon Dec  7 06:00:01 2026\r\n" + subject, "application/mbox"),
                new Input("message/rfc822 part of multipart/related", "--BB\r\nContent-Type: application/json; "
                        + "charset=UTF-8\r\n\r\n{}\r\n--BB\r\nContent-Type: message/rfc822\r\n\r\n" + qpMessage
                        + "\r\n--BB--\r\n", "multipart/related; boundary=BB"));
    }

    private static Curl.Result post(boolean tls, String host, String body, String type) throws Exception {
        return post(tls, host, "/upload", body.getBytes(StandardCharsets.ISO_8859_1), type);
    }

    private static String code(Curl.Result r) {
        return r.status() == 403 ? Json.createReader(new StringReader(r.body())).readObject()
                .getString("reason_code", "") : "";
    }

    /** {@return what a MIME reader reads of a message: as sent, quoted-printable and base64 decoded, words decoded} */
    static String readings(String s) {
        StringBuilder b = new StringBuilder(s).append('\n').append(EncodedWords.decode(s).text()).append('\n');
        ByteArrayOutputStream qp = new ByteArrayOutputStream();
        for (int i = 0; i < s.length(); i++) {
            if (s.charAt(i) == '=' && i + 2 < s.length() && Character.digit(s.charAt(i + 1), 16) >= 0
                    && Character.digit(s.charAt(i + 2), 16) >= 0) {
                qp.write(Integer.parseInt(s.substring(i + 1, i + 3), 16));
                i += 2;
            } else if (!(s.charAt(i) == '=' && i + 1 < s.length() && s.charAt(i + 1) == '\r')) {
                qp.write(s.charAt(i));
            }
        }
        b.append(qp.toString(StandardCharsets.ISO_8859_1)).append('\n');
        StringBuilder run = new StringBuilder();
        for (String line : (s + "\r\n-").split("\r?\n")) {
            if (line.matches("[A-Za-z0-9+/=]{4,}")) {
                run.append(line);
            } else if (!run.isEmpty()) {
                try {
                    b.append(new String(Base64.getMimeDecoder().decode(run.toString()), StandardCharsets.ISO_8859_1))
                            .append('\n');
                } catch (IllegalArgumentException e) {
                    // not base64
                }
                run.setLength(0);
            }
        }
        return b.toString();
    }

    @Test
    void anEncodedKeyInAMessageIsDeniedOrRedacted() throws Exception {
        List<String> failures = new ArrayList<>();
        for (boolean tls : new boolean[] {false, true}) {
            RawUpstream upstream = tls ? world.tls : world.plain;
            for (Input in : inputs()) {
                String what = (tls ? "HTTPS " : "HTTP ") + in.name() + ": ";
                int before = upstream.count();
                Curl.Result denied = post(tls, ProxyWorld.DENY, in.body(), in.contentType());
                if (!code(denied).equals("secret_detected") || upstream.count() != before) {
                    failures.add(what + "deny mode answered " + denied.status() + " " + code(denied));
                    upstream.drain();
                }
                Curl.Result redacted = post(tls, ProxyWorld.REDACT, in.body(), in.contentType());
                if (redacted.status() != 200) {
                    failures.add(what + "redact mode answered " + redacted.status() + " " + code(redacted));
                    upstream.drain();
                    continue;
                }
                String got = new String(upstream.take().body(), StandardCharsets.ISO_8859_1);
                String read = readings(got);
                if (read.contains(KEY_PART) || !read.contains("[REDACTED:github_token]")) {
                    failures.add(what + "the upstream's MIME reader reads the key, or no placeholder");
                }
                assertFalse(denied.body().contains(KEY_PART) || redacted.body().contains(KEY_PART), what);
            }
            for (String host : List.of(ProxyWorld.DENY, ProxyWorld.REDACT)) {
                int before = upstream.count();
                Curl.Result r = post(tls, host, H + "Subject: s\r\nContent-Type: text/plain; charset=utf-7\r\n\r\n+"
                        + "AGcAaABwAF8-" + KEY.substring(4) + "\r\n", "message/rfc822");
                if (!code(r).equals("body_undecodable") || upstream.count() != before) {
                    failures.add(host + " UTF-7 message answered " + r.status() + " " + code(r));
                    upstream.drain();
                }
            }
        }
        assertTrue(failures.isEmpty(), "each is denied for the key, or forwarded redacted:\n"
                + String.join("\n", failures));
    }
}
