package dev.openshell.supervisor.grpc;

import dev.openshell.middleware.proto.v1.HttpResponseEvent;
import dev.openshell.middleware.proto.v1.HttpResponseEventResult;
import dev.openshell.middleware.proto.v1.HttpResponsePreReturnGrpc;
import dev.openshell.middleware.spi.HttpResponseBodyResult;
import dev.openshell.middleware.spi.HttpResponseBodyUnit;
import dev.openshell.middleware.spi.HttpResponsePreflight;
import dev.openshell.middleware.spi.HttpResponsePreflightDecision;
import dev.openshell.middleware.spi.HttpResponseStage;
import dev.openshell.middleware.spi.MiddlewareException;
import dev.openshell.middleware.spi.SessionEndReason;
import io.grpc.Channel;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * One stage's {@code HttpResponsePreReturn.Evaluate} stream for one response (NVIDIA/OpenShell
 * {@code proto/supervisor_middleware.proto}): the preflight, then body units in lockstep (each answered before the
 * next is sent), then a best-effort {@code session_end} and the half-close. The stream has no total deadline (a
 * streamed response may last); every answer is awaited for at most the binding's effective timeout (the chain engine
 * enforces it as well). A stream the service ends or fails is a stage failure with a {@link StageFailureCodes} code.
 */
final class GrpcResponseStage implements HttpResponseStage {
    private static final Object COMPLETED = new Object();

    private final BlockingQueue<Object> answers = new LinkedBlockingQueue<>();
    private final ClientCallStreamObserver<HttpResponseEvent> requests;
    private final String middlewareName;
    private final String who;
    private final long timeoutMillis;
    private final Function<StatusRuntimeException, MiddlewareException> failure;
    private boolean closed;

    GrpcResponseStage(Channel channel, String middlewareName, String who, long timeoutMillis,
                      Function<StatusRuntimeException, MiddlewareException> failure) {
        this.middlewareName = middlewareName;
        this.who = who;
        this.timeoutMillis = timeoutMillis;
        this.failure = failure;
        Holder holder = new Holder();
        HttpResponsePreReturnGrpc.newStub(channel).evaluate(holder);
        this.requests = holder.requests;
    }

    /** Receives the answers in order; keeps the request side for sending. */
    private final class Holder implements ClientResponseObserver<HttpResponseEvent, HttpResponseEventResult> {
        ClientCallStreamObserver<HttpResponseEvent> requests;

        @Override
        public void beforeStart(ClientCallStreamObserver<HttpResponseEvent> stream) {
            this.requests = stream;
        }

        @Override
        public void onNext(HttpResponseEventResult value) {
            answers.add(value);
        }

        @Override
        public void onError(Throwable t) {
            answers.add(t);
        }

        @Override
        public void onCompleted() {
            answers.add(COMPLETED);
        }
    }

    @Override
    public HttpResponsePreflightDecision preflight(HttpResponsePreflight preflight) {
        requests.onNext(ResponseTranslation.preflight(preflight, middlewareName));
        return ResponseTranslation.decision(next(), who);
    }

    @Override
    public HttpResponseBodyResult body(HttpResponseBodyUnit unit) {
        requests.onNext(ResponseTranslation.body(unit));
        return ResponseTranslation.bodyResult(next(), who);
    }

    @Override
    public void end(SessionEndReason reason) {
        if (closed) {
            return;
        }
        closed = true;
        try {
            requests.onNext(ResponseTranslation.end(reason));
            requests.onCompleted();
        } catch (RuntimeException e) {
            requests.cancel("session ended", null);
        }
    }

    /** {@return the next answer} @throws MiddlewareException when the stream ended, failed, or stayed silent */
    private HttpResponseEventResult next() {
        Object a;
        try {
            a = answers.poll(timeoutMillis, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            cancel();
            throw new MiddlewareException(StageFailureCodes.SERVICE_TIMEOUT, who + ": interrupted");
        }
        if (a instanceof HttpResponseEventResult r) {
            return r;
        }
        cancel();
        if (a == null) {
            throw new MiddlewareException(StageFailureCodes.SERVICE_TIMEOUT,
                    who + ": no answer within " + timeoutMillis + " ms");
        }
        if (a instanceof StatusRuntimeException s) {
            throw failure.apply(s);
        }
        if (a instanceof Throwable t) {
            throw new MiddlewareException(StageFailureCodes.SERVICE_ERROR, who + ": " + Transport.oneLine(t));
        }
        throw new MiddlewareException(StageFailureCodes.SERVICE_ERROR, who + ": the service ended the stream early");
    }

    private void cancel() {
        closed = true;
        requests.cancel("response stage failed", null);
    }
}
