/**
 * The {@code supervisor} command line. Nothing requires this module; it is the image's main module.
 */
module dev.openshell.supervisor.cli {
    requires dev.openshell.supervisor.runtime;
    requires dev.openshell.supervisor.grpc;
    requires java.net.http;
    requires jdk.httpserver;
    requires dev.openshell.examples.privacyguard;
    requires info.picocli;
    requires jakarta.json;
    requires java.logging;
    // sun.misc.Signal: supervisor run reloads the policy on SIGHUP
    requires jdk.unsupported;

    // picocli reads the command classes' annotations and fields reflectively
    opens dev.openshell.supervisor.cli to info.picocli;
}
