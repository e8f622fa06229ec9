package dev.openshell.supervisor.proxy.internal;

import dev.openshell.middleware.spi.internal.Syntax;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;

/**
 * Replaces secret values in response bytes by their placeholders, for a response that must be scrubbed (issue 22,
 * item 2: "nothing comes back"; issue 39, items 3 and 4). {@link ScrubbingRelay} uses it for the status line, every
 * header field, pairs of header fields ({@link #scrubSplits}) and the body.
 *
 * <p>Forms searched for each secret ({@link #forms}): the value as UTF-8; its base64 (standard and URL-safe
 * alphabets, at each of the three byte alignments, only the characters that carry secret bits only, so the value is
 * found inside a longer encoded text such as Basic {@code user:password}; and, where the value ends an encoded text
 * with padding (RFC 4648 section 4), also its last character and the {@code =} padding, which then carry only the
 * secret's last bits and zero bits); its percent-encodings (RFC 3986 with only
 * unreserved characters kept, JavaScript's {@code encodeURIComponent} and {@code encodeURI}, form encoding;
 * upper- and lowercase hex); its JSON string escapings (RFC 8259 section 7: {@code \/} or {@code /}, {@code \\u}
 * escapes in either hex case); each of these in UTF-16LE and UTF-16BE as well (replaced by the placeholder in the same
 * encoding); the value itself in UTF-32LE, UTF-32BE and EBCDIC ({@link FormEncodings}); and any mix of literal and
 * escaped characters in a JSON string ({@link JsonSpelling}) or of literal and {@code %XX} bytes
 * ({@link PercentSpelling}); and its bytes with ISO 2022 escape sequences, SO/SI or HZ shifts between them, which a
 * client sniffing an undeclared charset drops ({@link DroppedSpelling}: any number per match). At each
 * position the longest matching form wins; each match is replaced by the secret's placeholder.
 *
 * <p>One pass over the bytes for all secrets and forms: a byte-pair filter (a 64 Ki-bit set of the first two bytes
 * of every form) rejects nearly every position with two array reads; only positions that pass it compare the forms
 * starting with that byte. Streaming ({@link #scrubbing}, {@link #feed}): the last {@link #window()} minus one bytes
 * that are not ISO 2022 / HZ sequences, with the sequences among them, are always held back ({@link VisibleWindow}),
 * so a match split across reads is still found and what is released (or where the stream is cut) never depends on a
 * secret's value (attacker findings 12 and P11-11: prefix oracles); the tail goes at the end of the stream and when
 * the upstream is silent ({@link ResponseScrub#SILENCE_MILLIS}). One instance per response; not thread-safe.
 */
final class SecretScrubber {
    /** Spelling matchers per secret: JSON, percent, ISO 2022 / HZ. */
    private static final int SPELLINGS = 3;
    /**
     * One secret to scrub.
     *
     * @param name the credential name, for the operator's finding
     * @param value the secret value; not empty
     * @param placeholder what replaces it, e.g. {@code openshell:resolve:env:NAME}
     */
    record Secret(String name, String value, String placeholder) {
        /** @throws IllegalArgumentException if the value is empty */
        Secret {
            Objects.requireNonNull(name, "name");
            Objects.requireNonNull(placeholder, "placeholder");
            if (value.isEmpty()) {
                throw new IllegalArgumentException("an empty secret cannot be scrubbed");
            }
        }

        /** {@return the name only: never the value} */
        @Override
        public String toString() {
            return "Secret[" + name + "]";
        }
    }

    /**
     * The searched forms of a set of secrets and their filters: immutable, shared by every response to requests that
     * carried the same credentials ({@link #compiled}).
     */
    static final class Compiled {
        final byte[][] forms;
        final byte[][] replacements;
        final int[] owner;
        final String[] names;
        /** Form indices by first byte, longest form first; null when no form starts with that byte. */
        final int[][] byFirst = new int[256][];
        /** Bit (b0 << 8 | b1) is set when some form starts with b0 b1 (or is b0 alone). */
        final long[] pairs = new long[1024];
        final int window;
        /** Each secret's spelling matchers (any mix of literal and escaped characters): JSON, percent, ISO 2022. */
        final Spelling[] json;
        /** Each secret's placeholder as UTF-8. */
        final byte[][] placeholders;
        /** Bit b is set when some form or JSON spelling can start with byte b. */
        final long[] firsts = new long[4];
        /** Spelling indices (secret index * SPELLINGS, + 1 percent, + 2 ISO 2022) that start with a byte, or null. */
        final int[][] jsonByFirst = new int[256][];
        /** Per form, per byte: the split lengths whose prefix ends with that byte; null for NUL-holding forms. */
        final int[][][] splitEnds;

