package dev.openshell.builtin.sigv4;

import dev.openshell.middleware.spi.HeaderTable;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * AWS Signature Version 4 (header-based, {@code AWS4-HMAC-SHA256}), checked against AWS's published test suite.
 *
 * <p>Canonical request: method, canonical URI, canonical query, canonical headers, signed headers, payload hash.
 * <ul>
 *   <li>URI: for every service but {@code s3}, dot segments and repeated slashes are removed, then each segment is
 *       URI-encoded (RFC 3986 unreserved characters kept, everything else {@code %XX}, so an already percent-encoded
 *       wire path is encoded a second time, as the AWS SDKs do). For {@code s3} the wire path is used as is.</li>
 *   <li>Query: each parameter is percent-decoded, then re-encoded; parameters are sorted by encoded name, then
 *       value; a parameter without {@code =} gets an empty value; {@code +} is a literal plus.</li>
 *   <li>Headers: names lowercased; values trimmed with runs of spaces folded to one; repeated headers joined with
 *       {@code ,} in wire order; sorted by name.</li>
 * </ul>
 * The class holds no state; the secret is used only inside {@link #sign} and never kept.
 */
public final class SigV4Signer {
    /** The algorithm name in the string to sign and the {@code Authorization} header. */
    public static final String ALGORITHM = "AWS4-HMAC-SHA256";
    /** The payload hash that leaves the body unsigned. */
    public static final String UNSIGNED_PAYLOAD = "UNSIGNED-PAYLOAD";
    private static final DateTimeFormatter AMZ_DATE = DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmss'Z'")
            .withZone(ZoneOffset.UTC);
    private static final HexFormat HEX = HexFormat.of();

    private SigV4Signer() {
    }

    /**
     * One header line of the request to sign.
     *
     * @param name the name as sent
     * @param value the value as sent
     */
    public record Header(String name, String value) {
        /** @throws NullPointerException if either part is {@code null} */
        public Header {
            Objects.requireNonNull(name, "name");
            Objects.requireNonNull(value, "value");
        }
    }

    /**
     * What {@link #sign} computed.
     *
     * @param canonicalRequest the canonical request
     * @param stringToSign the string to sign
     * @param signature the hex signature
     * @param authorization the {@code Authorization} header value
     */
    public record Signature(String canonicalRequest, String stringToSign, String signature, String authorization) {
    }

    /**
     * Signs a request.
     *
     * @param method the HTTP method
     * @param rawPath the request path as sent
     * @param rawQuery the query as sent, without {@code ?}, possibly empty
     * @param headers the headers to sign (all of them are signed); must include {@code host} and
     *     {@code x-amz-date}
     * @param payloadHash the hex SHA-256 of the body, or {@link #UNSIGNED_PAYLOAD}
     * @param accessKeyId the access key ID
     * @param secretAccessKey the secret access key, UTF-8 bytes
     * @param region the region, e.g. {@code us-east-1}
     * @param service the service, e.g. {@code execute-api}
     * @param time the signing time, the same instant as the {@code x-amz-date} header
     * @return the signature
     */
    public static Signature sign(String method, String rawPath, String rawQuery, List<Header> headers,
                                 String payloadHash, String accessKeyId, byte[] secretAccessKey, String region,
                                 String service, Instant time) {
        Map<String, String> canonicalHeaders = canonicalHeaders(headers);
        String signedHeaders = String.join(";", canonicalHeaders.keySet());
        StringBuilder creq = new StringBuilder(256)
                .append(method).append('\n')
                .append(canonicalUri(rawPath, !service.equals("s3"))).append('\n')
                .append(canonicalQuery(rawQuery)).append('\n');
        canonicalHeaders.forEach((k, v) -> creq.append(k).append(':').append(v).append('\n'));
        creq.append('\n').append(signedHeaders).append('\n').append(payloadHash);
        String amzDate = AMZ_DATE.format(time);
        String date = amzDate.substring(0, 8);
        String scope = date + "/" + region + "/" + service + "/aws4_request";
        String sts = ALGORITHM + "\n" + amzDate + "\n" + scope + "\n" + sha256Hex(creq.toString()
                .getBytes(StandardCharsets.UTF_8));
        String signature = signatureOf(sts, secretAccessKey, date, region, service);
        String authorization = ALGORITHM + " Credential=" + accessKeyId + "/" + scope + ", SignedHeaders="
                + signedHeaders + ", Signature=" + signature;
        return new Signature(creq.toString(), sts, signature, authorization);
    }

    /**
     * {@return the hex signature of a string to sign: HMAC-SHA256 with the key derived from the secret, date,
     * region and service}
     */
    static String signatureOf(String stringToSign, byte[] secretAccessKey, String date, String region,
                              String service) {
        byte[] key = hmac(("AWS4").getBytes(StandardCharsets.UTF_8), secretAccessKey, date);
        key = hmac(key, region);
        key = hmac(key, service);
        key = hmac(key, "aws4_request");
        return HEX.formatHex(hmac(key, stringToSign));
    }

    /** {@return the {@code x-amz-date} value for {@code time}} @param time the instant */
    public static String amzDate(Instant time) {
        return AMZ_DATE.format(time);
    }

    /**
     * {@return the lowercase hex SHA-256 of the bytes of {@code parts}, in order (a body's segments, hashed without
     * joining them)}
     *
     * @param parts the bytes, each from its position to its limit (not consumed)
     */
    public static String sha256Hex(java.util.List<java.nio.ByteBuffer> parts) {
        try {
            MessageDigest d = MessageDigest.getInstance("SHA-256");
            for (java.nio.ByteBuffer p : parts) {
                d.update(p.duplicate());
            }
            return HEX.formatHex(d.digest());
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("SHA-256 unavailable", e);
        }
    }

    /**
     * {@return the lowercase hex SHA-256 of {@code bytes}}
     *
     * @param bytes the bytes
     */
    public static String sha256Hex(byte[] bytes) {
        try {
            return HEX.formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("SHA-256 unavailable", e);
        }
    }

    static Map<String, String> canonicalHeaders(List<Header> headers) {
        Map<String, List<String>> grouped = new TreeMap<>();
        for (Header h : headers) {
            grouped.computeIfAbsent(h.name().toLowerCase(Locale.ROOT), k -> new ArrayList<>())
                    .add(foldSpaces(h.value()));
        }
        Map<String, String> out = new LinkedHashMap<>();
        grouped.forEach((k, v) -> out.put(k, String.join(",", v)));
        return out;
    }

    private static String foldSpaces(String value) {
        String trimmed = value.strip();
        StringBuilder b = new StringBuilder(trimmed.length());
        boolean space = false;
        for (int i = 0; i < trimmed.length(); i++) {
            char c = trimmed.charAt(i);
            if (c == ' ' || c == '\t') {
                if (!space) {
                    b.append(' ');
                }
                space = true;
            } else {
                b.append(c);
                space = false;
            }
        }
        return b.toString();
    }

    static String canonicalUri(String rawPath, boolean normalize) {
        String path = rawPath.isEmpty() ? "/" : rawPath;
        if (!normalize) {
            return path;
        }
        // RFC 3986 5.2.4 remove_dot_segments, plus empty segments ("//") dropped
        List<String> out = new ArrayList<>();
        String[] segments = path.split("/", -1);
        for (String seg : segments) {
            if (seg.equals("..")) {
                if (!out.isEmpty()) {
                    out.remove(out.size() - 1);
                }
            } else if (!seg.isEmpty() && !seg.equals(".")) {
                out.add(seg);
            }
        }
        String last = segments[segments.length - 1];
        boolean trailingSlash = path.endsWith("/") || last.equals(".") || last.equals("..");
        StringBuilder b = new StringBuilder("/");
        for (int i = 0; i < out.size(); i++) {
            b.append(i == 0 ? "" : "/").append(encode(out.get(i)));
        }
        if (trailingSlash && !out.isEmpty()) {
            b.append('/');
        }
        return b.toString();
    }

    static String canonicalQuery(String rawQuery) {
        if (rawQuery.isEmpty()) {
            return "";
        }
        List<String[]> params = new ArrayList<>();
        for (String p : rawQuery.split("&", -1)) {
            if (p.isEmpty()) {
                continue;
            }
            int eq = p.indexOf('=');
            String k = eq < 0 ? p : p.substring(0, eq);
            String v = eq < 0 ? "" : p.substring(eq + 1);
            params.add(new String[] {encode(decode(k)), encode(decode(v))});
        }
        params.sort((a, b) -> a[0].equals(b[0]) ? a[1].compareTo(b[1]) : a[0].compareTo(b[0]));
        StringBuilder b = new StringBuilder();
        for (String[] p : params) {
            if (!b.isEmpty()) {
                b.append('&');
            }
            b.append(p[0]).append('=').append(p[1]);
        }
        return b.toString();
    }

    /** RFC 3986 percent-encoding of UTF-8 bytes: unreserved characters ({@code A-Z a-z 0-9 - . _ ~}) kept. */
    static String encode(String s) {
        byte[] bytes = s.getBytes(StandardCharsets.UTF_8);
        StringBuilder b = new StringBuilder(bytes.length * 3);
        for (byte x : bytes) {
            int c = x & 0xff;
            if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.'
                    || c == '_' || c == '~') {
                b.append((char) c);
            } else {
                b.append('%').append(Character.toUpperCase(Character.forDigit(c >> 4, 16)))
                        .append(Character.toUpperCase(Character.forDigit(c & 0xf, 16)));
            }
        }
        return b.toString();
    }

    /** Percent-decoding to UTF-8; a malformed escape is kept literally. */
    static String decode(String s) {
        if (s.indexOf('%') < 0) {
            return s;
        }
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream(s.length());
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '%' && i + 2 < s.length() && Character.digit(s.charAt(i + 1), 16) >= 0
                    && Character.digit(s.charAt(i + 2), 16) >= 0) {
                out.write(Character.digit(s.charAt(i + 1), 16) * 16 + Character.digit(s.charAt(i + 2), 16));
                i += 2;
            } else {
                byte[] enc = String.valueOf(c).getBytes(StandardCharsets.UTF_8);
                out.write(enc, 0, enc.length);
            }
        }
        return out.toString(StandardCharsets.UTF_8);
    }

    private static byte[] hmac(byte[] prefix, byte[] secret, String data) {
        byte[] key = new byte[prefix.length + secret.length];
        System.arraycopy(prefix, 0, key, 0, prefix.length);
        System.arraycopy(secret, 0, key, prefix.length, secret.length);
        try {
            return hmac(key, data);
        } finally {
            java.util.Arrays.fill(key, (byte) 0);
        }
    }

    private static byte[] hmac(byte[] key, String data) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(key, "HmacSHA256"));
            return mac.doFinal(data.getBytes(StandardCharsets.UTF_8));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 unavailable", e);
        }
    }

    /** The signature itself and fields that intermediaries rewrite (AWS SDKs leave them unsigned too). */
    private static final Set<String> VOLATILE = Set.of("authorization", "user-agent", "x-amzn-trace-id");

    /**
     * {@return whether this signer never signs a field: hop-by-hop on forwarding or framing ({@link HeaderTable}:
     * the proxy drops or rewrites them after signing), the signature itself, or a volatile field}
     *
     * @param lower the field name, lowercased
     */
    static boolean unsigned(String lower) {
        return HeaderTable.hopByHop(lower) || HeaderTable.framing(lower) || VOLATILE.contains(lower);
    }
}
