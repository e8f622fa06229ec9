package dev.openshell.benchmarks;

import dev.openshell.middleware.spi.internal.BodyCharsets;
import java.nio.charset.StandardCharsets;

/**
 * What the first charset name a body declares costs in a fresh JVM: {@code KnownCharsets}' class initialisation (its
 * {@code charset-names.txt} and the JDK's charsets and aliases) on the first read that meets a {@code <meta charset>}.
 * A body without a declaration is read first (the reader's own classes loaded), then one with a declaration is timed
 * (the initialisation and the read), then another (the read alone). One JVM gives one figure: run it several times
 * ({@code docs/BENCHMARKS.md}, section "Reading a whole body for the charsets it declares in itself"). Prints
 * microseconds.
 */
public final class KnownCharsetsInit {
    private KnownCharsetsInit() {
    }

    /**
     * Prints {@code first=<us> next=<us>}.
     *
     * @param args none
     */
    public static void main(String[] args) {
        byte[] plain = "<p>no declaration</p>".getBytes(StandardCharsets.US_ASCII);
        byte[] meta = "<meta charset=\"utf-8\">".getBytes(StandardCharsets.US_ASCII);
        byte[] other = "<meta charset=\"iso-8859-1\">".getBytes(StandardCharsets.US_ASCII);
        int found = BodyCharsets.declared(plain, plain.length).size();
        long t0 = System.nanoTime();
        found += BodyCharsets.declared(meta, meta.length).size();
        long t1 = System.nanoTime();
        found += BodyCharsets.declared(other, other.length).size();
        long t2 = System.nanoTime();
        System.out.printf("first=%d next=%d found=%d%n", (t1 - t0) / 1000, (t2 - t1) / 1000, found);
    }
}
