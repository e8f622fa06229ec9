package dev.openshell.supervisor.audit;

import com.github.benmanes.caffeine.cache.Cache;
import dev.openshell.middleware.spi.internal.AuditNames;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The members {@link OcsfEvents} writes into many event classes (the {@code unmapped.openshell} base, {@code actor},
 * {@code file}, {@code url}, {@code dst_endpoint}, UIDs) and the three ways supervisor-owned text is made safe for an
 * event: {@link #policyText} (policy text as written), {@link #safeText} (identifiers) and {@link #safeDetail} (prose).
 * No request content passes through here unbounded.
 */
final class EventMembers {
    /** OCSF HTTP Activity {@code activity_id} per standard method; any other method is 99, Other. */
    static final Map<String, Integer> HTTP_ACTIVITY_IDS = Map.ofEntries(
            Map.entry("CONNECT", 1), Map.entry("DELETE", 2), Map.entry("GET", 3), Map.entry("HEAD", 4),
            Map.entry("OPTIONS", 5), Map.entry("POST", 6), Map.entry("PUT", 7), Map.entry("TRACE", 8),
            Map.entry("PATCH", 9));

    private EventMembers() {
    }

    /** {@return {@code os} with the request ID and the admitting policy} */
    static JsonText requestBase(JsonText os, RequestFacts request) {
        os.add("request_id", safeText(request.requestId(), 64));
        request.networkPolicy().ifPresent(p -> os.add("network_policy", safeText(p, 128)));
        return os;
    }

    static JsonText openshell(JsonText os, RequestFacts request, String configKey, String bindingId) {
        return requestBase(os, request).add("config_key", safeText(configKey, 128))
                .add("binding_id", safeText(bindingId, 128));
    }

    /** {@return the {@code actor} member for {@code p}, as {@link JsonText#raw} splices it into an event} */
    static byte[] actorMember(ProcessFacts p) {
        JsonText e = new JsonText();
        e.open("actor").open("process").add("pid", p.pid());
        file(e.open("file"), p.binary()).openArray("hashes").openElement().add("algorithm_id", 3)
                .add("algorithm", "SHA-256").add("value", safeText(p.sha256(), 64)).end().end().end();
        List<String> lineage = new java.util.ArrayList<>();
        for (int i = p.ancestors().size() - 1; i >= 0; i--) {
            lineage.add(safeText(p.ancestors().get(i), 4096));
        }
        lineage.add(safeText(p.binary(), 4096));
        e.addArray("lineage", lineage);
        if (!p.ancestors().isEmpty()) {
            e.open("parent_process");
            if (p.parentPid() > 0) {
                e.add("pid", p.parentPid());
            }
            file(e.open("file"), p.ancestors().get(0)).end().end();
        }
        e.end().end();
        return e.member();
    }

    static JsonText file(JsonText f, String path) {
        String safe = safeText(path, 4096);
        int slash = safe.lastIndexOf('/');
        return f.add("path", safe).add("name", slash >= 0 ? safe.substring(slash + 1) : safe).add("type_id", 1)
                .add("type", "Regular File");
    }

    static JsonText url(JsonText u, RequestFacts r) {
        return u.add("scheme", r.scheme()).add("hostname", r.host()).add("port", r.port());
    }

    static JsonText endpoint(JsonText d, RequestFacts r) {
        return d.add("hostname", r.host()).add("port", r.port());
    }

    /**
     * {@return a random (version 4) UUID for {@code metadata.uid} and {@code finding_info.uid}, for
     * {@link JsonText#addUuid}} The IDs only need to be unique, not unpredictable, so they come from
     * {@link ThreadLocalRandom} rather than {@link UUID#randomUUID()}'s {@code SecureRandom}, which reads the OS
     * entropy source and serialises callers.
     */
    static UUID randomUid() {
        ThreadLocalRandom r = ThreadLocalRandom.current();
        long msb = (r.nextLong() & ~0xF000L) | 0x4000L;
        long lsb = (r.nextLong() & 0x3FFF_FFFF_FFFF_FFFFL) | 0x8000_0000_0000_0000L;
        return new UUID(msb, lsb);
    }

    static String caption(String method) {
        return method.charAt(0) + method.substring(1).toLowerCase(Locale.ROOT);
    }

    /**
     * Keeps policy text (L7 rules as written, such as {@code GET /repos/**}) and canonical paths printable and short:
     * characters outside printable ASCII become {@code _}, and the result is cut at {@code max} characters. JSON
     * escaping of quotes and backslashes is the writer's.
     *
     * @param s the text
     * @param max the longest result, in characters
     * @return the safe text
     */
    static String policyText(String s, int max) {
        StringBuilder b = new StringBuilder(Math.min(s.length(), max));
        for (int i = 0; i < s.length() && b.length() < max; i++) {
            char c = s.charAt(i);
            b.append(c >= 0x20 && c < 0x7F ? c : '_');
        }
        return b.toString();
    }

    /**
     * Keeps supervisor-owned identifiers printable and short: characters outside {@code [A-Za-z0-9 ._:/@-]} become
     * {@code _}, and the result is cut at {@code max} characters.
     *
     * @param s the text
     * @param max the longest result, in characters
     * @return the safe text
     */
    static String safeText(String s, int max) {
        StringBuilder b = new StringBuilder(Math.min(s.length(), max));
        for (int i = 0; i < s.length() && b.length() < max; i++) {
            char c = s.charAt(i);
            boolean ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
                    || c == ' ' || c == '.' || c == '_' || c == ':' || c == '/' || c == '@' || c == '-';
            b.append(ok ? c : '_');
        }
        return b.toString();
    }

    /**
     * {@return supervisor-owned prose for an event, readable and bounded}: printable ASCII is kept as written
     * (punctuation included); a line break, tab or other control character becomes a space, and any other character
     * {@code ?}; at most {@code max} characters.
     *
     * @param s the text
     * @param max the longest result
     */
    static String safeDetail(String s, int max) {
        StringBuilder b = new StringBuilder(Math.min(s.length(), max));
        for (int i = 0; i < s.length() && b.length() < max; i++) {
            char c = s.charAt(i);
            b.append(c >= 0x20 && c < 0x7f ? c : Character.isISOControl(c) ? ' ' : '?');
        }
        return b.toString();
    }

    /**
     * {@return {@code method} as {@code http_request.http_method} writes it}: a standard method as sent; any other
     * token is the agent's choice and is written in the safe form of agent-chosen names ({@code docs/observability.md},
     * "Agent-controlled names", the rule of the L7 policy's names): at most 64 characters (longer ones cut, then
     * {@code ...}), every character outside printable ASCII as {@code ?}, and every run of at least 16 ASCII letters
     * and digits holding both a letter and a digit as {@code [redacted]}.
     *
     * @param method the method, upper case
     */
    static String httpMethod(String method) {
        return HTTP_ACTIVITY_IDS.containsKey(method) ? method : AuditNames.safe(method);
    }

    /**
     * {@return the {@code actor} member ({@code null}: the process is not known)}: {@code actor.process} with
     * {@code pid}, {@code file} (path, name, SHA-256), {@code lineage} (the executables from the oldest ancestor
     * down to the process itself, as OCSF's example orders them) and {@code parent_process} (PID and executable).
     * Paths pass through {@link #safeText}. Rendered once per process and kept in {@code actors}
     * ({@link OcsfEvents#actors}).
     */
    static byte[] actor(Cache<ProcessFacts, byte[]> actors, RequestFacts request) {
        if (request.process().isEmpty()) {
            return null;
        }
        ProcessFacts p = request.process().get();
        byte[] member = actors.getIfPresent(p);
        if (member == null) {
            member = actorMember(p);
            if (member.length <= OcsfEvents.MAX_CACHED_MEMBER_BYTES) {
                actors.put(p, member);
            }
        }
        return member;
    }

    /** Writes the {@code actor} member made by {@link #actor(Cache, RequestFacts)}, if any. */
    static void actor(JsonText e, byte[] actor) {
        if (actor != null) {
            e.raw(actor);
        }
    }
}
