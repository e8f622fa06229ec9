package dev.openshell.supervisor.grpc;

import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A copy of Privacy Guard's class (module {@code dev.openshell.examples.privacyguard}), for the fixture services: a
 * service built to OpenShell's guidance.
 *
 * Refuses every call without a valid OpenShell extension token ({@link CallerTokenVerifier}) with
 * {@code UNAUTHENTICATED}, before the method runs. The status description is fixed ("a valid OpenShell extension
 * token is required"); the failed check is logged at most once a second, never the token.
 */
public final class CallerAuthentication implements ServerInterceptor {
    private static final System.Logger LOG = System.getLogger(CallerAuthentication.class.getName());
    private static final Metadata.Key<String> AUTHORIZATION = Metadata.Key.of("authorization",
            Metadata.ASCII_STRING_MARSHALLER);

    private final CallerTokenVerifier verifier;
    private final AtomicLong lastLog = new AtomicLong();
    private final AtomicLong refused = new AtomicLong();

    /** @param verifier the token checks */
    public CallerAuthentication(CallerTokenVerifier verifier) {
        this.verifier = Objects.requireNonNull(verifier, "verifier");
    }

    /** {@return how many calls were refused} */
    public long refused() {
        return refused.get();
    }

    @Override
    public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
                                                      ServerCallHandler<Q, R> next) {
        Optional<CallerTokenVerifier.Refusal> refusal = verifier.check(headers.get(AUTHORIZATION));
        if (refusal.isEmpty()) {
            return next.startCall(call, headers);
        }
        refused.incrementAndGet();
        long now = System.nanoTime();
        long last = lastLog.get();
        if (now - last > 1_000_000_000L && lastLog.compareAndSet(last, now)) {
            LOG.log(System.Logger.Level.WARNING, "refused a call to {0}: {1}",
                    call.getMethodDescriptor().getFullMethodName(), refusal.get().check());
        }
        call.close(Status.UNAUTHENTICATED.withDescription("a valid OpenShell extension token is required"),
                new Metadata());
        return new ServerCall.Listener<>() { };
    }
}
