package dev.openshell.supervisor.grpc.tck;

import dev.openshell.middleware.spi.internal.RpcTimeout;
import dev.openshell.supervisor.grpc.ServiceRegistration;
import jakarta.json.Json;
import jakarta.json.JsonArrayBuilder;
import jakarta.json.JsonObject;
import jakarta.json.JsonObjectBuilder;
import java.time.Duration;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * What {@code supervisor tck} found: every check in the order run, and the facts it ran under.
 *
 * <p>The JSON form ({@link #toJson()}) is a stable interface for CI (documented in
 * {@code docs/external-middleware.md}, "Check your service"): {@code passed}, {@code endpoint}, {@code transport}
 * ({@code plaintext}, {@code tls} or {@code mtls}), {@code binding_id} (or {@code null}), {@code max_body_bytes},
 * {@code effective_timeout_ms}, {@code summary} (counts per status) and {@code checks} (each with {@code name},
 * {@code status}, {@code reason}, {@code figure} and {@code measured}). New members may be added; none is renamed.
 *
 * @param registration the registration the kit used (its {@code max_body_bytes} is the one the kit chose)
 * @param bindingId the binding exercised, when one was chosen
 * @param maxBodyBytes the registration's body limit the kit used, in bytes
 * @param effectiveTimeout the binding's effective timeout ({@link Duration#ZERO} before it is known)
 * @param checks every check in the order run; unmodifiable
 */
public record TckReport(ServiceRegistration registration, Optional<String> bindingId, long maxBodyBytes,
                        Duration effectiveTimeout, List<Check> checks) {
    /** Copies the list. */
    public TckReport {
        checks = List.copyOf(checks);
    }

    /** {@return whether no check failed: the exit code of {@code supervisor tck} is 0 exactly then} */
    public boolean passed() {
        return checks.stream().noneMatch(c -> c.status() == Check.Status.FAIL);
    }

    /** {@return how many checks ended with each status} */
    public Map<Check.Status, Integer> summary() {
        Map<Check.Status, Integer> m = new EnumMap<>(Check.Status.class);
        for (Check.Status s : Check.Status.values()) {
            m.put(s, 0);
        }
        checks.forEach(c -> m.merge(c.status(), 1, Integer::sum));
        return m;
    }

    /** {@return the check with this name, if it ran} @param name a check name */
    public Optional<Check> check(String name) {
        return checks.stream().filter(c -> c.name().equals(name)).findFirst();
    }

    /** {@return {@code plaintext}, {@code tls} or {@code mtls}} */
    public String transport() {
        return registration.plaintext() ? "plaintext" : registration.tls().mutual() ? "mtls" : "tls";
    }

    private String endpoint() {
        return registration.host().contains(":") ? "[" + registration.host() + "]:" + registration.port()
                : registration.host() + ":" + registration.port();
    }

    /** {@return the report for a terminal: one line per check, then the counts} */
    public String toText() {
        StringBuilder b = new StringBuilder();
        b.append("supervisor tck: ").append(endpoint()).append(" (").append(transport()).append(')');
        bindingId.ifPresent(id -> b.append(", binding ").append(id));
        if (!effectiveTimeout.isZero()) {
            b.append(", max_body_bytes ").append(maxBodyBytes).append(", effective timeout ")
                    .append(RpcTimeout.format(effectiveTimeout));
        }
        b.append('\n');
        int width = checks.stream().mapToInt(c -> c.name().length()).max().orElse(10);
        for (Check c : checks) {
            b.append(("%-4s  %-" + width + "s  %s").formatted(c.status(), c.name(), c.reason()));
            if (!c.figure().isEmpty()) {
                b.append(" [").append(c.figure()).append(']');
            }
            b.append('\n');
        }
        Map<Check.Status, Integer> s = summary();
        b.append("%d check(s): %d PASS, %d WARN, %d FAIL, %d SKIP: %s%n".formatted(checks.size(),
                s.get(Check.Status.PASS), s.get(Check.Status.WARN), s.get(Check.Status.FAIL),
                s.get(Check.Status.SKIP), passed() ? "passed" : "FAILED"));
        return b.toString();
    }

    /** {@return the report as one JSON object (see the class description)} */
    public JsonObject toJson() {
        JsonArrayBuilder list = Json.createArrayBuilder();
        for (Check c : checks) {
            JsonObjectBuilder measured = Json.createObjectBuilder();
            c.measured().entrySet().stream().sorted(Map.Entry.comparingByKey()).forEach(e -> {
                Number n = e.getValue();
                if (n instanceof Double || n instanceof Float) {
                    measured.add(e.getKey(), n.doubleValue());
                } else {
                    measured.add(e.getKey(), n.longValue());
                }
            });
            list.add(Json.createObjectBuilder().add("name", c.name()).add("status", c.status().name())
                    .add("reason", c.reason()).add("figure", c.figure()).add("measured", measured));
        }
        JsonObjectBuilder summary = Json.createObjectBuilder();
        summary().forEach((k, v) -> summary.add(k.name().toLowerCase(java.util.Locale.ROOT), v));
        JsonObjectBuilder root = Json.createObjectBuilder().add("passed", passed()).add("endpoint", endpoint())
                .add("transport", transport());
        if (bindingId.isPresent()) {
            root.add("binding_id", bindingId.get());
        } else {
            root.addNull("binding_id");
        }
        return root.add("max_body_bytes", maxBodyBytes).add("effective_timeout_ms", effectiveTimeout.toMillis())
                .add("summary", summary).add("checks", list).build();
    }
}
