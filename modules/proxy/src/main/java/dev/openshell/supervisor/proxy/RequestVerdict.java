package dev.openshell.supervisor.proxy;

import dev.openshell.middleware.spi.Body;
import dev.openshell.middleware.spi.HttpHeader;
import java.util.List;
import java.util.Objects;

/** What the request-chain step decided for a request whose body was buffered ({@link PolicySteps.RequestChain}). */
public sealed interface RequestVerdict {
    /**
     * Forward the request as the chain left it.
     *
     * <p>The proxy rebuilds the request from these headers: it drops Content-Length, Transfer-Encoding, Trailer, TE,
     * Expect, Keep-Alive, Proxy-Connection, Proxy-Authorization, Connection and every Connection-nominated field,
     * then adds exactly one Content-Length for {@code body} (RFC 9112 section 6.2). The {@code Host} fields must be
     * the ones the request arrived with: no step can re-route a request.
     *
     * @param headers the fields to forward, in order; names are written as given
     * @param body the body to forward
     */
    record Forward(List<HttpHeader> headers, Body body) implements RequestVerdict {
        /**
         * Checks the parts.
         *
         * @throws NullPointerException if any part is {@code null}
         */
        public Forward {
            headers = List.copyOf(headers);
            Objects.requireNonNull(body, "body");
        }
    }

    /**
     * Refuse the request; the connection stays open (the body was consumed) unless the answer closes it.
     *
     * @param answer what the client gets
     */
    record Refuse(Answer answer) implements RequestVerdict {
        /** @throws NullPointerException if {@code answer} is {@code null} */
        public Refuse {
            Objects.requireNonNull(answer, "answer");
        }
    }
}
