package dev.openshell.supervisor.it;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Deque;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * What an AWS service does with a request signed with Signature Version 4 (header form, {@code AWS4-HMAC-SHA256}):
 * rebuild the canonical request from the request as received, derive the signing key from the secret, recompute the
 * signature and compare. Written for the tests from AWS's published description of the algorithm, independently of
 * the supervisor's signer, and checked against AWS's published test suite ({@code SigV4VerifierTest}).
 *
 * <p>Canonical URI: dot segments and empty segments removed (a trailing {@code /} kept), then every segment
 * URI-encoded (RFC 3986 unreserved characters kept), which encodes an already percent-encoded wire path a second
 * time. Canonical query: every parameter percent-decoded, re-encoded, sorted by name then value; a parameter without
 * {@code =} has an empty value. Canonical headers: the signed headers' values in wire order, each trimmed with runs
 * of spaces folded, joined by {@code ,}. Payload hash: {@code X-Amz-Content-Sha256} when sent (checked against the
 * body unless {@code UNSIGNED-PAYLOAD}), else the SHA-256 of the body.
 */
final class SigV4Verifier {
    static final String ALGORITHM = "AWS4-HMAC-SHA256";
    private static final HexFormat HEX = HexFormat.of();

    /**
     * What the verifying service knows.
     *
     * @param accessKeyId the access key ID the request must name
     * @param secretAccessKey the secret
     * @param region the region the request must be scoped to
     * @param service the service the request must be scoped to
     */
    record Key(String accessKeyId, String secretAccessKey, String region, String service) {
    }

    /**
     * The verdict.
     *
     * @param valid whether the signature verifies
     * @param problem why not; empty when valid
     * @param canonicalRequest the canonical request rebuilt from the request as received (empty when the
     *     {@code Authorization} header could not be read)
     * @param signedHeaders the signed header names, as the request listed them
     */
    record Verdict(boolean valid, String problem, String canonicalRequest, List<String> signedHeaders) {
        static Verdict bad(String problem) {
            return new Verdict(false, problem, "", List.of());
        }
    }

    private SigV4Verifier() {
    }

    /**
     * Verifies one request.
     *
     * @param key the expected key and scope
     * @param method the method
     * @param rawPath the path as received
     * @param rawQuery the query as received, without {@code ?}; empty when none
     * @param headers values by lowercase name, each name's values in wire order
     * @param body the body as received
     * @return the verdict
     */
    static Verdict verify(Key key, String method, String rawPath, String rawQuery, Map<String, List<String>> headers,
                          byte[] body) {
        List<String> auth = headers.getOrDefault("authorization", List.of());
        if (auth.size() != 1 || !auth.get(0).startsWith(ALGORITHM + " ")) {
            return Verdict.bad("expected exactly one " + ALGORITHM + " Authorization field, found " + auth.size());
        }
        Map<String, String> parts = new LinkedHashMap<>();
        for (String p : auth.get(0).substring(ALGORITHM.length() + 1).split(",")) {
            String t = p.strip();
            int eq = t.indexOf('=');
            if (eq <= 0) {
                return Verdict.bad("malformed Authorization component");
            }
            parts.put(t.substring(0, eq), t.substring(eq + 1));
        }
        String credential = parts.get("Credential");
        String signed = parts.get("SignedHeaders");
        String signature = parts.get("Signature");
        if (credential == null || signed == null || signature == null || parts.size() != 3) {
            return Verdict.bad("Authorization needs exactly Credential, SignedHeaders and Signature");
        }
        String[] scope = credential.split("/");
        if (scope.length != 5 || !scope[4].equals("aws4_request")) {
            return Verdict.bad("malformed credential scope");
        }
        if (!scope[0].equals(key.accessKeyId())) {
            return Verdict.bad("signed with another access key");
        }
        if (!scope[2].equals(key.region()) || !scope[3].equals(key.service())) {
            return Verdict.bad("scoped to another region or service");
        }
        List<String> amzDate = headers.getOrDefault("x-amz-date", List.of());
        if (amzDate.size() != 1 || !amzDate.get(0).startsWith(scope[1] + "T")) {
            return Verdict.bad("X-Amz-Date missing, repeated, or not on the scope's date");
        }
        List<String> names = List.of(signed.split(";"));
        if (!names.contains("host") || !names.contains("x-amz-date")
                || !names.equals(names.stream().sorted().distinct().toList())
                || names.stream().anyMatch(n -> !n.equals(n.toLowerCase(java.util.Locale.ROOT)))) {
            return Verdict.bad("SignedHeaders must be lowercase, sorted, unique, and include host and x-amz-date");
        }
        StringBuilder canonicalHeaders = new StringBuilder();
        for (String n : names) {
            List<String> values = headers.get(n);
            if (values == null || values.isEmpty()) {
                return Verdict.bad("signed header " + n + " was not received");
            }
            canonicalHeaders.append(n).append(':')
                    .append(String.join(",", values.stream().map(v -> v.strip().replaceAll(" +", " ")).toList()))
                    .append('\n');
        }
        String bodyHash = hex(sha256(body));
        List<String> declared = headers.getOrDefault("x-amz-content-sha256", List.of());
        String payloadHash = bodyHash;
        if (!declared.isEmpty()) {
            payloadHash = declared.get(0);
            if (declared.size() != 1 || (!payloadHash.equals("UNSIGNED-PAYLOAD") && !payloadHash.equals(bodyHash))) {
                return Verdict.bad("X-Amz-Content-Sha256 does not match the body");
            }
        }
        String canonicalRequest = method + "\n" + canonicalUri(rawPath) + "\n" + canonicalQuery(rawQuery) + "\n"
                + canonicalHeaders + "\n" + signed + "\n" + payloadHash;
        String stringToSign = ALGORITHM + "\n" + amzDate.get(0) + "\n" + String.join("/", scope[1], scope[2],
                scope[3], scope[4]) + "\n" + hex(sha256(canonicalRequest.getBytes(StandardCharsets.UTF_8)));
        byte[] k = hmac(("AWS4" + key.secretAccessKey()).getBytes(StandardCharsets.UTF_8), scope[1]);
        k = hmac(k, scope[2]);
        k = hmac(k, scope[3]);
        k = hmac(k, "aws4_request");
        byte[] expected = hmac(k, stringToSign);
        byte[] given;
        try {
            given = HEX.parseHex(signature);
        } catch (IllegalArgumentException e) {
            return new Verdict(false, "signature is not hex", canonicalRequest, names);
        }
        boolean ok = MessageDigest.isEqual(expected, given);
        return new Verdict(ok, ok ? "" : "signature mismatch", canonicalRequest, names);
    }

