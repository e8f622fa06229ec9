package dev.openshell.supervisor.proxy;

import dev.openshell.supervisor.proxy.internal.Authority;
import dev.openshell.supervisor.proxy.internal.FramingException;
import dev.openshell.supervisor.proxy.internal.SsrfGuard;
import java.net.InetAddress;
import java.util.List;
import java.util.Objects;

/**
 * The proxy's SSRF check (the second admission step, after network policy; RFC 0009, "Operation phases and
 * placement"), for tools that explain a decision without serving ({@code supervisor explain}). It is the very check
 * the proxy runs: the same address classes, the same gateway network settings ({@code allow_loopback_upstreams},
 * {@code static_hosts}) and the admitting endpoint's {@code allowed_ips}. It never connects anywhere; a DNS name
 * that is neither an IP literal nor a static host is resolved with the system resolver, as the proxy would.
 */
public final class SsrfCheck {
    private SsrfCheck() {
    }

    /** The outcome. */
    public sealed interface Result {
        /** @param addresses the checked addresses the proxy would connect to */
        record Admitted(List<InetAddress> addresses) implements Result {
            /** @throws NullPointerException if {@code addresses} is {@code null} */
            public Admitted {
                addresses = List.copyOf(addresses);
            }
        }

        /**
         * @param error the platform code the client would get: {@code ssrf_blocked} (403) or
         *     {@code unresolvable_host} (502)
         * @param detail the proxy's safe explanation (the address class, and what setting would admit it)
         */
        record Refused(String error, String detail) implements Result {
            /** @throws NullPointerException if a part is {@code null} */
            public Refused {
                Objects.requireNonNull(error, "error");
                Objects.requireNonNull(detail, "detail");
            }
        }

        /**
         * A DNS name that was not resolved (resolution not allowed): the proxy would resolve it and refuse it if
         * any address is blocked.
         *
         * @param host the normalised name
         */
        record NotResolved(String host) implements Result {
            /** @throws NullPointerException if {@code host} is {@code null} */
            public NotResolved {
                Objects.requireNonNull(host, "host");
            }
        }
    }

    /**
     * Checks a destination as the proxy would after network policy admitted it.
     *
     * @param host the destination host: a DNS name or an IP literal (IPv6 without brackets)
     * @param port the destination port, 1 to 65535
     * @param endpoint the admitting endpoint (its {@code allowed_ips})
     * @param settings the gateway network settings
     * @param resolve whether a DNS name may be resolved; when {@code false} such a name is
     *     {@link Result.NotResolved}
     * @return the verdict
     * @throws IllegalArgumentException if the host or port is malformed
     */
    public static Result check(String host, int port, EndpointFacts endpoint, NetworkSettings settings,
                               boolean resolve) {
        Authority authority;
        try {
            authority = Authority.host(host.indexOf(':') >= 0 && !host.startsWith("[") ? "[" + host + "]" : host,
                    port);
        } catch (FramingException e) {
            throw new IllegalArgumentException("not a destination host: " + e.getMessage(), e);
        }
        if (!resolve && authority.literal().isEmpty() && !settings.staticHosts().containsKey(authority.host())) {
            return new Result.NotResolved(authority.host());
        }
        SsrfGuard guard = SsrfGuard.system(settings);
        return switch (guard.check(authority, endpoint)) {
            case SsrfGuard.Verdict.Admitted a -> new Result.Admitted(a.addresses());
            case SsrfGuard.Verdict.Refused r -> new Result.Refused(r.error(), r.detail());
        };
    }
}
