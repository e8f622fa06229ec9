package dev.openshell.supervisor.cli;

import dev.openshell.supervisor.runtime.Supervisor;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/**
 * {@code supervisor run}: serves the egress proxy until SIGTERM or SIGINT. Prints exactly one line on standard output
 * when ready: {@code supervisor listening on HOST:PORT}. Reloads the policy on SIGHUP and when the policy file changes
 * (see {@link Supervisor}: a failed reload keeps the current policy serving). Exit codes: after a clean stop the JVM's
 * status for a signal-initiated exit, 143 for SIGTERM and 130 for SIGINT (in-flight requests have finished and the
 * listeners are closed by then); 1 when start-up fails (every problem is printed, with file, line and column for
 * policy and gateway files).
 */
@Command(name = "run", description = {
        "Run the egress supervisor proxy.",
        "With no options: 127.0.0.1:3128, the embedded default policy (all hosts on ports 80 and 443, "
                + "openshell/regex redacting known secret formats on every host, fail_closed; "
                + "'supervisor policy print-default' prints it), admin on 127.0.0.1:9464.",
        "The policy is reloaded on SIGHUP and when its file changes; a policy that fails to load is reported "
                + "and the previous one keeps serving."})
final class RunCommand implements Callable<Integer> {
    /** The longest an orderly stop may take after SIGTERM: the proxy's 10 s grace period plus margin. */
    static final java.time.Duration SHUTDOWN_BOUND = java.time.Duration.ofSeconds(30);

    @Spec
    CommandSpec spec;

    @Option(names = "--policy", paramLabel = "FILE", description = "Sandbox policy (YAML).")
    Path policy;

    @Option(names = "--gateway-config", paramLabel = "FILE", description = "Gateway configuration (TOML).")
    Path gateway;

    @Option(names = "--listen", paramLabel = "HOST:PORT", description = "Proxy listen address (default 127.0.0.1:3128).")
    String listen;

    @Option(names = "--plugins", paramLabel = "DIR", description = "Plugins directory (default: the image's plugins/).")
    Path plugins;

    @Option(names = "--state-dir", paramLabel = "DIR",
            description = "State directory; the supervisor CA lives in DIR/ca (default ~/.openshell/supervisor).")
    Path stateDir;

    @Option(names = "--audit-log", paramLabel = "FILE",
            description = "OCSF JSONL audit log: a file, '-' for standard output, or 'off' "
                    + "(default STATE_DIR/audit/audit.jsonl).")
    String auditLog;

    @Option(names = "--admin-listen", paramLabel = "HOST:PORT",
            description = "Admin listener for /metrics, /health/live, /health/ready, or 'off' (default 127.0.0.1:9464).")
    String adminListen;

    @Option(names = "--watch-policy", negatable = true, defaultValue = "true", fallbackValue = "true",
            description = "Reload when the policy file changes (default: on; --no-watch-policy: only on SIGHUP).")
    boolean watchPolicy;

    RunCommand() {
    }

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        Supervisor supervisor;
        try {
            supervisor = Supervisor.start(new Supervisor.Options(Optional.ofNullable(policy),
                    Optional.ofNullable(gateway), Optional.ofNullable(listen), Optional.ofNullable(plugins),
                    Optional.ofNullable(stateDir), Optional.ofNullable(auditLog), Optional.ofNullable(adminListen),
                    System.getenv(), watchPolicy ? Optional.of(Supervisor.DEFAULT_WATCH_DEBOUNCE)
                            : Optional.empty()));
        } catch (Supervisor.StartupException e) {
            err.println("supervisor: cannot start: " + e.getMessage());
            if (ConsoleLogging.debug() && e.getCause() != null) {
                e.getCause().printStackTrace(err);
            }
            err.flush();
            return 1;
        }
        CountDownLatch stopped = new CountDownLatch(1);
        Thread hook = new Thread(() -> {
            // bounded: a listener left broken (an OutOfMemoryError in Helidon's accept thread) can make an orderly
            // stop wait forever, and a process that ignores SIGTERM is worse than one that exits unclean
            // written directly, not logged: the JVM's logging is being shut down by its own hook meanwhile
            status(err, "stopping: no new connections; in-flight requests may finish (at most "
                    + SHUTDOWN_BOUND.toSeconds() + " s)");
            long begun = System.nanoTime();
            Thread closer = Thread.ofPlatform().daemon().name("supervisor-close").start(() -> {
                try {
                    supervisor.close();
                    status(err, "stopped after " + java.time.Duration.ofNanos(System.nanoTime() - begun).toMillis()
                            + " ms: in-flight requests finished, listeners and the audit log closed");
                } finally {
                    stopped.countDown();
                }
            });
            try {
                if (!closer.join(SHUTDOWN_BOUND)) {
                    err.println("supervisor: shutdown did not finish within " + SHUTDOWN_BOUND.toSeconds()
                            + " s; exiting without it");
                    err.flush();
                    Runtime.getRuntime().halt(1);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "supervisor-shutdown");
        Runtime.getRuntime().addShutdownHook(hook);
        reloadOnSighup(supervisor);
        String host = listen != null ? listen.substring(0, listen.lastIndexOf(':'))
                : supervisor.generation().gateway().supervisor().listen().host();
        supervisor.adminPort().ifPresent(p -> System.getLogger(RunCommand.class.getName())
                .log(System.Logger.Level.INFO, "admin listener on port {0}: /metrics /health/live /health/ready "
                        + "/.well-known/jwks.json /.well-known/openid-configuration",
                        String.valueOf(p)));
        out.println("supervisor listening on " + host + ":" + supervisor.port());
        out.flush();
        try {
            stopped.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return 0;
    }

    /** Prints one status line in the console log's format, directly (for the shutdown hook). */
    private static void status(PrintWriter err, String message) {
        err.println(java.time.Instant.now() + " INFO " + RunCommand.class.getName() + ": " + message);
        err.flush();
    }

    /** SIGHUP schedules a reload; the handler returns at once (the JVM's default for SIGHUP would exit). */
    private void reloadOnSighup(Supervisor supervisor) {
        System.Logger log = System.getLogger(RunCommand.class.getName());
        try {
            Hangup.onHangup(supervisor::requestReload);
            log.log(System.Logger.Level.INFO, "the policy is reloaded on SIGHUP" + (policy != null && watchPolicy
                    ? " and when " + policy + " changes" : ""));
        } catch (IllegalArgumentException e) {
            // the JVM reserves SIGHUP when started with -Xrs, and some platforms lack it
            log.log(System.Logger.Level.WARNING, "SIGHUP cannot be handled here ({0}); {1}", e.getMessage(),
                    policy != null && watchPolicy ? "the policy is reloaded only when its file changes"
                            : "the policy is not reloaded (restart to change it, or run without --no-watch-policy)");
        }
    }
}