        Compiled(List<Secret> secrets) {
            names = new String[secrets.size()];
            json = new Spelling[secrets.size() * SPELLINGS];
            placeholders = new byte[secrets.size()][];
            // each form's bytes as ISO-8859-1 text (one char per byte): its UTF-8, UTF-16LE and UTF-16BE encodings
            Map<String, Integer> byForm = new LinkedHashMap<>();
            for (int s = 0; s < secrets.size(); s++) {
                Secret secret = secrets.get(s);
                names[s] = secret.name();
                json[SPELLINGS * s] = new JsonSpelling(secret.value());
                json[SPELLINGS * s + 1] = new PercentSpelling(secret.value());
                json[SPELLINGS * s + 2] = new DroppedSpelling(secret.value());
                placeholders[s] = secret.placeholder().getBytes(StandardCharsets.UTF_8);
                List<String> all = forms(secret.value());
                for (int f = 0; f < all.size(); f++) {
                    for (int e = 0; e < (f == 0 ? FormEncodings.COUNT : FormEncodings.ALL_FORMS); e++) {
                        byte[] encoded = FormEncodings.encode(e, all.get(f)); // the value itself: all encodings
                        if (encoded != null) {
                            byForm.putIfAbsent(new String(encoded, StandardCharsets.ISO_8859_1),
                                    s * FormEncodings.COUNT + e);
                        }
                    }
                }
            }
            List<Map.Entry<String, Integer>> sorted = new ArrayList<>(byForm.entrySet());
            sorted.sort(Comparator.comparingInt((Map.Entry<String, Integer> e) -> e.getKey().length()).reversed());
            forms = new byte[sorted.size()][];
            replacements = new byte[sorted.size()][];
            owner = new int[sorted.size()];
            int w = 1;
            List<List<Integer>> first = new ArrayList<>(256);
            for (int b = 0; b < 256; b++) {
                first.add(null);
            }
            for (int i = 0; i < sorted.size(); i++) {
                byte[] f = sorted.get(i).getKey().getBytes(StandardCharsets.ISO_8859_1);
                forms[i] = f;
                int ownerAndCharset = sorted.get(i).getValue();
                owner[i] = ownerAndCharset / FormEncodings.COUNT;
                // the placeholder in the form's own encoding
                String placeholder = secrets.get(owner[i]).placeholder();
                byte[] encoded = FormEncodings.encode(ownerAndCharset % FormEncodings.COUNT, placeholder);
                replacements[i] = encoded != null ? encoded : placeholder.getBytes(StandardCharsets.UTF_8);
                w = Math.max(w, f.length);
                int b0 = f[0] & 0xff;
                if (first.get(b0) == null) {
                    first.set(b0, new ArrayList<>());
                }
                first.get(b0).add(i); // sorted is longest first, so each list is too
                if (f.length == 1) {
                    for (int b1 = 0; b1 < 256; b1++) {
                        setPair(b0, b1);
                    }
                } else {
                    setPair(b0, f[1] & 0xff);
                }
            }
            for (int b = 0; b < 256; b++) {
                if (first.get(b) != null) {
                    byFirst[b] = first.get(b).stream().mapToInt(Integer::intValue).toArray();
                }
            }
            window = Math.max(w, jsonFilters());
            splitEnds = FieldSplits.ends(forms);
            for (int b = 0; b < 256; b++) {
                if (byFirst[b] != null || jsonByFirst[b] != null) {
                    firsts[b >>> 6] |= 1L << b;
                }
            }
        }

        /** Registers the spellings' first bytes and pairs; {@return the longest spelling of a secret} */
        private int jsonFilters() {
            int w = 1;
            List<List<Integer>> first = new ArrayList<>(256);
            for (int b = 0; b < 256; b++) {
                first.add(new ArrayList<>());
            }
            for (int s = 0; s < json.length; s++) {
                w = Math.max(w, json[s].longest());
                int spelling = s;
                json[s].starts((b0, b1) -> {
                    first.get(b0).add(spelling);
                    for (int b = b1 < 0 ? 0 : b1; b <= (b1 < 0 ? 255 : b1); b++) {
                        setPair(b0, b);
                    }
                });
            }
            for (int b = 0; b < 256; b++) {
                if (!first.get(b).isEmpty()) {
                    jsonByFirst[b] = first.get(b).stream().mapToInt(Integer::intValue).distinct().toArray();
                }
            }
            return w;
        }

