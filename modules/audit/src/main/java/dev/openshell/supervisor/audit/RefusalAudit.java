package dev.openshell.supervisor.audit;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * The one place every refusal becomes visible to the operator (issue 19: "every refusal is visible"): each is counted
 * in {@code supervisor_refusals_total{category,code}} and written as an OCSF HTTP Activity event, Denied
 * ({@link OcsfEvents#refusal}), rate-limited per client address and code so that a client cannot flood the audit log
 * by provoking refusals.
 *
 * <p>Rate limit: per (client address, code), the first {@link #burst()} refusals of each window of
 * {@link #window()} are written one by one; later ones in that window are counted in
 * {@code supervisor_audit_suppressed_total{code}} and summarised by one aggregate event
 * ({@code unmapped.openshell.aggregated: true}, OCSF {@code count} = how many were not written, {@code start_time} of
 * the first of them) when the window has ended: at the next refusal for the same key, or at the periodic
 * {@link #flush}, at the latest one window later, or at {@link #close}. At most {@link #MAX_KEYS} keys are tracked;
 * past that, refusals of clients not yet tracked share one key per code (client {@code *}), so memory stays bounded
 * whatever the number of client addresses. Nothing is ever lost silently: every refusal is either written, or
 * counted in an aggregate event and in the suppressed metric.
 *
 * <p>Thread-safe; {@link #refused} never blocks on another key's refusals and never throws.
 */
public final class RefusalAudit implements AutoCloseable {
    /** The most (client, code) keys tracked at once. */
    public static final int MAX_KEYS = 4096;
    /** The default number of refusals written one by one per key and window. */
    public static final int DEFAULT_BURST = 10;
    /** The default window. */
    public static final Duration DEFAULT_WINDOW = Duration.ofSeconds(60);
    private static final System.Logger LOG = System.getLogger(RefusalAudit.class.getName());

    private final OcsfEvents events;
    private final AuditSink sink;
    private final SupervisorMetrics metrics;
    private final Clock clock;
    private final int burst;
    private final long windowMillis;
    private final Map<Key, Window> windows = new ConcurrentHashMap<>();
    private volatile ScheduledExecutorService flusher;

    /** The client of the key that clients past {@link #MAX_KEYS} share. */
    private static final String SHARED = "*";

    private record Key(String client, String code) {
    }

    /** One key's current window; guarded by itself. */
    private static final class Window {
        long start;
        int written;
        long suppressed;
        long firstSuppressed;
        RefusalFacts last;
        /** Set when {@link #flush} dropped the window from the map: a refusal holding it takes a new one. */
        boolean removed;

        Window(long start) {
            this.start = start;
        }
    }

    /**
     * A refusal audit with the default burst and window.
     *
     * @param events the event builder
     * @param sink where events go
     * @param metrics the metrics
     * @param clock the clock for windows
     */
    public RefusalAudit(OcsfEvents events, AuditSink sink, SupervisorMetrics metrics, Clock clock) {
        this(events, sink, metrics, clock, DEFAULT_BURST, DEFAULT_WINDOW);
    }

    /**
     * A refusal audit.
     *
     * @param events the event builder
     * @param sink where events go
     * @param metrics the metrics
     * @param clock the clock for windows
     * @param burst refusals written one by one per key and window, at least 1
     * @param window the window, at least one millisecond
     * @throws IllegalArgumentException if {@code burst} or {@code window} is out of range
     */
    public RefusalAudit(OcsfEvents events, AuditSink sink, SupervisorMetrics metrics, Clock clock, int burst,
                        Duration window) {
        this.events = Objects.requireNonNull(events, "events");
        this.sink = Objects.requireNonNull(sink, "sink");
        this.metrics = Objects.requireNonNull(metrics, "metrics");
        this.clock = Objects.requireNonNull(clock, "clock");
        if (burst < 1 || window.toMillis() < 1) {
            throw new IllegalArgumentException("burst must be at least 1 and the window at least 1 ms");
        }
        this.burst = burst;
        this.windowMillis = window.toMillis();
    }

    /** {@return the refusals written one by one per key and window} */
    public int burst() {
        return burst;
    }

    /** {@return the window} */
    public Duration window() {
        return Duration.ofMillis(windowMillis);
    }

    /**
     * Starts flushing ended windows once per window on a daemon thread, so that a flood that stops is still
     * summarised. Idempotent.
     */
    public synchronized void start() {
        if (flusher != null) {
            return;
        }
        ScheduledThreadPoolExecutor e = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "refusal-audit-flush");
            t.setDaemon(true);
            return t;
        });
        e.scheduleWithFixedDelay(this::flush, windowMillis, windowMillis, TimeUnit.MILLISECONDS);
        flusher = e;
    }

    /**
     * Counts one refusal and writes it, or counts it as suppressed when its key is over the burst.
     *
     * @param r the refusal
     * @return the sequence number of its line ({@link AuditSink#emit}), 0 when none was written
     */
    public long refused(RefusalFacts r) {
        try {
            metrics.refusal(r.category(), r.code());
            long now = clock.millis();
            Key key = new Key(r.clientIp().orElse("-"), r.code());
            JsonSummary summary = null;
            boolean write;
            while (true) {
                Window w = windows.get(key);
                if (w == null) {
                    if (windows.size() >= MAX_KEYS) {
                        key = new Key(SHARED, r.code());
                    }
                    w = windows.computeIfAbsent(key, k -> new Window(now));
                }
                synchronized (w) {
                    if (w.removed) {
                        continue;
                    }
                    if (now - w.start >= windowMillis) {
                        summary = takeSummary(w);
                        w.start = now;
                        w.written = 0;
                    }
                    write = w.written < burst;
                    if (write) {
                        w.written++;
                    } else {
                        if (w.suppressed == 0) {
                            w.firstSuppressed = now;
                        }
                        w.suppressed++;
                        w.last = r;
                    }
                }
                break;
            }
            if (summary != null) {
                summary.emit();
            }
            if (write) {
                return sink.emit(events.refusal(r, 1, now, false));
            }
            metrics.auditSuppressed(r.code());
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.ERROR, "refusal audit failed: " + e.getClass().getName());
        }
        return 0;
    }

    /** An aggregate event taken out of a window under its lock, emitted outside it. */
    private final class JsonSummary {
        private final RefusalFacts last;
        private final long count;
        private final long first;

        JsonSummary(RefusalFacts last, long count, long first) {
            this.last = last;
            this.count = count;
            this.first = first;
        }

        void emit() {
            sink.emit(events.refusal(last, count, first, true));
        }
    }

    private JsonSummary takeSummary(Window w) {
        if (w.suppressed == 0) {
            return null;
        }
        JsonSummary s = new JsonSummary(w.last, w.suppressed, w.firstSuppressed);
        w.suppressed = 0;
        w.last = null;
        return s;
    }

    /**
     * Writes an aggregate event for every window that has ended with suppressed refusals, and forgets keys whose
     * window ended with nothing suppressed. Called once per window by {@link #start}; never throws.
     */
    public void flush() {
        flush(false);
    }

    private void flush(boolean all) {
        try {
            long now = clock.millis();
            List<JsonSummary> out = new ArrayList<>();
            for (Iterator<Map.Entry<Key, Window>> it = windows.entrySet().iterator(); it.hasNext(); ) {
                Window w = it.next().getValue();
                synchronized (w) {
                    if (!all && now - w.start < windowMillis) {
                        continue;
                    }
                    JsonSummary s = takeSummary(w);
                    if (s != null) {
                        out.add(s);
                    }
                    w.removed = true;
                    it.remove();
                }
            }
            out.forEach(JsonSummary::emit);
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.ERROR, "refusal audit flush failed: " + e.getClass().getName());
        }
    }

    /** Stops the periodic flush and writes every pending aggregate event. */
    @Override
    public synchronized void close() {
        if (flusher != null) {
            flusher.shutdownNow();
            flusher = null;
        }
        flush(true);
    }
}
