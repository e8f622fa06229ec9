package dev.openshell.supervisor.proxy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every RFC 9112 framing rule the proxy enforces, with raw bytes over a loopback socket: the client gets the status
 * and error code, the connection is closed, and no complete request reaches the upstream. Each case runs with no
 * chain (streaming) and with a selected chain (buffering).
 */
class FramingTest extends SharedProxy {
    @BeforeEach
    void drain() {
        fx.upstream.drain();
    }

    /** {@code @T@} is the absolute-form target, {@code @A@} the authority. */
    static Stream<Arguments> malformed() {
        return Stream.of(
                bad("CL and TE", "POST @T@ HTTP/1.1\r\nHost: @A@\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n", 400, "content_length_with_transfer_encoding"),
                bad("TE and CL", "POST @T@ HTTP/1.1\r\nHost: @A@\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n3\r\nabc\r\n0\r\n\r\n", 400, "content_length_with_transfer_encoding"),
                bad("conflicting CL", "POST @T@ HTTP/1.1\r\nHost: @A@\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd", 400, "conflicting_content_length"),
                bad("repeated equal CL", "POST @T@ HTTP/1.1\r\nHost: @A@\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\nabc", 400, "conflicting_content_length"),
                bad("CL list", "POST @T@ HTTP/1.1\r\nHost: @A@\r\nContent-Length: 3, 3\r\n\r\nabc", 400, "invalid_content_length"),
                bad("CL sign", "POST @T@ HTTP/1.1\r\nHost: @A@\r\nContent-Length: +3\r\n\r\nabc", 400, "invalid_content_length"),
                bad("CL negative", "POST @T@ HTTP/1.1\r\nHost: @A@\r\nContent-Length: -1\r\n\r\n", 400, "invalid_content_length"),
                bad("CL hex", "POST @T@ HTTP/1.1\r\nHost: @A@\r\nContent-Length: 0x3\r\n\r\nabc", 400, "invalid_content_length"),
                bad("CL empty", "POST @T@ HTTP/1.1\r\nHost: @A@\r\nContent-Length:\r\n\r\n", 400, "invalid_content_length"),
                bad("CL overflow", "POST @T@ HTTP/1.1\r\nHost: @A@\r\nContent-Length: 9999999999999999999\r\n\r\n", 400, "invalid_content_length"),
                bad("chunked not final", "POST @T@ HTTP/1.1\r\nHost: @A@\r\nTransfer-Encoding: chunked, identity\r\n\r\n3\r\nabc\r\n0\r\n\r\n", 400, "chunked_not_final"),
                bad("TE without chunked", "POST @T@ HTTP/1.1\r\nHost: @A@\r\nTransfer-Encoding: gzip\r\n\r\nabc", 400, "chunked_not_final"),
                bad("chunked twice", "POST @T@ HTTP/1.1\r\nHost: @A@\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400, "chunked_twice"),
                bad("unsupported coding", "POST @T@ HTTP/1.1\r\nHost: @A@\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n", 501, "unsupported_transfer_coding"),
                bad("TE in HTTP/1.0", "POST @T@ HTTP/1.0\r\nHost: @A@\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400, "transfer_encoding_in_http10"),
                bad("bare LF request line", "GET @T@ HTTP/1.1\nHost: @A@\r\n\r\n", 400, "bare_lf"),
                bad("bare LF field line", "GET @T@ HTTP/1.1\r\nHost: @A@\nX-A: b\r\n\r\n", 400, "bare_lf"),
                bad("bare LF end of head", "GET @T@ HTTP/1.1\r\nHost: @A@\r\n\n", 400, "bare_lf"),
                bad("bare CR", "GET @T@ HTTP/1.1\r\nHost: @A@\r\nX-A: b\rc\r\n\r\n", 400, "bare_cr"),
                bad("space before colon", "GET @T@ HTTP/1.1\r\nHost: @A@\r\nX-A : b\r\n\r\n", 400, "whitespace_before_colon"),
                bad("tab before colon", "GET @T@ HTTP/1.1\r\nHost: @A@\r\nX-A\t: b\r\n\r\n", 400, "whitespace_before_colon"),
                bad("space before colon on Content-Length", "POST @T@ HTTP/1.1\r\nHost: @A@\r\nContent-Length : 3\r\n\r\nabc", 400, "whitespace_before_colon"),
                bad("obs-fold space", "GET @T@ HTTP/1.1\r\nHost: @A@\r\nX-A: b\r\n c\r\n\r\n", 400, "obs_fold"),
                bad("obs-fold tab", "GET @T@ HTTP/1.1\r\nHost: @A@\r\nX-A: b\r\n\tc\r\n\r\n", 400, "obs_fold"),
                bad("first field folded", "GET @T@ HTTP/1.1\r\n Host: @A@\r\n\r\n", 400, "obs_fold"),
                bad("no colon", "GET @T@ HTTP/1.1\r\nHost: @A@\r\nX-A b\r\n\r\n", 400, "invalid_field_line"),
                bad("non-token name", "GET @T@ HTTP/1.1\r\nHost: @A@\r\nX@A: b\r\n\r\n", 400, "invalid_field_name"),
                bad("NUL in value", "GET @T@ HTTP/1.1\r\nHost: @A@\r\nX-A: b\0c\r\n\r\n", 400, "invalid_field_value"),
                bad("DEL in value", "GET @T@ HTTP/1.1\r\nHost: @A@\r\nX-A: b\u007fc\r\n\r\n", 400, "invalid_field_value"),
                bad("double space in request line", "GET  @T@ HTTP/1.1\r\nHost: @A@\r\n\r\n", 400, "invalid_request_line"),
                bad("lowercase version", "GET @T@ http/1.1\r\nHost: @A@\r\n\r\n", 400, "invalid_http_version"),
                bad("HTTP/2.0", "GET @T@ HTTP/2.0\r\nHost: @A@\r\n\r\n", 505, "http_version_not_supported"),
                bad("missing Host", "GET @T@ HTTP/1.1\r\nX-A: b\r\n\r\n", 400, "missing_host"),
                bad("two Hosts", "GET @T@ HTTP/1.1\r\nHost: @A@\r\nHost: @A@\r\n\r\n", 400, "multiple_host"),
                bad("Connection nominates Content-Length", "POST @T@ HTTP/1.1\r\nHost: @A@\r\nConnection: content-length\r\nContent-Length: 3\r\n\r\nabc", 400, "connection_nominates_protected"),
                bad("fragment in target", "GET @T@#frag HTTP/1.1\r\nHost: @A@\r\n\r\n", 400, "invalid_request_target"),
                bad("userinfo in target", "GET http://user@@A@/ HTTP/1.1\r\nHost: @A@\r\n\r\n", 400, "invalid_authority"),
                bad("https absolute-form", "GET https://@A@/ HTTP/1.1\r\nHost: @A@\r\n\r\n", 400, "https_needs_connect"),
                bad("invalid chunk size", "POST @T@ HTTP/1.1\r\nHost: @A@\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n", 400, "invalid_chunk_size"),
                bad("0x chunk size", "POST @T@ HTTP/1.1\r\nHost: @A@\r\nTransfer-Encoding: chunked\r\n\r\n0x3\r\nabc\r\n0\r\n\r\n", 400, "invalid_chunk_size"),
                bad("negative chunk size", "POST @T@ HTTP/1.1\r\nHost: @A@\r\nTransfer-Encoding: chunked\r\n\r\n-3\r\nabc\r\n0\r\n\r\n", 400, "invalid_chunk_size"),
                bad("space after chunk size", "POST @T@ HTTP/1.1\r\nHost: @A@\r\nTransfer-Encoding: chunked\r\n\r\n3 \r\nabc\r\n0\r\n\r\n", 400, "invalid_chunk_size"),
                bad("bare LF after chunk size", "POST @T@ HTTP/1.1\r\nHost: @A@\r\nTransfer-Encoding: chunked\r\n\r\n3\nabc\r\n0\r\n\r\n", 400, "bare_lf"),
                bad("empty chunk extension", "POST @T@ HTTP/1.1\r\nHost: @A@\r\nTransfer-Encoding: chunked\r\n\r\n3;\r\nabc\r\n0\r\n\r\n", 400, "invalid_chunk_size"),
                bad("chunk size overflow", "POST @T@ HTTP/1.1\r\nHost: @A@\r\nTransfer-Encoding: chunked\r\n\r\n10000000000000000\r\nabc\r\n0\r\n\r\n", 400, "invalid_chunk_size"),
                // 16 and 17 hex digits wrap a 64-bit size to -1 and 0: counted as digits, they are refused
                bad("chunk size wraps to -1", "POST @T@ HTTP/1.1\r\nHost: @A@\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffff\r\nhello\r\n0\r\n\r\n", 400, "invalid_chunk_size"),
                bad("chunk size wraps to 0", "POST @T@ HTTP/1.1\r\nHost: @A@\r\nTransfer-Encoding: chunked\r\n\r\n10000000000000000\r\nhello\r\n0\r\n\r\n", 400, "invalid_chunk_size"),
                bad("chunk size of 17 f", "POST @T@ HTTP/1.1\r\nHost: @A@\r\nTransfer-Encoding: chunked\r\n\r\nfffffffffffffffff\r\nhello\r\n0\r\n\r\n", 400, "invalid_chunk_size"),
                bad("chunk size of 16 digits", "POST @T@ HTTP/1.1\r\nHost: @A@\r\nTransfer-Encoding: chunked\r\n\r\n1000000000000005\r\nhello\r\n0\r\n\r\n", 400, "invalid_chunk_size"),
                bad("chunk data without CRLF", "POST @T@ HTTP/1.1\r\nHost: @A@\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcXX0\r\n\r\n", 400, "chunk_missing_crlf"),
                bad("chunk data with bare LF", "POST @T@ HTTP/1.1\r\nHost: @A@\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\n0\r\n\r\n", 400, "chunk_missing_crlf"),
                bad("obs-fold in trailer", "POST @T@ HTTP/1.1\r\nHost: @A@\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\nX-T: a\r\n b\r\n\r\n", 400, "obs_fold"));
    }

    private static Arguments bad(String name, String request, int status, String code) {
        return Arguments.of(name, request, status, code);
    }

    @ParameterizedTest(name = "{0} (no chain)")
    @MethodSource("malformed")
    void rejectedWhileStreaming(String name, String request, int status, String code) throws Exception {
        fx.hook.selector = r -> ChainSelection.none();
        check(request, status, code);
    }

    @ParameterizedTest(name = "{0} (chain selected)")
    @MethodSource("malformed")
    void rejectedWhileBuffering(String name, String request, int status, String code) throws Exception {
        fx.hook.selector = r -> ChainSelection.selected(4096, false);
        check(request, status, code);
    }

    private static void check(String request, int status, String code) throws Exception {
        String raw = request.replace("@T@", fx.apiUrl("/f")).replace("@A@", fx.apiAuthority());
        try (RawClient c = fx.client()) {
            c.send(raw);
            RawClient.Response r = c.read();
            assertEquals(status, r.status(), r.bodyText());
            assertTrue(r.bodyText().startsWith("{\"error\":\"" + code + "\""), r.bodyText());
            assertEquals("close", r.header("connection"));
            assertTrue(c.closedByPeer(), "the connection must be closed after a framing error");
        }
        assertEquals(0, fx.upstream.pending(), "no complete request may reach the upstream");
    }
}
