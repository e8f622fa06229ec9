/**
 * The supervisor engine: the plugin host that discovers every {@link dev.openshell.middleware.spi.MiddlewareProvider}
 * (built-ins in the boot layer, third-party JARs in child module layers), the provider registry, and the chain
 * engine of RFC 0009 (fold, failure policy, header rules, envelope limits).
 *
 * <p>Its packages are exported only to the modules that read them: the runtime (which wires the engine into a
 * running supervisor), the gRPC adapter (which implements {@code MiddlewareProvider} over the wire and reports
 * registry claims), the CLI ({@code supervisor plugins}) and the benchmarks. Plugins never read the engine: the
 * plugin host refuses a plugin that requires it.
 *
 * @uses dev.openshell.middleware.spi.MiddlewareProvider
 */
@SuppressWarnings("module") // export targets are compiled later in the reactor
module dev.openshell.supervisor.engine {
    requires transitive dev.openshell.middleware.spi;
    requires transitive org.eclipse.collections.api;
    requires org.eclipse.collections.impl;

    exports dev.openshell.supervisor.engine to
            dev.openshell.supervisor.grpc,
            dev.openshell.supervisor.runtime,
            dev.openshell.supervisor.cli,
            dev.openshell.benchmarks;
    exports dev.openshell.supervisor.engine.chain to
            dev.openshell.supervisor.runtime,
            dev.openshell.benchmarks;
    exports dev.openshell.supervisor.engine.credentials to
            dev.openshell.supervisor.runtime,
            dev.openshell.benchmarks;

    uses dev.openshell.middleware.spi.MiddlewareProvider;
}
