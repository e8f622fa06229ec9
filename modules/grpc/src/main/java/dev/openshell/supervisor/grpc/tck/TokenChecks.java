package dev.openshell.supervisor.grpc.tck;

import dev.openshell.supervisor.grpc.ServiceProbe;
import dev.openshell.supervisor.grpc.ServiceRegistration;
import dev.openshell.supervisor.grpc.auth.ExtensionTokenIssuer;
import dev.openshell.supervisor.grpc.auth.SigningKeys;
import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * The kit's extension token checks (RFC 0009 appendix "Extension Authentication"; OpenShell's "Authenticate OpenShell
 * Callers"): a service registered over TLS must refuse, with {@code UNAUTHENTICATED}, a {@code Describe} with no
 * token ({@code auth.missing_token}), an expired one ({@code auth.expired_token}), one for another audience
 * ({@code auth.wrong_audience}) and one signed by a key outside the supervisor's JWKS ({@code auth.wrong_key}), and
 * accept the supervisor's own token ({@code auth.valid_token}). Each check is one {@code Describe} on a fresh channel.
 * Plaintext registrations ({@code allow_insecure}) get no token: no check is reported. A TLS run without the
 * supervisor's keys reports one {@code auth} check as skipped. Tokens are never printed.
 */
final class TokenChecks {
    private TokenChecks() {
    }

    static void run(ServiceProbe probe, Optional<ExtensionTokenIssuer> issuer, Consumer<Check> out) {
        ServiceRegistration reg = probe.registration();
        if (reg.plaintext()) {
            return; // allow_insecure: the supervisor sends no token, so there is nothing to check
        }
        if (issuer.isEmpty()) {
            out.accept(Check.of("auth", Check.Status.SKIP, "no signing keys given: token checks not run"));
            return;
        }
        ExtensionTokenIssuer good = issuer.get();
        String aud = reg.audience();
        Instant now = Clock.systemUTC().instant();
        ExtensionTokenIssuer stranger = new ExtensionTokenIssuer(SigningKeys.ephemeral(Clock.systemUTC()),
                good.identity(), Clock.systemUTC());
        try {
            refused(out, "auth.missing_token", "a call without a token", probe.describeWithToken(Optional.empty()));
            refused(out, "auth.expired_token", "an expired token", probe.describeWithToken(Optional.of(
                    good.mint(aud, now.minus(Duration.ofHours(2)), Duration.ofHours(1)))));
            refused(out, "auth.wrong_audience", "a token for another audience", probe.describeWithToken(Optional.of(
                    good.mint(aud + ":openshell-tck-other", now, Duration.ofMinutes(5)))));
            refused(out, "auth.wrong_key", "a token signed by a key outside the supervisor's JWKS",
                    probe.describeWithToken(Optional.of(stranger.mint(aud, now, Duration.ofMinutes(5)))));
            String ok = probe.describeWithToken(Optional.of(good.mint(aud, now, Duration.ofMinutes(5))));
            out.accept(ok.equals("OK")
                    ? Check.of("auth.valid_token", Check.Status.PASS, "the service accepts the supervisor's token for "
                            + "audience '" + aud + "'")
                    : Check.of("auth.valid_token", Check.Status.FAIL, "the service refuses the supervisor's token for "
                            + "audience '" + aud + "' (gRPC status " + ok + "): check its audience, issuer and JWKS"));
        } catch (IOException e) {
            out.accept(Check.of("auth", Check.Status.FAIL, "cannot set up the channel: " + e.getMessage()));
        }
    }

    private static void refused(Consumer<Check> out, String name, String what, String status) {
        if (status.equals("UNAUTHENTICATED")) {
            out.accept(Check.of(name, Check.Status.PASS, "the service refuses " + what + " with UNAUTHENTICATED"));
        } else if (status.equals("OK")) {
            out.accept(Check.of(name, Check.Status.FAIL, "the service accepts " + what + ": anyone who can reach it "
                    + "can call it"));
        } else {
            out.accept(Check.of(name, Check.Status.FAIL, "the service answers " + what + " with gRPC status "
                    + status + ", not UNAUTHENTICATED"));
        }
    }
}
