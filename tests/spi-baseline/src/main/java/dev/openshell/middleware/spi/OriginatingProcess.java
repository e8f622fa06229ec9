package dev.openshell.middleware.spi;

import java.util.List;
import java.util.Objects;

/**
 * The sandbox process that opened the connection (RFC 0009, "The middleware contract": {@code Process}). It is
 * per-connection, optional, and context only: never an authorization input.
 *
 * @param binary the resolved binary path
 * @param pid the process ID
 * @param ancestors ancestor binary paths from the process-tree walk, nearest first
 */
public record OriginatingProcess(String binary, long pid, List<String> ancestors) {
    /** @throws NullPointerException if any part is {@code null} */
    public OriginatingProcess {
        Objects.requireNonNull(binary, "binary");
        ancestors = List.copyOf(ancestors);
    }
}
