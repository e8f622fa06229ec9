package dev.openshell.supervisor.proxy.internal;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * The scrub of one response head ({@link ScrubbingRelay}; a final head, an interim {@code 1xx}, a {@code 101}): every
 * injected value replaced by its placeholder in the status line's reason phrase and in every header field value, also
 * as its quoted-pairs, RFC 2047 encoded words and RFC 2231 continuations read ({@link HeaderReadings}); a value split
 * across two of the head's texts replaced too.
 *
 * @param head the scrubbed head
 * @param unreadable the lowercase names of the fields dropped because a parameter or RFC 2047 word of their value is
 *     declared in a charset this runtime cannot decode (UTF-7, {@code unicode_escape}, an unknown name, octets the
 *     charset rejects), sorted, each once; empty when none was; never their values
 */
record HeadScrub(ResponseHead head, List<String> unreadable) {

    /**
     * {@return the scrubbed head, after recording the fields dropped as unreadable ({@link
     * ResponseScrub#unreadableFields}: one audit record for the head, naming them), if any} Called before any byte of
     * the head goes to the client.
     *
     * @param scrub the response's scrub, where its records go
     */
    ResponseHead audited(ResponseScrub scrub) {
        if (!unreadable.isEmpty()) {
            scrub.unreadableFields(unreadable);
        }
        return head;
    }

    /**
     * {@return {@code r} with every injected value replaced in the reason phrase and the field values, and the names
     * of the fields dropped as unreadable} A field whose name holds a value is dropped; so is one whose value a
     * reading still finds a value in, or that holds a parameter or RFC 2047 word in a charset this runtime cannot
     * decode (named in {@link #unreadable}). {@code Connection} is kept as it is (hop-by-hop: the relay reads it and
     * never forwards it). {@code Content-Length} and {@code Transfer-Encoding} are searched too, and one that holds a
     * value is dropped: no placeholder belongs in framing, and the relay frames a body by the head as received
     * ({@code BodyFraming}), where such a value is no valid length or coding and refuses the response; so only a
     * head without a body (a {@code HEAD} response, {@code 1xx}, {@code 204}, {@code 304}, the {@code 101}), whose
     * framing fields the relay forwards as information, ever reaches here with one (attacker pass 21, P27-1).
     *
     * @param r the head as received
     * @param scrubber the response's scrubber (its count grows with each replacement)
     */
    static HeadScrub scrub(ResponseHead r, SecretScrubber scrubber) {
        String line = r.statusLine();
        int reasonAt = Math.min(line.length(), 12); // "HTTP/1.1 200"
        int reasonEnd = line.length();
        while (reasonAt < reasonEnd && (line.charAt(reasonAt) == ' ' || line.charAt(reasonAt) == '\t')) {
            reasonAt++; // the reason phrase as clients read it, white space stripped (http.client, requests, Node)
        }
        while (reasonEnd > reasonAt && (line.charAt(reasonEnd - 1) == ' ' || line.charAt(reasonEnd - 1) == '\t')) {
            reasonEnd--;
        }
        String reason = scrub(line.substring(reasonAt, reasonEnd), scrubber);
        List<HeaderField> fields = new ArrayList<>(r.fields().size());
        Set<String> unreadable = new TreeSet<>();
        for (HeaderField f : r.fields()) {
            String lower = f.lowerName();
            long before = scrubber.matches();
            if (relayOnly(lower)) {
                fields.add(f);
                continue;
            }
            if (framing(lower)) {
                HeaderReadings.read(scrub(f.value(), scrubber), scrubber); // counts what it finds
                if (scrubber.matches() == before) {
                    fields.add(f);
                }
                continue; // a length or coding that holds a value: the field goes
            }
            String name = scrub(f.name(), scrubber);
            if (scrubber.matches() != before) {
                continue; // a field named after a secret: the name cannot hold a placeholder, so the field goes
            }
            HeaderReadings.Read read = HeaderReadings.read(scrub(f.value(), scrubber), scrubber); // quoted, words
            String value = read.value();
            if (value == null) {
                if (read.unreadable()) {
                    unreadable.add(lower); // in a charset nobody here reads: the field goes, audited by its name
                }
                continue; // a value that a reading still finds after every replacement: the field goes
            }
            fields.add(scrubber.matches() == before ? f : HeaderField.of(name, value));
        }
        reason = scrubSplits(reason, fields, scrubber);
        return new HeadScrub(new ResponseHead(line.substring(0, reasonAt) + reason + line.substring(reasonEnd),
                r.version(), r.status(), fields), List.copyOf(unreadable));
    }

    /**
     * Replaces a value split across two of the head's texts (the reason phrase and the field values other than
     * {@code Connection}), as a client joining them would read it ({@link SecretScrubber#scrubSplits}); a
     * {@code Content-Length} or {@code Transfer-Encoding} holding a part is dropped instead.
     *
     * @param reason the scrubbed reason phrase
     * @param fields the scrubbed fields, replaced in place (or removed) where a split is found
     * @return the reason phrase, scrubbed of split parts
     */
    private static String scrubSplits(String reason, List<HeaderField> fields, SecretScrubber scrubber) {
        byte[][] values = new byte[fields.size() + 1][];
        values[0] = reason.getBytes(StandardCharsets.ISO_8859_1);
        for (int i = 0; i < fields.size(); i++) {
            values[i + 1] = relayOnly(fields.get(i).lowerName()) ? new byte[0]
                    : fields.get(i).value().getBytes(StandardCharsets.ISO_8859_1);
        }
        long before = scrubber.matches();
        scrubber.scrubSplits(values);
        if (scrubber.matches() == before) {
            return reason;
        }
        for (int i = fields.size() - 1; i >= 0; i--) {
            HeaderField f = fields.get(i);
            String value = new String(values[i + 1], StandardCharsets.ISO_8859_1);
            if (relayOnly(f.lowerName()) || value.equals(f.value())) {
                continue;
            }
            if (framing(f.lowerName())) {
                fields.remove(i); // no placeholder belongs in framing
            } else {
                fields.set(i, HeaderField.of(f.name(), value));
            }
        }
        return new String(values[0], StandardCharsets.ISO_8859_1);
    }

    private static boolean framing(String lower) {
        return lower.equals("content-length") || lower.equals("transfer-encoding");
    }

    /** {@return whether a field is kept as it is: {@code Connection}, which the relay reads and never forwards} */
    private static boolean relayOnly(String lower) {
        return lower.equals("connection");
    }

    private static String scrub(String latin1, SecretScrubber scrubber) {
        long before = scrubber.matches();
        byte[] out = scrubber.scrubAll(latin1.getBytes(StandardCharsets.ISO_8859_1));
        return scrubber.matches() == before ? latin1 : new String(out, StandardCharsets.ISO_8859_1);
    }
}
