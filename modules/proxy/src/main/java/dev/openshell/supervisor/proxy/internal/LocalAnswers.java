package dev.openshell.supervisor.proxy.internal;

import dev.openshell.middleware.spi.HeaderTable;
import dev.openshell.supervisor.proxy.ExchangeRecord;
import dev.openshell.supervisor.proxy.ProxyRequest;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * The answers HTTP gives the proxy itself, before any body byte is read (a step of the {@link Pipeline}):
 * {@code OPTIONS} and an allowed {@code TRACE} with {@code Max-Forwards: 0} (RFC 9110 section 7.6.2: the last
 * recipient answers), and {@code TRACE} to an endpoint without {@code trace: allow} (405: the origin would reflect the
 * request as forwarded, credentials included; RFC 9110 section 9.3.8). Each is recorded for the audit step.
 */
final class LocalAnswers {
    private static final String ALLOW = "Allow: GET, HEAD, POST, PUT, DELETE, PATCH, OPTIONS\r\n";

    private LocalAnswers() {
    }

    /**
     * Answers the request when HTTP says the proxy must.
     *
     * @throws Answered when it answered (the exchange ends there)
     */
    static void answer(ParsedRequest req, ProxyRequest request, ClientStream client, Consumer<ExchangeRecord> audit)
            throws IOException, Answered {
        String method = req.head().method();
        int maxForwards = maxForwards(req.head());
        boolean trace = method.equals("TRACE");
        boolean close = req.clientClose() || req.framing().hasBody();
        if (trace && request.endpoint().traceAllowed() && maxForwards == 0) {
            audit.accept(new ExchangeRecord.AnsweredLocally(request, 200, "max_forwards_exhausted"));
            byte[] body = reflected(req);
            client.send(("HTTP/1.1 200 OK\r\nContent-Type: message/http\r\nContent-Length: " + body.length + "\r\n"
                    + (close ? "Connection: close\r\n" : "") + "\r\n").getBytes(StandardCharsets.US_ASCII));
            client.send(body);
            ResponseRelay.log(req, 200);
            throw new Answered(!close);
        }
        if (trace && !request.endpoint().traceAllowed()) {
            audit.accept(new ExchangeRecord.AnsweredLocally(request, 405, "method_not_allowed"));
            client.send(ErrorResponses.response(405, "method_not_allowed", "TRACE is not forwarded by the supervisor",
                    Map.of(), ALLOW, close));
            ResponseRelay.log(req, 405);
            throw new Answered(!close);
        }
        if (method.equals("OPTIONS") && maxForwards == 0) {
            audit.accept(new ExchangeRecord.AnsweredLocally(request, 200, "max_forwards_exhausted"));
            client.send(("HTTP/1.1 200 OK\r\n" + ALLOW + "Content-Length: 0\r\n"
                    + (close ? "Connection: close\r\n" : "") + "\r\n").getBytes(StandardCharsets.US_ASCII));
            ResponseRelay.log(req, 200);
            throw new Answered(!close);
        }
    }

    /** {@return the request as the last recipient reflects it, without credential-bearing fields} */
    private static byte[] reflected(ParsedRequest req) {
        StringBuilder echo = new StringBuilder(512).append(req.head().method()).append(' ')
                .append(req.head().target()).append(' ').append(req.head().version()).append("\r\n");
        for (HeaderField f : req.head().fields()) {
            String lower = f.lowerName();
            // credential-bearing fields (Authorization, Cookie, Proxy-*, X-Amz-*) are not reflected
            if (!HeaderTable.hiddenFromMiddleware(lower) || HeaderTable.routingOrFraming(lower)) {
                echo.append(f.rawLine()).append("\r\n");
            }
        }
        return echo.append("\r\n").toString().getBytes(StandardCharsets.ISO_8859_1);
    }

    /** {@return the request's Max-Forwards (RFC 9110 section 7.6.2), or -1 when absent or not 1*DIGIT} */
    static int maxForwards(RequestHead head) {
        List<HeaderField> all = head.all("max-forwards");
        if (all.size() != 1) {
            return -1;
        }
        String v = all.get(0).value().strip();
        if (v.isEmpty() || v.length() > 9 || !v.chars().allMatch(c -> c >= '0' && c <= '9')) {
            return -1;
        }
        return Integer.parseInt(v);
    }
}