        private void setPair(int b0, int b1) {
            int bit = b0 << 8 | b1;
            pairs[bit >>> 6] |= 1L << bit;
        }
    }

    /** Compiled form sets by secret list: a credential-bearing request costs no compilation after the first. */
    private static final com.github.benmanes.caffeine.cache.Cache<List<Secret>, Compiled> COMPILED =
            com.github.benmanes.caffeine.cache.Caffeine.newBuilder().maximumSize(256).build();

    final byte[][] forms; // read by EventSplits
    final byte[][] replacements;
    final int[] owner;
    private final String[] names;
    private final int[][] byFirst;
    private final long[] pairs;
    private final long[] firsts;
    private final int window;
    private final Spelling[] json;
    private final byte[][] placeholders;
    private final int[][] jsonByFirst;
    private final int[][][] splitEnds;
    private final long[] matchesBy;
    private long matches;
    private final Scrubbing feeder;
    private final ByteArrayOutputStream feedOut = new ByteArrayOutputStream();

    /**
     * @param secrets each secret value mapped to its placeholder (e.g. {@code openshell:resolve:env:NAME}); the
     *     placeholder also names it in {@link #matchedNames()}
     * @throws IllegalArgumentException if a secret is empty
     */
    SecretScrubber(Map<String, String> secrets) {
        this(secrets.entrySet().stream().map(e -> new Secret(e.getValue(), e.getKey(), e.getValue())).toList());
    }

    /**
     * @param secrets the secrets
     * @throws IllegalArgumentException if a secret is empty
     */
    SecretScrubber(List<Secret> secrets) {
        this(new Compiled(secrets));
    }

    /** @param c the compiled forms, e.g. from {@link #compiled} */
    SecretScrubber(Compiled c) {
        forms = c.forms;
        replacements = c.replacements;
        owner = c.owner;
        names = c.names;
        byFirst = c.byFirst;
        pairs = c.pairs;
        firsts = c.firsts;
        window = c.window;
        json = c.json;
        placeholders = c.placeholders;
        jsonByFirst = c.jsonByFirst;
        splitEnds = c.splitEnds;
        matchesBy = new long[names.length];
        feeder = new Scrubbing(feedOut);
    }

    /** {@return the compiled forms of {@code secrets}, from a bounded cache} @param secrets the secrets */
    static Compiled compiled(List<Secret> secrets) {
        return COMPILED.get(List.copyOf(secrets), Compiled::new);
    }

    /** {@return every form searched for {@code secret}, without repeats} @param secret the value */
    static List<String> forms(String secret) {
        List<String> out = new ArrayList<>();
        byte[] raw = secret.getBytes(StandardCharsets.UTF_8);
        out.add(secret);
        Base64Forms.addTo(raw, out);
        for (boolean upper : new boolean[] {true, false}) {
            out.add(percent(raw, upper, ""));
            out.add(percent(raw, upper, "!*'()"));             // encodeURIComponent
            out.add(percent(raw, upper, "!*'();,/?:@&=+$#"));  // encodeURI
            out.add(percent(raw, upper, "*").replace("%20", "+")); // application/x-www-form-urlencoded
            out.add(JsonSpelling.escaped(secret, true, upper));
            out.add(JsonSpelling.escaped(secret, false, upper));
        }
        return out.stream().distinct().toList();
    }

    /** {@return the length of the longest form: a held-back tail is shorter} */
    int window() {
        return window;
    }

    /** {@return how many matches were replaced so far} */
    long matches() {
        return matches;
    }

    /** {@return the names of the secrets found so far, sorted} */
    Set<String> matchedNames() {
        Set<String> out = new TreeSet<>();
        for (int i = 0; i < matchesBy.length; i++) {
            if (matchesBy[i] > 0) {
                out.add(names[i]);
            }
        }
        return out;
    }

    /** {@return the scrubbed bytes that are final after {@code chunk}} @param chunk the next bytes of the stream */
    byte[] feed(byte[] chunk) {
        try {
            feeder.write(chunk, 0, chunk.length);
        } catch (IOException e) {
            throw new UncheckedIOException(e); // a ByteArrayOutputStream does not fail
        }
        return drainFeed();
    }

