package dev.openshell.middleware.spi;

import static org.apiguardian.api.API.Status.STABLE;

import java.util.List;
import java.util.Objects;
import org.apiguardian.api.API;

/**
 * The sandbox process that opened the connection (RFC 0009, "The middleware contract": {@code Process}). It is
 * per-connection, optional, and context only: never an authorization input.
 *
 * @param binary the resolved binary path
 * @param pid the process ID
 * @param ancestors ancestor binary paths from the process-tree walk, nearest first
 */
@API(status = STABLE, since = "0.1")
public record OriginatingProcess(String binary, long pid, List<String> ancestors) {
    /** @throws NullPointerException if any part is {@code null} */
    @API(status = STABLE, since = "0.1")
    public OriginatingProcess {
        Objects.requireNonNull(binary, "binary");
        ancestors = List.copyOf(ancestors);
    }
}
