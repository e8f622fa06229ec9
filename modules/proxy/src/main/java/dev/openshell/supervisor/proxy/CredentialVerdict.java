package dev.openshell.supervisor.proxy;

import dev.openshell.middleware.spi.HttpHeader;
import java.util.List;
import java.util.Objects;

/** What the credential step decided ({@link PolicySteps.Credentials}). */
public sealed interface CredentialVerdict {
    /**
     * Forward with these headers and query. They may hold secrets: never log them.
     *
     * @param headers the headers to forward
     * @param rawQuery the query to forward, without {@code ?}; empty for none
     * @param injected the credential values put into the request: the response to it is scrubbed of them
     */
    record Forward(List<HttpHeader> headers, String rawQuery, InjectedCredentials injected)
            implements CredentialVerdict {
        /**
         * Checks the parts.
         *
         * @throws NullPointerException if a part is {@code null}
         */
        public Forward {
            headers = List.copyOf(headers);
            Objects.requireNonNull(rawQuery, "rawQuery");
            Objects.requireNonNull(injected, "injected");
        }

        /**
         * Forward with no credential injected.
         *
         * @param headers the headers to forward
         * @param rawQuery the query to forward, without {@code ?}; empty for none
         */
        public Forward(List<HttpHeader> headers, String rawQuery) {
            this(headers, rawQuery, InjectedCredentials.none());
        }

        /** {@return counts and credential names only: header values and the query may hold secrets} */
        @Override
        public String toString() {
            return "Forward[" + headers.size() + " headers, query " + rawQuery.length() + " chars, " + injected + "]";
        }
    }

    /**
     * Refuse the request, for example because a placeholder names an unknown credential or one not bound to the
     * admitted host. The step reported it already (with the operator's detail, which the client does not get).
     *
     * @param answer what the client gets: a safe message that may name the credential but never its value
     */
    record Refuse(Answer answer) implements CredentialVerdict {
        /** @throws NullPointerException if {@code answer} is {@code null} */
        public Refuse {
            Objects.requireNonNull(answer, "answer");
        }
    }
}
