package dev.openshell.supervisor.proxy.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.openshell.middleware.spi.internal.DroppedSequences;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.Test;

/** The streaming secret scrubber: no chunking and no encoding of the secret lets it through. */
class SecretScrubberTest {
    private static final String PLACEHOLDER = "openshell:resolve:env:TOKEN";

    @Provide
    Arbitrary<String> secrets() {
        // letters, digits and characters every encoding treats specially; never the filler characters below
        return Arbitraries.strings().withChars("abcXYZ0189/+=&\"\\%é").ofMinLength(6).ofMaxLength(40)
                .map(s -> "k" + s);
    }

    @Provide
    Arbitrary<String> filler() {
        return Arbitraries.strings().withChars(" <>\n[]").ofMaxLength(30);
    }

    private static byte[] stream(SecretScrubber s, byte[] all, List<Integer> cuts) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int at = 0;
        for (int c : cuts) {
            int next = Math.min(all.length, at + c);
            byte[] chunk = java.util.Arrays.copyOfRange(all, at, next);
            out.writeBytes(s.feed(chunk));
            at = next;
        }
        out.writeBytes(s.feed(java.util.Arrays.copyOfRange(all, at, all.length)));
        out.writeBytes(s.finish());
        return out.toByteArray();
    }

    @Property(tries = 200)
    void noChunkingAndNoEncodingLetsTheSecretThrough(@ForAll("secrets") String secret,
                                                     @ForAll("filler") String before,
                                                     @ForAll("filler") String after,
                                                     @ForAll @IntRange(min = 0, max = 20) int formIndex,
                                                     @ForAll @Size(max = 12) List<@IntRange(min = 0, max = 9) Integer>
                                                             cuts) {
        List<String> forms = SecretScrubber.forms(secret);
        String form = forms.get(formIndex % forms.size());
        byte[] input = (before + form + after + form).getBytes(StandardCharsets.UTF_8);
        byte[] out = stream(new SecretScrubber(Map.of(secret, PLACEHOLDER)), input, cuts);
        String text = new String(out, StandardCharsets.UTF_8);
        for (String f : forms) {
            assertFalse(text.contains(f), () -> "form leaked");
        }
        assertEquals(before + PLACEHOLDER + after + PLACEHOLDER, text);
        assertEquals(text, new String(new SecretScrubber(Map.of(secret, PLACEHOLDER)).scrubAll(input),
                StandardCharsets.UTF_8), "chunking does not change the result");
    }

    @Property(tries = 200)
    void textWithoutTheSecretPassesUnchanged(@ForAll("filler") String text,
                                             @ForAll @Size(max = 8) List<@IntRange(min = 0, max = 9) Integer> cuts) {
        byte[] in = text.getBytes(StandardCharsets.UTF_8);
        assertEquals(text, new String(stream(new SecretScrubber(Map.of("k-secret-1", PLACEHOLDER)), in, cuts),
                StandardCharsets.UTF_8));
    }

    @Property(tries = 200)
    void theStreamingSideAgreesWithTheWholeTextForSeveralSecrets(@ForAll("secrets") String a,
                                                                 @ForAll("secrets") String b,
                                                                 @ForAll("filler") String filler,
                                                                 @ForAll @IntRange(min = 0, max = 40) int formA,
                                                                 @ForAll @IntRange(min = 0, max = 40) int formB,
                                                                 @ForAll @Size(max = 12) List<@IntRange(min = 1,
                                                                         max = 9) Integer> cuts) throws Exception {
        List<String> fa = SecretScrubber.forms(a);
        List<String> fb = SecretScrubber.forms(b);
        byte[] input = (filler + fa.get(formA % fa.size()) + filler + fb.get(formB % fb.size()) + filler)
                .getBytes(StandardCharsets.UTF_8);
        List<SecretScrubber.Secret> secrets = a.equals(b) ? List.of(new SecretScrubber.Secret("A", a, "<A>"))
                : List.of(new SecretScrubber.Secret("A", a, "<A>"), new SecretScrubber.Secret("B", b, "<B>"));
        SecretScrubber s = new SecretScrubber(secrets);
        ByteArrayOutputStream sink = new ByteArrayOutputStream();
        SecretScrubber.Scrubbing out = s.scrubbing(sink);
        int at = 0;
        for (int c : cuts) {
            int next = Math.min(input.length, at + c);
            out.write(input, at, next - at);
            at = next;
        }
        out.write(input, at, input.length - at);
        out.finish();
        String text = sink.toString(StandardCharsets.UTF_8);
        assertEquals(new String(new SecretScrubber(secrets).scrubAll(input), StandardCharsets.UTF_8), text);
        assertFalse(text.contains(a) || text.contains(b), "no secret survives");
        assertTrue(s.matches() >= 2 || a.contains(b) || b.contains(a), "both found");
    }

    @Test
    void theLastWindowMinusOneBytesAreHeldBackWhateverTheyAre() {
        SecretScrubber s = new SecretScrubber(Map.of("k-secret-1", PLACEHOLDER));
        int keep = s.window() - 1;
        byte[] plain = "data: hello\n\n".getBytes(StandardCharsets.UTF_8);
        byte[] start = "data: k-sec".getBytes(StandardCharsets.UTF_8);
        assertEquals(Math.max(0, plain.length - keep), s.feed(plain).length, "held whether or not it could start it");
        String held = new String(s.finish(), StandardCharsets.UTF_8); // the upstream went silent: the tail goes
        assertEquals("data: hello\n\n".substring(Math.max(0, plain.length - keep)), held);
        assertEquals(Math.max(0, start.length - keep), s.feed(start).length, "the same schedule for a possible start");
        String filler = "x".repeat(keep);
        assertEquals("data: " + PLACEHOLDER + "!", new String(s.feed(("ret-1!" + filler).getBytes(
                StandardCharsets.UTF_8)), StandardCharsets.UTF_8), "a value split across reads is still found");
        assertEquals(filler, new String(s.finish(), StandardCharsets.UTF_8), "the end writes the held tail");
        assertEquals(java.util.Set.of(PLACEHOLDER), s.matchedNames());
    }

    @Test
    void findsTheSecretInsideBasicCredentialsAndCountsMatches() {
        String secret = "s3cret/+value";
        SecretScrubber s = new SecretScrubber(Map.of(secret, PLACEHOLDER));
        for (String user : List.of("a", "ab", "abc")) {
            String basic = Base64.getEncoder().encodeToString((user + ":" + secret)
                    .getBytes(StandardCharsets.UTF_8));
            String out = new String(s.scrubAll(basic.getBytes(StandardCharsets.US_ASCII)), StandardCharsets.UTF_8);
            assertTrue(out.contains(PLACEHOLDER), "alignment of user '" + user + "': " + out);
        }
        assertEquals(3, s.matches());
        assertTrue(s.window() >= SecretScrubber.percent(secret.getBytes(StandardCharsets.UTF_8), true, "").length());
    }

    /**
     * A padded base64 encoding that the value ends leaves nothing of it: the last character (the value's last bits and
     * zero bits) and its {@code =} padding go with the rest, at every length and byte alignment (the residue
     * {@code g==} of a 25-byte value once reached a WebSocket client).
     */
    @Property(tries = 300)
    void aPaddedEncodingTheValueEndsIsReplacedWhole(@ForAll("secrets") String secret,
                                                    @ForAll @IntRange(min = 0, max = 2) int lead,
                                                    @ForAll boolean urlSafe) {
        SecretScrubber s = new SecretScrubber(Map.of(secret, PLACEHOLDER));
        Base64.Encoder enc = urlSafe ? Base64.getUrlEncoder() : Base64.getEncoder();
        byte[] value = secret.getBytes(StandardCharsets.UTF_8);
        byte[] shifted = new byte[lead + value.length];
        System.arraycopy(value, 0, shifted, lead, value.length);
        String encoded = enc.encodeToString(shifted);
        String out = new String(s.scrubAll(("b64 " + encoded + " end").getBytes(StandardCharsets.US_ASCII)),
                StandardCharsets.US_ASCII);
        String head = lead == 0 ? "" : encoded.substring(0, lead + 1);
        assertEquals("b64 " + head + PLACEHOLDER + " end", out);
    }

    /**
     * Any number of ISO 2022 sequences in one gap (attacker pass 8: 70; pass 9, P11-11: the cut this used to cause
     * was a prefix oracle): the streamed value is replaced, as in a complete text.
     */
    @Test
    void aSpellingWithManySequencesIsReplacedStreamedAndComplete() throws Exception {
        String secret = "k9Q7zR2mW4xT8vN1pL6sJ3hF5dG0bCq";
        String text = "before " + "x".repeat(2000) + "k" + "\u001b(B".repeat(70) + secret.substring(1) + " after"
                + "y".repeat(5000); // the value far from the end: decided while streaming, not in the final tail
        byte[] bytes = text.getBytes(StandardCharsets.ISO_8859_1);
        SecretScrubber s = new SecretScrubber(Map.of(secret, PLACEHOLDER));
        ByteArrayOutputStream sink = new ByteArrayOutputStream();
        SecretScrubber.Scrubbing out = s.scrubbing(sink);
        for (int i = 0; i < bytes.length; i += 100) {
            out.write(bytes, i, Math.min(100, bytes.length - i));
        }
        assertTrue(sink.toString(StandardCharsets.ISO_8859_1).contains(PLACEHOLDER + " after"), "decided streaming");
        out.finish();
        String expected = "before " + "x".repeat(2000) + PLACEHOLDER + " after" + "y".repeat(5000);
        assertEquals(expected, sink.toString(StandardCharsets.ISO_8859_1));
        SecretScrubber whole = new SecretScrubber(Map.of(secret, PLACEHOLDER));
        assertEquals(expected, new String(whole.scrubAll(bytes), StandardCharsets.ISO_8859_1));
    }

    /** A JSON string spelling of {@code secret}: each character literal or escaped, as {@code pick} chooses. */
    private static String jsonMix(String secret, List<Integer> pick) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < secret.length(); i++) {
            char c = secret.charAt(i);
            int how = pick.isEmpty() ? 0 : pick.get(i % pick.size());
            int shortEscape = JsonSpelling.shortEscape(c);
            if (how == 1 || (how == 0 && (c == '"' || c == '\\' || c < 0x20))) {
                b.append(String.format("\\u%04x", (int) c));
            } else if (how == 2) {
                b.append(String.format("\\u%04X", (int) c));
            } else if (how == 3 && shortEscape >= 0) {
                b.append('\\').append((char) shortEscape);
            } else if (c == '"' || c == '\\') {
                b.append('\\').append(c);
            } else {
                b.append(c);
            }
        }
        return b.toString();
    }

    @Property(tries = 300)
    void anyMixOfJsonEscapesIsFound(@ForAll("secrets") String secret, @ForAll("filler") String before,
                                    @ForAll @Size(min = 1, max = 8) List<@IntRange(min = 0, max = 3) Integer> pick,
                                    @ForAll @Size(max = 12) List<@IntRange(min = 0, max = 9) Integer> cuts) {
        String form = jsonMix(secret, pick);
        byte[] input = ("{\"a\":\"" + before + form + "\"}").getBytes(StandardCharsets.UTF_8);
        String text = new String(stream(new SecretScrubber(Map.of(secret, PLACEHOLDER)), input, cuts),
                StandardCharsets.UTF_8);
        assertEquals("{\"a\":\"" + before + PLACEHOLDER + "\"}", text, "escaped as " + pick);
    }

    @Property(tries = 200)
    void everyFormInUtf16IsFoundInTheSameEncoding(@ForAll("secrets") String secret, @ForAll("filler") String before,
                                                  @ForAll @IntRange(min = 0, max = 40) int formIndex,
                                                  @ForAll boolean littleEndian, @ForAll boolean bom,
                                                  @ForAll @Size(max = 12) List<@IntRange(min = 0, max = 9) Integer>
                                                          cuts) {
        List<String> forms = SecretScrubber.forms(secret);
        String form = forms.get(formIndex % forms.size());
        java.nio.charset.Charset cs = littleEndian ? StandardCharsets.UTF_16LE : StandardCharsets.UTF_16BE;
        String text = (bom ? "\ufeff" : "") + before + form + "!";
        String out = new String(stream(new SecretScrubber(Map.of(secret, PLACEHOLDER)), text.getBytes(cs), cuts), cs);
        assertEquals((bom ? "\ufeff" : "") + before + PLACEHOLDER + "!", out);
    }

    @Test
    void aValueSplitAcrossTwoFieldsIsReplacedSoThatTheirJoinReadsThePlaceholder() {
        String secret = "k-split-secret-0123456789";
        for (int k = 1; k < secret.length(); k++) {
            SecretScrubber s = new SecretScrubber(Map.of(secret, PLACEHOLDER));
            byte[][] values = {"text/plain".getBytes(StandardCharsets.ISO_8859_1),
                    (secret.substring(k) + ";y").getBytes(StandardCharsets.ISO_8859_1),
                    ("a=" + secret.substring(0, k)).getBytes(StandardCharsets.ISO_8859_1)};
            s.scrubSplits(values);
            assertEquals("text/plain", new String(values[0], StandardCharsets.ISO_8859_1));
            assertEquals("a=", new String(values[2], StandardCharsets.ISO_8859_1), "split at " + k);
            assertEquals(PLACEHOLDER + ";y", new String(values[1], StandardCharsets.ISO_8859_1), "split at " + k);
            assertEquals(1, s.matches());
        }
    }

    /** {@return the UTF-8 bytes of {@code secret}, each literal or {@code %XX} in upper or lower case, as picked} */
    private static String percentMix(String secret, List<Integer> pick) {
        StringBuilder b = new StringBuilder();
        byte[] raw = secret.getBytes(StandardCharsets.UTF_8);
        for (int i = 0; i < raw.length; i++) {
            int p = pick.get(i % pick.size());
            String hex = String.format("%%%02X", raw[i] & 0xff);
            b.append(p == 0 ? new String(raw, i, 1, StandardCharsets.ISO_8859_1) : p == 1 ? hex
                    : hex.toLowerCase(java.util.Locale.ROOT));
        }
        return b.toString();
    }

    /** Attacker pass finding 7: every character percent-encoded, or any mix of literal and encoded bytes. */
    @Property(tries = 300)
    void anyMixOfPercentEncodingIsFound(@ForAll("secrets") String secret, @ForAll("filler") String before,
                                        @ForAll @Size(min = 1, max = 8) List<@IntRange(min = 0, max = 2) Integer> pick,
                                        @ForAll @Size(max = 12) List<@IntRange(min = 0, max = 9) Integer> cuts) {
        byte[] input = ("q=" + before + percentMix(secret, pick) + "&x").getBytes(StandardCharsets.ISO_8859_1);
        String text = new String(stream(new SecretScrubber(Map.of(secret, PLACEHOLDER)), input, cuts),
                StandardCharsets.ISO_8859_1);
        assertEquals("q=" + before + PLACEHOLDER + "&x", text, "encoded as " + pick);
    }

    @Test
    void everyCharacterPercentEncodedInEitherCaseIsFound() {
        String secret = "CrEdV4lue-7f3a9c2e";
        for (int p : new int[] {1, 2}) {
            String all = percentMix(secret, List.of(p));
            assertTrue(all.startsWith("%43%72%45%64%56%34%6") && all.contains(p == 1 ? "%6C" : "%6c"), all);
            byte[] out = new SecretScrubber(Map.of(secret, PLACEHOLDER)).scrubAll(("v=" + all + ";")
                    .getBytes(StandardCharsets.US_ASCII));
            assertEquals("v=" + PLACEHOLDER + ";", new String(out, StandardCharsets.US_ASCII));
        }
    }

    /** Attacker pass finding 7: the value in UTF-32 (either byte order) and in EBCDIC (IBM037). */
    @Test
    void theValueInUtf32AndEbcdicIsReplacedInTheSameEncoding() {
        String secret = "CrEdV4lue-7f3a9c2e/x+y";
        for (int e = FormEncodings.ALL_FORMS; e < FormEncodings.COUNT; e++) {
            byte[] before = FormEncodings.encode(e, "token: ");
            byte[] input = concat(before, FormEncodings.encode(e, secret), FormEncodings.encode(e, "!"));
            SecretScrubber s = new SecretScrubber(Map.of(secret, PLACEHOLDER));
            byte[] out = stream(s, input, List.of(3, 5, 7));
            assertEquals(java.util.Arrays.toString(concat(before, FormEncodings.encode(e, PLACEHOLDER),
                    FormEncodings.encode(e, "!"))), java.util.Arrays.toString(out), "encoding " + e);
            assertEquals(1, s.matches());
        }
        assertEquals("[-61, -103, -59, -124]", java.util.Arrays.toString(FormEncodings.encode(5, "CrEd")),
                "IBM037 as Python's cp037 maps it");
    }

    private static byte[] concat(byte[]... parts) {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        for (byte[] p : parts) {
            b.writeBytes(p);
        }
        return b.toByteArray();
    }

    /**
     * Sequences an ISO-2022 or HZ decoder drops from the text, and controls libxml2's HTML parser drops (attacker pass
     * 15c, P17c-1: a C0 control but NUL, TAB, LF, CR; an ESC that starts no escape sequence), character references to
     * characters Python's {@code html.unescape} or libxml2 drops (pass 16, P18-1) and the UTF-8 of characters
     * libxml2 drops (P18-2), each byte an ISO-8859-1 character.
     */
    private static final String[] DROPPED = {"\u001b(B", "\u001b$B", "\u001b$)C", "\u001b$(D", "\u001b&@",
            "\u000e", "\u000f", "~{", "~}", "~\n", "\u0001", "\u000b", "\u001f", "\u001b", "&#1;", "&#x1b;",
            "&#xFFFF;", "&#x10fffe;", "&#0;", "&#xd800;", "\u00ef\u00bf\u00be", "\u00ed\u00a0\u0080", "&#;", "&#x;",
            "&a;", "&nbsp;", "\u0000", "\u0000\u0000"};

    /** {@return {@code secret}'s UTF-8 bytes with, before byte k > 0, the run {@code runs[k % size]} of DROPPED} */
    private static byte[] withDropped(String secret, List<List<Integer>> runs) {
        byte[] raw = secret.getBytes(StandardCharsets.UTF_8);
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        for (int k = 0; k < raw.length; k++) {
            if (k > 0 && !runs.isEmpty()) {
                for (int d : runs.get(k % runs.size())) {
                    b.writeBytes(DROPPED[d % DROPPED.length].getBytes(StandardCharsets.ISO_8859_1));
                }
            }
            b.write(raw[k]);
        }
        return b.toByteArray();
    }

    /** Attacker pass 8, P10-4: the key split by escape sequences, SO/SI or HZ shifts in an undeclared body. */
    @Property(tries = 300)
    void anyInsertionOfDroppedSequencesIsFound(@ForAll("secrets") String secret, @ForAll("filler") String before,
                                                  @ForAll @Size(max = 8) List<@Size(max = 2) List<@IntRange(min = 0,
                                                          max = 27) Integer>> runs,
                                                  @ForAll @Size(max = 12) List<@IntRange(min = 0, max = 9) Integer>
                                                          cuts) {
        ByteArrayOutputStream in = new ByteArrayOutputStream();
        in.writeBytes(("\u001b$B" + before).getBytes(StandardCharsets.ISO_8859_1));
        in.writeBytes(withDropped(secret, runs));
        in.writeBytes("\u001b(B!".getBytes(StandardCharsets.ISO_8859_1));
        SecretScrubber s = new SecretScrubber(Map.of(secret, PLACEHOLDER));
        String text = new String(stream(s, in.toByteArray(), cuts), StandardCharsets.ISO_8859_1);
        assertEquals("\u001b$B" + before + PLACEHOLDER + "\u001b(B!", text, "inserted " + runs);
        assertEquals(1, s.matches());
    }

    @Property(tries = 200)
    void textWithDroppedSequencesButNoSecretPassesUnchanged(@ForAll("filler") String text,
                                                            @ForAll @Size(max = 8) List<@Size(max = 2)
                                                                    List<@IntRange(min = 0, max = 27) Integer>> runs,
                                                            @ForAll @Size(max = 8) List<@IntRange(min = 0, max = 9)
                                                                    Integer> cuts) {
        String secret = "k-secret-1";
        byte[] in = ("k" + text + "x" + new String(withDropped(secret.substring(1), runs), StandardCharsets.ISO_8859_1)
                + "~").getBytes(StandardCharsets.ISO_8859_1); // "k", filler, "x", the rest: never the secret
        byte[] out = stream(new SecretScrubber(Map.of(secret, PLACEHOLDER)), in, cuts);
        assertEquals(new String(in, StandardCharsets.ISO_8859_1), new String(out, StandardCharsets.ISO_8859_1));
    }

    @Test
    void theReportedSpellingsAreReplacedWholeAndBoundedOnesNotOverReplaced() {
        String key = "9Q7zKk2mXr4Lw8Vt";
        for (String body : new String[] {"k\u001b(B" + key, "k\u001b$B\u001b(B" + key, "k\u000e\u000f" + key,
                "k~{~}" + key, "k~\n" + key, "k" + "\u001b(B".repeat(4) + key, "k\u0001" + key, "k\u001b" + key,
                "k\u000b\u000c" + key, "k&#1;" + key, "k&#x7f;&#xfdd0;" + key, "k&#00000000001;" + key,
                "k\u00ef\u00bf\u00bf" + key, "k\u00ed\u00b0\u0080" + key, "k&#;" + key, "k&a;" + key,
                "k\u0000" + key}) {
            byte[] in = ("\u001b$B$3$s\u001b(B " + body + "\n").getBytes(StandardCharsets.ISO_8859_1);
            String out = new String(new SecretScrubber(Map.of("k" + key, PLACEHOLDER)).scrubAll(in),
                    StandardCharsets.ISO_8859_1);
            assertEquals("\u001b$B$3$s\u001b(B " + PLACEHOLDER + "\n", out);
        }
        SecretScrubber s = new SecretScrubber(Map.of("k" + key, PLACEHOLDER));
        byte[] single = ("k\u001bN" + key).getBytes(StandardCharsets.ISO_8859_1); // a single shift changes the next
        assertEquals(new String(single, StandardCharsets.ISO_8859_1),
                new String(s.scrubAll(single), StandardCharsets.ISO_8859_1));
        for (String kept : new String[] {"k&#65;" + key, "k&#x80;" + key, "k&#9;" + key, "k&#xfffd;" + key,
                "k&#" + "0".repeat(DroppedSequences.MAX_REFERENCE) + "1;" + key, "k\u00ef\u00bf\u00bd" + key,
                "k&amp;" + key, "k" + "\u0000".repeat(DroppedSequences.MAX_NUL_RUN + 1) + key}) {
            byte[] in = kept.getBytes(StandardCharsets.ISO_8859_1); // a character a reader keeps; a bound passed
            assertEquals(kept, new String(s.scrubAll(in), StandardCharsets.ISO_8859_1));
        }
        assertTrue(s.window() >= (key.length() + 1) * DroppedSpelling.PER_BYTE * DroppedSequences.MAX_SEQUENCE,
                "the window covers the most sequences one match may skip");
    }
}
