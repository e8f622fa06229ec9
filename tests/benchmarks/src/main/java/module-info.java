/**
 * JMH micro-benchmarks of the in-process costs: chain selection, header rules, {@code openshell/regex}, and the gRPC
 * adapter's translation. Compiled as a module with the reactor; run on the class path by
 * {@code scripts/run-benchmarks.sh} (JMH forks its measurement JVMs on the class path). See
 * {@code docs/BENCHMARKS.md}.
 *
 * @uses dev.openshell.middleware.spi.MiddlewareProvider to find {@code openshell/regex} when run as a module
 */
@SuppressWarnings("module") // jmh.core is an automatic module
module dev.openshell.benchmarks {
    requires dev.openshell.supervisor.engine;
    requires dev.openshell.supervisor.runtime;
    requires dev.openshell.middleware.proto;
    requires jmh.core;
    /** RegexCpuTime: the thread CPU time of the regex built-in's evaluations. */
    requires java.management;

    opens dev.openshell.benchmarks to jmh.core;

    uses dev.openshell.middleware.spi.MiddlewareProvider;
}
