package dev.openshell.supervisor.grpc;

import dev.openshell.middleware.proto.v1.MiddlewareManifest;
import dev.openshell.middleware.proto.v1.SupervisorMiddlewareOperation;
import dev.openshell.middleware.proto.v1.SupervisorMiddlewarePhase;
import dev.openshell.middleware.spi.BindingId;
import dev.openshell.middleware.spi.MiddlewareBinding;
import dev.openshell.middleware.spi.Operation;
import dev.openshell.middleware.spi.Phase;
import dev.openshell.middleware.spi.internal.RpcTimeout;
import dev.openshell.middleware.spi.internal.Syntax;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * Checks a service's {@code Describe} answer against its registration (RFC 0009, "Registration and delivery" and
 * "Contract versioning"; binding identity per {@code wire-compat.md}).
 *
 * <h2>Rules</h2>
 * <ul>
 *   <li>{@code name} and {@code service_version}: at most 256 bytes, no control characters (they are logged).</li>
 *   <li>Every binding's operation and phase must be known. {@code HTTP_REQUEST/PRE_CREDENTIALS} and
 *       {@code HTTP_RESPONSE/PRE_RETURN} bindings are the ones configs select. {@code WEBSOCKET_MESSAGE/
 *       PRE_CREDENTIALS} (and, our extension, {@code WEBSOCKET_MESSAGE/PRE_RETURN}) bindings make every config of the
 *       service's request bindings join WebSocket sessions in that direction ({@code EvaluateWebSocketSession});
 *       their {@code id} and limits are not used. {@code UNSPECIFIED}, unknown numbers, other pairs and
 *       {@code POST_CREDENTIALS} (restricted built-ins only) reject the service.</li>
 *   <li>At least one {@code HTTP_REQUEST/PRE_CREDENTIALS} or {@code HTTP_RESPONSE/PRE_RETURN} binding.</li>
 *   <li>A binding's {@code id} follows {@link BindingId}'s grammar, is outside {@code openshell/}, and is unique
 *       within the manifest per operation and phase (one request and one response binding may share an ID: a config
 *       that names it runs both; the {@code WEBSOCKET_MESSAGE} bindings join the request binding). A binding without {@code id} (a service written for the published contract) takes the
 *       registration name as its ID, which is valid only when it is the service's single binding of its kind
 *       (request, response).</li>
 *   <li>The registration's {@code max_body_bytes} must not exceed the binding's advertised capability (which may
 *       itself exceed 4 MiB: the registration is capped at 4 MiB anyway). Never clamped.</li>
 *   <li>An advertised {@code timeout} must parse per {@link RpcTimeout}. It may shorten the registration's
 *       {@code timeout} but cannot extend it (the published proto: it "may shorten but cannot extend the operator
 *       timeout"): a longer one is capped to the registration's, with a note.</li>
 * </ul>
 */
final class ManifestValidation {
    static final int MAX_TEXT_BYTES = 256;

    /** One accepted binding: the SPI binding as registered, plus what the service itself advertised. */
    record Accepted(MiddlewareBinding binding, long capability, Optional<Duration> advertisedTimeout,
                    boolean idFromRegistrationName) {
    }

    /** Which rule a problem breaks (the conformance kit reports one check per rule). */
    enum Rule {
        /** {@code name} and {@code service_version}: length and control characters. */
        TEXT,
        /** At least one binding, and at least one {@code HTTP_REQUEST/PRE_CREDENTIALS} binding. */
        BINDINGS,
        /** Each binding's operation and phase. */
        OPERATION_PHASE,
        /** Binding ID grammar, the reserved namespace, uniqueness, and the registration name standing in. */
        BINDING_ID,
        /** The registration's {@code max_body_bytes} within each binding's capability ({@code max_payload_bytes}). */
        MAX_BODY_BYTES,
        /** An advertised timeout's syntax and range. */
        TIMEOUT
    }

    /** One broken rule. @param rule which @param message a safe description */
    record Problem(Rule rule, String message) {
    }

    /** The outcome: accepted bindings when {@code issues} is empty. */
    record Outcome(String serviceName, String serviceVersion, List<Accepted> bindings, List<Problem> issues,
                   List<String> skipped, List<String> notes, Set<Phase> messagePhases) {
        boolean ok() {
            return issues.isEmpty();
        }

        /** {@return every problem's message, in the order found} */
        List<String> problems() {
            return issues.stream().map(Problem::message).toList();
        }
    }

    /** Collects problems under one rule at a time. */
    private static final class Problems {
        final List<Problem> list = new ArrayList<>();

        void add(Rule rule, String message) {
            list.add(new Problem(rule, message));
        }

        boolean isEmpty() {
            return list.isEmpty();
        }
    }

    private ManifestValidation() {
    }

    static Outcome check(MiddlewareManifest m, ServiceRegistration reg) {
        Problems problems = new Problems();
        List<String> skipped = new ArrayList<>();
        List<String> notes = new ArrayList<>();
        String name = text(m.getName(), "manifest name", problems);
        String version = text(m.getServiceVersion(), "service_version", problems);
        if (m.getBindingsCount() == 0) {
            problems.add(Rule.BINDINGS, "the manifest declares no bindings");
        }
        List<Integer> invoked = new ArrayList<>();
        List<Integer> responses = new ArrayList<>();
        Set<Phase> messagePhases = java.util.EnumSet.noneOf(Phase.class);
        for (int i = 0; i < m.getBindingsCount(); i++) {
            var b = m.getBindings(i);
            String where = "binding " + i + idLabel(b.getId());
            int op = b.getOperationValue();
            int phase = b.getPhaseValue();
            if (op == SupervisorMiddlewareOperation.SUPERVISOR_MIDDLEWARE_OPERATION_HTTP_REQUEST_VALUE
                    && phase == SupervisorMiddlewarePhase.SUPERVISOR_MIDDLEWARE_PHASE_PRE_CREDENTIALS_VALUE) {
                invoked.add(i);
            } else if (op == SupervisorMiddlewareOperation.SUPERVISOR_MIDDLEWARE_OPERATION_HTTP_RESPONSE_VALUE
                    && phase == SupervisorMiddlewarePhase.SUPERVISOR_MIDDLEWARE_PHASE_PRE_RETURN_VALUE) {
                responses.add(i);
            } else if (op == SupervisorMiddlewareOperation.SUPERVISOR_MIDDLEWARE_OPERATION_WEBSOCKET_MESSAGE_VALUE
                    && (phase == SupervisorMiddlewarePhase.SUPERVISOR_MIDDLEWARE_PHASE_PRE_CREDENTIALS_VALUE
                    || phase == SupervisorMiddlewarePhase.SUPERVISOR_MIDDLEWARE_PHASE_PRE_RETURN_VALUE)) {
                messagePhases.add(phase == SupervisorMiddlewarePhase.SUPERVISOR_MIDDLEWARE_PHASE_PRE_RETURN_VALUE
                        ? Phase.PRE_RETURN : Phase.PRE_CREDENTIALS);
            } else if (phase == SupervisorMiddlewarePhase.SUPERVISOR_MIDDLEWARE_PHASE_POST_CREDENTIALS_VALUE) {
                problems.add(Rule.OPERATION_PHASE,
                        where + " asks for the POST_CREDENTIALS phase, which only restricted built-ins may bind");
            } else {
                problems.add(Rule.OPERATION_PHASE,
                        where + " has operation " + opName(op) + " and phase " + phaseName(phase)
                        + "; a service binding must be HTTP_REQUEST/PRE_CREDENTIALS or HTTP_RESPONSE/PRE_RETURN");
            }
            if (!b.getId().isEmpty()) {
                String p = BindingId.problem(b.getId());
                if (p != null) {
                    problems.add(Rule.BINDING_ID,
                            "binding " + i + " has an invalid ID " + Syntax.quote(b.getId()) + ": " + p);
                } else if (new BindingId(b.getId()).isReserved()) {
                    problems.add(Rule.BINDING_ID,
                            "binding ID '" + b.getId() + "' is in the reserved 'openshell/' namespace, which "
                            + "belongs to built-ins that ship with the supervisor");
                }
            }
        }
        if (m.getBindingsCount() > 0 && invoked.isEmpty() && responses.isEmpty() && problems.isEmpty()) {
            problems.add(Rule.BINDINGS, "the manifest has no HTTP_REQUEST/PRE_CREDENTIALS or HTTP_RESPONSE/PRE_RETURN "
                    + "binding");
        }
        List<Accepted> accepted = new ArrayList<>();
        accept(m, reg, invoked, false, accepted, problems, notes);
        accept(m, reg, responses, true, accepted, problems, notes);
        return new Outcome(name, version, problems.isEmpty() ? List.copyOf(accepted) : List.of(),
                List.copyOf(problems.list), List.copyOf(skipped), List.copyOf(notes), Set.copyOf(messagePhases));
    }

    /** Accepts the bindings of one kind (request or response) at {@code indexes}. */
    private static void accept(MiddlewareManifest m, ServiceRegistration reg, List<Integer> invoked, boolean response,
                               List<Accepted> accepted, Problems problems, List<String> notes) {
        String kind = response ? "HTTP_RESPONSE/PRE_RETURN" : "HTTP_REQUEST/PRE_CREDENTIALS";
        Set<String> seen = new HashSet<>();
        for (int i : invoked) {
            var b = m.getBindings(i);
            String where = "binding " + i + idLabel(b.getId());
            boolean fromName = b.getId().isEmpty();
            String id = b.getId();
            if (fromName) {
                if (invoked.size() != 1) {
                    problems.add(Rule.BINDING_ID,
                            where + " has no ID, and the registration name can stand in only for a service's "
                            + "single " + kind + " binding (this one has " + invoked.size() + ")");
                    continue;
                }
                String p = BindingId.problem(reg.name());
                if (p != null) {
                    problems.add(Rule.BINDING_ID, where + " has no ID and the registration name '" + reg.name()
                            + "' is not a valid binding ID: " + p);
                    continue;
                }
                if (new BindingId(reg.name()).isReserved()) {
                    problems.add(Rule.BINDING_ID, where + " has no ID and the registration name '" + reg.name()
                            + "' is in the reserved 'openshell/' namespace");
                    continue;
                }
                id = reg.name();
            } else if (!BindingId.isValid(id) || new BindingId(id).isReserved()) {
                continue; // reported above
            }
            if (!seen.add(id)) {
                problems.add(Rule.BINDING_ID, "binding ID '" + id + "' is declared twice in the manifest");
                continue;
            }
            long capability = b.getMaxPayloadBytes();
            if (Long.compareUnsigned(reg.maxBodyBytes(), capability) > 0) {
                problems.add(Rule.MAX_BODY_BYTES,
                        ("binding '%s' accepts at most %s bytes, less than the registration's max_body_bytes %d "
                        + "(lower max_body_bytes; it is never clamped)")
                        .formatted(id, Long.toUnsignedString(capability), reg.maxBodyBytes()));
                continue;
            }
            Optional<Duration> timeout = Optional.empty();
            if (!b.getTimeout().isEmpty()) {
                try {
                    timeout = Optional.of(RpcTimeout.parse(b.getTimeout()));
                } catch (IllegalArgumentException e) {
                    problems.add(Rule.TIMEOUT, "binding '" + id + "' advertises an " + e.getMessage());
                    continue;
                }
            }
            Duration effective = timeout.orElse(reg.timeout());
            if (effective.compareTo(reg.timeout()) > 0) {
                notes.add("binding '%s' advertises timeout %s, above the registration's %s: capped to %s (a binding may"
                        .formatted(id, RpcTimeout.format(effective), RpcTimeout.format(reg.timeout()),
                                RpcTimeout.format(reg.timeout())) + " shorten but cannot extend the operator timeout)");
                effective = reg.timeout();
            }
            java.util.Set<String> codings = new java.util.HashSet<>();
            for (String c : b.getDecodedContentCodingsList()) {
                codings.add(c.toLowerCase(java.util.Locale.ROOT));
            }
            MiddlewareBinding spi;
            try {
                spi = response
                        ? new MiddlewareBinding(new BindingId(id), Operation.HTTP_RESPONSE, Phase.PRE_RETURN,
                                reg.maxBodyBytes(), Optional.of(effective))
                        : new MiddlewareBinding(new BindingId(id), Operation.HTTP_REQUEST, Phase.PRE_CREDENTIALS,
                                reg.maxBodyBytes(), Optional.of(effective), codings, b.getSkipEmptyBody());
            } catch (IllegalArgumentException e) {
                problems.add(Rule.BINDING_ID, "binding '" + id + "' lists a decoded content coding that is not a token");
                continue;
            }
            accepted.add(new Accepted(spi, capability, timeout, fromName));
        }
    }

    /**
     * Compares a manifest seen after an outage with the bindings accepted at start-up.
     *
     * @return empty when every accepted binding is still offered unchanged; else a safe description
     */
    static Optional<String> difference(MiddlewareManifest m, ServiceRegistration reg, List<Accepted> before) {
        Outcome now = check(m, reg);
        if (!now.ok()) {
            return Optional.of("the manifest is now invalid: " + String.join("; ", now.problems()));
        }
        for (Accepted a : before) {
            Optional<Accepted> match = now.bindings().stream()
                    .filter(n -> n.binding().id().equals(a.binding().id())
                            && n.binding().operation() == a.binding().operation()).findFirst();
            if (match.isEmpty()) {
                return Optional.of("binding '" + a.binding().id() + "' is no longer offered");
            }
            if (!match.get().binding().equals(a.binding())) {
                return Optional.of("binding '" + a.binding().id() + "' changed its limits, timeout, decoded "
                        + "content codings or skip_empty_body");
            }
        }
        return Optional.empty();
    }

    private static String text(String s, String what, Problems problems) {
        if (s.getBytes(StandardCharsets.UTF_8).length > MAX_TEXT_BYTES) {
            problems.add(Rule.TEXT, what + " is longer than " + MAX_TEXT_BYTES + " bytes");
            return "";
        }
        if (s.chars().anyMatch(c -> c < 0x20 || c == 0x7f || (c >= 0x80 && c < 0xa0))) {
            problems.add(Rule.TEXT, what + " contains control characters");
            return "";
        }
        return s;
    }

    private static String idLabel(String id) {
        return id.isEmpty() ? " (no ID)" : BindingId.isValid(id) ? " ('" + id + "')" : "";
    }

    /** HTTP_REQUEST, WEBSOCKET_MESSAGE, HTTP_RESPONSE: the operations the published contract defines. */
    private static boolean knownOperation(int op) {
        return op == 1 || op == 2 || op == 3;
    }

    private static boolean knownPhase(int phase) {
        return phase == 1 || phase == 2;
    }

    private static String opName(int op) {
        var e = SupervisorMiddlewareOperation.forNumber(op);
        return e == null ? "number " + op : e.name().replace("SUPERVISOR_MIDDLEWARE_OPERATION_", "");
    }

    private static String phaseName(int phase) {
        var e = SupervisorMiddlewarePhase.forNumber(phase);
        return e == null ? "number " + phase : e.name().replace("SUPERVISOR_MIDDLEWARE_PHASE_", "");
    }
}
