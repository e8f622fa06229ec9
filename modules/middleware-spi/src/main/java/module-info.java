/**
 * The supervisor middleware SPI (OpenShell RFC 0009, "The middleware contract").
 *
 * <p>Every middleware stage, built-in or external, is reached through
 * {@link dev.openshell.middleware.spi.MiddlewareProvider}. The public package holds the contract only: the provider
 * interface and the plain Java value types that mirror the {@code openshell.middleware.v1} wire contract; no Helidon
 * or protobuf type appears here. Every public type and member carries {@code @API} (apiguardian, as in JUnit 5) with
 * its stability; the evolution rules are in {@code docs/plugin-authors.md}, and the build compares the package with
 * its baseline ({@code tests/spi-baseline}, japicmp).
 *
 * <p>{@code dev.openshell.middleware.spi.host} holds supervisor-only host capabilities (credential access for the
 * post-credentials phase). It is exported by qualified export to the engine (which runs the post-credentials phase),
 * the runtime (which hands it the request and the serving generation's credential access) and the named restricted
 * built-ins
 * only; a module in a plugin layer cannot use it, whatever its name.
 *
 * <p>{@code dev.openshell.middleware.spi.net} holds network value types that several supervisor modules share (the
 * CIDR ranges of {@code allowed_ips}); it is not part of the contract and is exported to those modules only.
 *
 * <p>{@code dev.openshell.middleware.spi.internal} holds the supervisor's own helpers that no contract signature
 * exposes (the grammars of {@code Syntax}, {@code RpcTimeout}, the {@code OnError} failure policy, the
 * {@code StageResult} of a chain run); it is exported to the supervisor modules that use them only.
 *
 * <p>{@code org.apiguardian.api} is a static dependence: the {@code @API} markers are read at compile time and by
 * tools, and need not be present at run time (the runtime image does not link it).
 *
 * @uses nothing: this module only declares the service type
 */
@SuppressWarnings("module") // export targets are compiled later in the reactor
module dev.openshell.middleware.spi {
    requires transitive jakarta.json;
    requires static transitive org.apiguardian.api;

    exports dev.openshell.middleware.spi;
    exports dev.openshell.middleware.spi.host to
            dev.openshell.supervisor.engine,
            dev.openshell.supervisor.runtime,
            dev.openshell.builtin.sigv4;
    exports dev.openshell.middleware.spi.net to
            dev.openshell.supervisor.policy,
            dev.openshell.supervisor.proxy,
            dev.openshell.supervisor.runtime;
    exports dev.openshell.middleware.spi.internal to
            dev.openshell.supervisor.audit,
            dev.openshell.supervisor.cli,
            dev.openshell.supervisor.engine,
            dev.openshell.supervisor.grpc,
            dev.openshell.supervisor.l7,
            dev.openshell.supervisor.policy,
            dev.openshell.supervisor.proxy,
            dev.openshell.supervisor.runtime,
            dev.openshell.builtin.regex,
            dev.openshell.benchmarks;
}
