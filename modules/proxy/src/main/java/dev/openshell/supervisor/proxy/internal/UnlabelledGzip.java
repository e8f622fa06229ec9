package dev.openshell.supervisor.proxy.internal;

import dev.openshell.middleware.spi.internal.GzipData;
import java.util.Arrays;
import java.util.function.Predicate;
import java.util.function.Supplier;
import java.util.zip.DataFormatException;

/**
 * What {@link ScrubbingRelay} does with a small Content-Length body (at most {@link ScrubbingRelay#SMALL_BODY} bytes)
 * that starts with gzip data and carries no coding label (issue 39, item 4; attacker pass finding 3). The body is
 * relayed as the upstream sent it only when both views the client can read hold no value: the delivered bytes
 * themselves (the member headers' FNAME, FCOMMENT and FEXTRA fields, and anything after the members, included) and
 * the decoded data of every member, and the decoded data declares in itself no charset the scrub does not read. Otherwise it is decoded, scrubbed and re-encoded, without the bytes after the last
 * member; data that does not decode as whole members is uninspectable.
 */
final class UnlabelledGzip {
    /** The most decoded bytes of small unlabelled gzip data checked in memory. */
    static final int DECODED_LIMIT = 1024 * 1024;

    private UnlabelledGzip() {
    }

    /** What to do with the body. */
    enum Verdict {
        /** Relay the body byte for byte: neither its bytes nor its decoded data hold a value. */
        AS_SENT,
        /** Decode {@link Decision#members()}, scrub and re-encode (a value somewhere, nested, large, or a tail). */
        REENCODE,
        /** A member is invalid or truncated: refused, or relayed scrubbed as bytes when unscanned bodies are allowed. */
        UNDECODABLE
    }

    /**
     * @param verdict what to do
     * @param members the bytes to decode and re-encode for {@link Verdict#REENCODE} (the body up to the last
     *     member's end when the members decoded); the body otherwise
     */
    record Decision(Verdict verdict, byte[] members) {
    }

    /**
     * Decides.
     *
     * @param body the whole body; it starts with the gzip magic
     * @param probes a fresh scrubber for each check (their counts are not the response's)
     * @return the decision
     */
    static Decision decide(byte[] body, Supplier<SecretScrubber> probes) {
        return decide(body, probes, decoded -> false);
    }

    /**
     * Decides, also re-encoding a body whose decoded data declares in itself a charset the scrub does not read
     * (attacker pass 11, P13-3): the streamed path then reads the decoded data as it reads any body
     * ({@link dev.openshell.middleware.spi.internal.BodyCharsets#reader}) and refuses it.
     *
     * @param body the whole body; it starts with the gzip magic
     * @param probes a fresh scrubber for each check (their counts are not the response's)
     * @param unreadable whether decoded data declares such a charset
     * @return the decision
     */
    static Decision decide(byte[] body, Supplier<SecretScrubber> probes, Predicate<byte[]> unreadable) {
        GzipData.Members m;
        try {
            m = GzipData.members(body, DECODED_LIMIT);
        } catch (DataFormatException e) {
            return new Decision(Verdict.UNDECODABLE, body);
        }
        if (m == null) {
            return new Decision(Verdict.REENCODE, body); // decodes to more than the limit: streamed
        }
        byte[] members = m.end() == body.length ? body : Arrays.copyOf(body, m.end());
        if (m.end() != body.length || GzipData.startsMember(m.decoded(), 0)
                || holds(m.decoded(), probes) || holds(body, probes) || unreadable.test(m.decoded())) {
            return new Decision(Verdict.REENCODE, members);
        }
        return new Decision(Verdict.AS_SENT, body);
    }

    private static boolean holds(byte[] bytes, Supplier<SecretScrubber> probes) {
        SecretScrubber probe = probes.get();
        probe.scrubAll(bytes);
        return probe.matches() > 0;
    }
}
