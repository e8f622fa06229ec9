package dev.openshell.supervisor.engine.chain;

import dev.openshell.middleware.spi.Body;
import dev.openshell.middleware.spi.HttpHeader;
import dev.openshell.middleware.spi.MiddlewareBinding;
import dev.openshell.middleware.spi.internal.GzipData;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.zip.DataFormatException;

/**
 * Decodes a request body's {@code Content-Encoding} for the stages that ask for it
 * ({@link MiddlewareBinding#decodedContentCodings()}; RFC 9110 section 8.4): {@code gzip} (and its alias
 * {@code x-gzip}; RFC 1952, several members allowed) and {@code deflate} (the zlib format of RFC 1950, and the raw
 * RFC 1951 stream some clients send instead), in the reverse of the order listed.
 *
 * <h2>Bombs</h2>
 * Decoding stops as soon as the output would exceed either bound: the cap ({@code maxBytes}, the chain's largest stage
 * body limit, at most 4 MiB) or {@value #MAX_RATIO} times the encoded size plus {@value #RATIO_SLACK} bytes. A bomb
 * therefore costs at most that much memory and one pass over its input; it is a failure of every stage
 * ({@link PlatformCodes#DECODED_BODY_OVER_CAPACITY}), which each stage's {@code on_error} decides.
 *
 * <p>Decoding streams from the body's segments into a new body ({@link Body#sink()}: one array up to 1 MiB, 64 KiB
 * segments beyond), so a 4 MiB decoded body is never one humongous array and the encoded one is never copied whole.
 */
final class ContentDecoding {
    /** The largest ratio of decoded to encoded bytes accepted. */
    static final int MAX_RATIO = 200;
    /** Bytes allowed beyond the ratio, so a tiny body of repeated text is not refused. */
    static final int RATIO_SLACK = 64 * 1024;

    private ContentDecoding() {
    }

    /** The outcome. */
    sealed interface Outcome {
        /** @param body the decoded body */
        record Decoded(Body body) implements Outcome {
        }

        /**
         * @param code a platform code
         * @param message a safe description
         */
        record Failed(String code, String message) implements Outcome {
        }
    }

    /**
     * {@return the codings of the request's {@code Content-Encoding} lines, lowercase, in the order applied, without
     * {@code identity}; empty when there are none}
     *
     * @param headers the complete header list
     */
    static List<String> codings(List<HttpHeader> headers) {
        List<String> out = new ArrayList<>(0);
        for (HttpHeader h : headers) {
            if (h.name().equals("content-encoding")) {
                for (String c : h.value().split(",")) {
                    String coding = c.strip().toLowerCase(Locale.ROOT);
                    if (coding.equals("x-gzip")) {
                        coding = MiddlewareBinding.GZIP;
                    }
                    if (!coding.isEmpty() && !coding.equals("identity")) {
                        out.add(coding);
                    }
                }
            }
        }
        return out;
    }

    /** {@return whether the supervisor decodes every one of {@code codings}} @param codings from {@link #codings} */
    static boolean supported(List<String> codings) {
        return codings.stream().allMatch(c -> c.equals(MiddlewareBinding.GZIP) || c.equals(MiddlewareBinding.DEFLATE));
    }

    /** {@return {@code headers} without their {@code Content-Encoding} lines} @param headers a header list */
    static List<HttpHeader> withoutContentEncoding(List<HttpHeader> headers) {
        return headers.stream().filter(h -> !h.name().equals("content-encoding")).toList();
    }

    /**
     * Decodes a request body for {@code chain} when every coding of its {@code Content-Encoding} is one the
     * supervisor decodes and some stage's binding asks for all of them; the cap is the chain's largest stage limit.
     *
     * @return the outcome, or {@code null} when the body is left as sent (empty, no coding, a coding not decoded,
     *     or no stage asked)
     */
    static Outcome forChain(Chain chain, List<HttpHeader> headers, Body body) {
        List<String> codings = codings(headers);
        // an empty body has no coding to undo (a bodiless GET may still carry Content-Encoding)
        if (body.isEmpty() || codings.isEmpty() || !supported(codings)
                || chain.prepared().stream().noneMatch(p -> p.decodes(codings))) {
            return null;
        }
        long cap = 0;
        for (Chain.Prepared p : chain.prepared()) {
            cap = Math.max(cap, p.spec().maxBodyBytes());
        }
        return decode(body, codings, cap);
    }

    /**
     * Decodes.
     *
     * @param body the encoded body
     * @param codings {@link #supported} codings in the order they were applied
     * @param maxBytes the cap on the decoded size
     * @return the decoded body or why not
     */
    static Outcome decode(Body body, List<String> codings, long maxBytes) {
        Body data = body;
        long ratioCap = (long) body.size() * MAX_RATIO + RATIO_SLACK;
        long cap = Math.min(maxBytes, ratioCap);
        for (int i = codings.size() - 1; i >= 0; i--) {
            String coding = codings.get(i);
            Body decoded;
            try {
                decoded = coding.equals(MiddlewareBinding.GZIP) ? gunzip(data, cap) : inflate(data, cap);
            } catch (DataFormatException e) {
                return new Outcome.Failed(PlatformCodes.BODY_DECODING_FAILED,
                        "the request body is not valid " + coding + " data");
            }
            if (decoded == null) {
                return new Outcome.Failed(PlatformCodes.DECODED_BODY_OVER_CAPACITY, cap == maxBytes
                        ? "the decoded request body exceeds the middleware body limit of " + maxBytes + " bytes"
                        : "the request body decodes to more than " + MAX_RATIO + " times its size");
            }
            data = decoded;
        }
        return new Outcome.Decoded(data);
    }

    /**
     * {@return the decoded body, or {@code null} past {@code cap}} Streamed from the body's segments into a new
     * segmented body ({@link Body#sink()}): neither side is ever one array.
     */
    private static Body gunzip(Body data, long cap) throws DataFormatException {
        Body.Sink out = Body.sink();
        try {
            return GzipData.gunzip(data.newInputStream(), out, cap) ? out.toBody() : null;
        } catch (IOException e) {
            throw new UncheckedIOException(e); // in-memory streams: never
        }
    }

    /** {@return the inflated body, or {@code null} past {@code cap}} Tries zlib, then a raw deflate stream. */
    private static Body inflate(Body data, long cap) throws DataFormatException {
        try {
            return inflate(data, cap, false);
        } catch (DataFormatException zlibFailed) {
            return inflate(data, cap, true);
        }
    }

    private static Body inflate(Body data, long cap, boolean raw) throws DataFormatException {
        Body.Sink out = Body.sink();
        try {
            return GzipData.inflate(data.newInputStream(), out, cap, raw) ? out.toBody() : null;
        } catch (IOException e) {
            throw new UncheckedIOException(e); // in-memory streams: never
        }
    }
}