    /** {@return the scrubbed rest of the stream {@link #feed} was given} */
    byte[] finish() {
        try {
            feeder.finish();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return drainFeed();
    }

    private byte[] drainFeed() {
        byte[] out = feedOut.toByteArray();
        feedOut.reset();
        return out;
    }

    /**
     * {@return {@code all} scrubbed in one go, independently of any stream in progress}
     *
     * @param all a complete text, e.g. a header value
     */
    byte[] scrubAll(byte[] all) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(all.length + 16);
        try {
            scan(all, 0, all.length, all.length, out);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out.toByteArray();
    }

    /**
     * {@return a stream that writes what it is given to {@code sink}, scrubbed} Call {@link Scrubbing#finish} at the
     * end of the body; {@link Scrubbing#flush} flushes the sink (a held-back tail stays held).
     *
     * @param sink where scrubbed bytes go
     */
    Scrubbing scrubbing(OutputStream sink) {
        return new Scrubbing(sink);
    }

    /**
     * The streaming side: a held-back tail ({@link VisibleWindow}), the bytes that could still start a form, kept at
     * {@code buf[start, start + len)}; the buffer is compacted only when its free half is used, so a long held tail
     * (many sequences) costs amortized constant copying per byte.
     */
    final class Scrubbing extends OutputStream {
        private final OutputStream sink;
        private byte[] buf = new byte[0];
        private int start;
        private int len;
        private long base; // the stream offset of buf[start]
        private final VisibleWindow held = new VisibleWindow(window - 1);

        Scrubbing(OutputStream sink) {
            this.sink = sink;
        }

        @Override
        public void write(int b) throws IOException {
            write(new byte[] {(byte) b}, 0, 1);
        }

        @Override
        public void write(byte[] b, int off, int n) throws IOException {
            Objects.checkFromIndexSize(off, n, b.length);
            if (n == 0) {
                return;
            }
            byte[] work = b;
            int from = off;
            if (len > 0) {
                if (buf.length - start < len + n) {
                    byte[] to = 2 * (len + n) <= buf.length ? buf : new byte[2 * (len + n)];
                    System.arraycopy(buf, start, to, 0, len);
                    buf = to;
                    start = 0;
                }
                System.arraycopy(b, off, buf, start + len, n);
                work = buf;
                from = start;
            }
            int total = from + len + n;
            int carry = scan(work, from, total, from + held.heldFrom(work, from, total, base), sink);
            base += carry - from;
            int left = total - carry;
            if (held.tooLong(left)) { // whatever the held bytes spell: nothing of them is written
                throw new EventSplits.HeldTooLong("stream closed: more held sequences than the bound");
            }
            if (left > 0 && work != buf) {
                if (buf.length < left) {
                    buf = new byte[Math.max(2 * left, window)];
                }
                System.arraycopy(work, carry, buf, 0, left);
                carry = 0;
            }
            start = left > 0 ? carry : 0;
            len = left;
        }

        @Override
        public void flush() throws IOException {
            sink.flush();
        }

        /**
         * Writes the held-back tail, scrubbed as it is: at the end of the body, or when the upstream went silent (the
         * stream goes on; a value split across this point is not joined). Does not close or flush the sink.
         */
        void finish() throws IOException {
            if (len > 0) {
                scan(buf, start, start + len, start + len, sink);
                base += len;
                start = 0;
                len = 0;
            }
        }

        /** {@return whether bytes are held back} */
        boolean holding() {
            return len > 0;
        }
    }

    /**
     * Scans {@code buf[from, n)} from {@code from} up to {@code limit}, writing it scrubbed to {@code out}; a match that
     * starts before {@code limit} may end after it. From {@code limit} on nothing is examined: the caller holds it.
     * Every position before {@code limit} has at least {@link #window} bytes that are not ISO 2022 sequences after it
     * ({@link VisibleWindow}), or the stream ends at {@code n}, so no match there is left undecided.
     *
     * @return where the held-back tail starts ({@code n} when nothing is held)
     */
    private int scan(byte[] buf, int from, int n, int limit, OutputStream out) throws IOException {
        int i = from;
        int run = from;
        while ((i = nextCandidate(buf, i, limit, n)) < limit) {
            int b0 = buf[i] & 0xff;
            long found = longestAt(buf, i, n, byFirst[b0], jsonByFirst[b0]);
            if (found == 0) {
                i++;
                continue;
            }
            int length = (int) (found >>> 32);
            int who = (int) found - 1;
            out.write(buf, run, i - run);
            if (who < forms.length) {
                out.write(replacements[who]);
                count(owner[who]);
            } else {
                out.write(placeholders[(who - forms.length) / SPELLINGS]);
                count((who - forms.length) / SPELLINGS);
            }
            i += length;
            run = i;
        }
        if (run < limit) {
            out.write(buf, run, limit - run);
            run = limit;
        }
        return run;
    }

    /**
     * {@return the first position from {@code from} below {@code limit} whose byte (and the next, when one is before
     * {@code n}) passes the filters, or {@code limit}} A small loop of its own, which nearly every byte goes through.
     */
    private int nextCandidate(byte[] buf, int from, int limit, int n) {
        long[] first = firsts;
        long[] pairBits = pairs;
        for (int i = from; i < limit; i++) {
            int b0 = buf[i] & 0xff;
            if ((first[b0 >>> 6] & (1L << b0)) == 0) {
                continue;
            }
            if (i + 1 >= n) {
                return i;
            }
            int bit = b0 << 8 | (buf[i + 1] & 0xff);
            if ((pairBits[bit >>> 6] & (1L << bit)) != 0) {
                return i;
            }
        }
        return limit;
    }

    /**
     * {@return the longest match at {@code i}: (length << 32 | 1 + index), the index being a form's or, past the forms,
     * a secret's spelling matcher; 0 for none} Only the bytes up to {@code n} are read: a form cut off there is none
     */
    private long longestAt(byte[] buf, int i, int n, int[] candidates, int[] jsonCandidates) {
        int avail = n - i;
        int bestLength = 0;
        int best = -1;
        if (candidates != null) {
            byte b1 = avail > 1 ? buf[i + 1] : 0;
            for (int f : candidates) {
                byte[] form = forms[f];
                if (avail > 1 && form.length > 1 && form[1] != b1) {
                    continue; // the second byte decides for nearly every form that shares the first
                }
                if (form.length <= avail && Arrays.equals(buf, i, i + form.length, form, 0, form.length)) {
                    bestLength = form.length; // longest first: no later form is longer
                    best = f;
                    break;
                }
            }
        }
        if (jsonCandidates != null) {
            for (int s : jsonCandidates) {
                int m = json[s].match(buf, i, n); // -1: not decided by the bytes up to n
                if (m > bestLength) {
                    bestLength = m;
                    best = forms.length + s;
                }
            }
        }
        return best < 0 ? 0 : ((long) bestLength << 32) | (best + 1);
    }

    /** {@return the first match from {@code from} in {@code buf[0, n)}: (start << 32 | length), -1 for none} */
    long nextMatch(byte[] buf, int from, int n) {
        for (int i = from; (i = nextCandidate(buf, i, n, n)) < n; i++) {
            long f = longestAt(buf, i, n, byFirst[buf[i] & 0xff], jsonByFirst[buf[i] & 0xff]);
            if (f != 0) {
                return (long) i << 32 | (f >>> 32);
            }
        }
        return -1;
    }

    /** {@return secret {@code s}'s spelling with dropped sequences} @param s its index, below {@link #secrets()} */
    Spelling iso2022(int s) {
        return json[SPELLINGS * s + 2];
    }

    /** {@return the number of secrets} */
    int secrets() {
        return placeholders.length;
    }

    /** {@return secret {@code s}'s placeholder} @param s its index, below {@link #secrets()} */
    byte[] placeholder(int s) {
        return placeholders[s];
    }

    void count(int secret) {
        matches++;
        matchesBy[secret]++;
    }

    /**
     * Replaces each value (in a searched form without NUL) split across two of {@code values}: the end of one and the
     * start of another, as a client joining two header fields of one response would read it. The part in the first
     * is removed and the part in the second is replaced by the placeholder, so their concatenation reads the
     * placeholder. Each replacement counts as a match.
     *
     * @param values the field values as ISO-8859-1 bytes, replaced in place; each value already scrubbed whole
     */
    void scrubSplits(byte[][] values) {
        for (int round = 0; round < 4 * values.length && replaceOneSplit(values); round++) {
            // each round removes one split part; the bound only guards against a pathological header
        }
    }

    private boolean replaceOneSplit(byte[][] values) {
        int f = FieldSplits.replaceOne(values, forms, replacements, splitEnds);
        if (f < 0) {
            return false;
        }
        count(owner[f]);
        return true;
    }

    /**
     * Percent-encoding of UTF-8 bytes: ASCII letters, digits and {@code -._~} are kept, and so is every character in
     * {@code keep}; everything else becomes {@code %XX}.
     */
    static String percent(byte[] raw, boolean upper, String keep) {
        return Syntax.percentEncode(raw, upper, keep);
    }
}
