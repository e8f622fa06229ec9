/**
 * The baseline of the SPI compatibility check: the exported package {@code dev.openshell.middleware.spi} exactly as
 * it was at main d21d810, the start of the compatibility contract (no released artifact exists to compare with).
 * Only this declaration is new: the original's qualified exports name packages the baseline does not hold.
 *
 * <p>The build compares the current SPI JAR with this one (japicmp, {@code tests/spi-baseline/pom.xml}), and builds
 * {@code tests/fixture-plugins/baseline-redactor} against it, a plugin the image must still load and run.
 */
module dev.openshell.middleware.spi {
    requires transitive jakarta.json;

    exports dev.openshell.middleware.spi;
}
