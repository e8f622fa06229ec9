/**
 * The supervisor engine: the plugin host that discovers every {@link dev.openshell.middleware.spi.MiddlewareProvider}
 * (built-ins in the boot layer, third-party JARs in child module layers), the provider registry, and the chain
 * engine of RFC 0009 (fold, failure policy, header rules, envelope limits).
 *
 * @uses dev.openshell.middleware.spi.MiddlewareProvider
 */
module dev.openshell.supervisor.engine {
    requires transitive dev.openshell.middleware.spi;
    requires transitive org.eclipse.collections.api;
    requires org.eclipse.collections.impl;

    exports dev.openshell.supervisor.engine;
    exports dev.openshell.supervisor.engine.chain;
    exports dev.openshell.supervisor.engine.credentials;

    uses dev.openshell.middleware.spi.MiddlewareProvider;
}