    static String canonicalUri(String rawPath) {
        Deque<String> segments = new ArrayDeque<>();
        String[] in = rawPath.split("/", -1);
        for (String s : in) {
            if (s.isEmpty() || s.equals(".")) {
                continue;
            }
            if (s.equals("..")) {
                segments.pollLast();
            } else {
                segments.addLast(s);
            }
        }
        StringBuilder b = new StringBuilder();
        for (String s : segments) {
            b.append('/').append(encode(s.getBytes(StandardCharsets.UTF_8)));
        }
        String last = in[in.length - 1];
        if (segments.isEmpty() || last.isEmpty() || last.equals(".") || last.equals("..")) {
            b.append('/');
        }
        return b.toString();
    }

    static String canonicalQuery(String rawQuery) {
        if (rawQuery.isEmpty()) {
            return "";
        }
        List<String[]> params = new ArrayList<>();
        for (String p : rawQuery.split("&")) {
            if (p.isEmpty()) {
                continue;
            }
            int eq = p.indexOf('=');
            String name = eq < 0 ? p : p.substring(0, eq);
            String value = eq < 0 ? "" : p.substring(eq + 1);
            params.add(new String[] {encode(decode(name)), encode(decode(value))});
        }
        params.sort(Comparator.<String[], String>comparing(a -> a[0]).thenComparing(a -> a[1]));
        return String.join("&", params.stream().map(a -> a[0] + "=" + a[1]).toList());
    }

    /** Percent-decoding to bytes ({@code +} stays a plus); other characters as their UTF-8 bytes. */
    private static byte[] decode(String s) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '%' && i + 2 < s.length() && isHex(s.charAt(i + 1)) && isHex(s.charAt(i + 2))) {
                out.write(Integer.parseInt(s.substring(i + 1, i + 3), 16));
                i += 2;
            } else {
                int cp = s.codePointAt(i);
                out.writeBytes(new String(Character.toChars(cp)).getBytes(StandardCharsets.UTF_8));
                i += Character.charCount(cp) - 1;
            }
        }
        return out.toByteArray();
    }

    private static boolean isHex(char c) {
        return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
    }

    /** RFC 3986 encoding: unreserved characters kept, every other byte {@code %XX} (upper case). */
    private static String encode(byte[] bytes) {
        StringBuilder b = new StringBuilder();
        for (byte x : bytes) {
            int c = x & 0xff;
            if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_'
                    || c == '.' || c == '~') {
                b.append((char) c);
            } else {
                b.append('%').append(String.format("%02X", c));
            }
        }
        return b.toString();
    }

    static byte[] sha256(byte[] data) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(data);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    private static byte[] hmac(byte[] key, String data) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(key, "HmacSHA256"));
            return mac.doFinal(data.getBytes(StandardCharsets.UTF_8));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    static String hex(byte[] b) {
        return HEX.formatHex(b);
    }
}
