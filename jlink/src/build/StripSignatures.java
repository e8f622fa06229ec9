import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.jar.Attributes;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import java.util.zip.ZipEntry;

/**
 * Rewrites every signed JAR of a directory without its signature files (META-INF/*.SF, *.RSA, *.DSA, *.EC and the
 * SIG-* files), in place. jlink ignores JAR signatures anyway (--ignore-signing-information: a runtime image holds no
 * signed modules) but warns "signed modular JAR ... is currently not supported" once per signed JAR; without the
 * files it has nothing to warn about. The manifest loses its per-entry digests ({@code *-Digest} attributes, and the
 * entries they leave empty): without the signature files nothing reads them, and they are most of the manifest's
 * bytes (BouncyCastle's and Eclipse Collections' five manifests: 2.2 MB, 0.66 MB of the image's compressed modules).
 * The main attributes, and any other per-entry attribute, are kept.
 * Usage: java StripSignatures.java DIR
 */
public class StripSignatures {
    private static final Pattern SIGNATURE = Pattern.compile("META-INF/[^/]+\\.(SF|RSA|DSA|EC)|META-INF/SIG-[^/]+");

    public static void main(String[] args) throws IOException {
        List<Path> jars;
        try (Stream<Path> s = Files.list(Path.of(args[0]))) {
            jars = s.filter(p -> p.toString().endsWith(".jar")).sorted().toList();
        }
        for (Path jar : jars) {
            boolean signed;
            try (JarFile j = new JarFile(jar.toFile(), false)) {
                // a JAR stripped of its signature files by an earlier build may still carry the digests
                Manifest m = j.getManifest();
                signed = j.stream().anyMatch(e -> SIGNATURE.matcher(e.getName()).matches())
                        || (m != null && withoutDigests(m).getEntries().size() != m.getEntries().size());
            }
            if (signed) {
                strip(jar);
            }
        }
    }

    private static void strip(Path jar) throws IOException {
        Path tmp = jar.resolveSibling(jar.getFileName() + ".unsigned");
        try (JarFile in = new JarFile(jar.toFile(), false);
             OutputStream file = Files.newOutputStream(tmp);
             JarOutputStream out = new JarOutputStream(file)) {
            for (JarEntry e : in.stream().toList()) {
                if (SIGNATURE.matcher(e.getName()).matches()) {
                    continue;
                }
                ZipEntry copy = new ZipEntry(e.getName());
                copy.setTime(e.getTime());
                out.putNextEntry(copy);
                if (e.getName().equals(JarFile.MANIFEST_NAME)) {
                    withoutDigests(in.getManifest()).write(out);
                } else {
                    try (InputStream data = in.getInputStream(e)) {
                        data.transferTo(out);
                    }
                }
                out.closeEntry();
            }
        }
        Files.move(tmp, jar, StandardCopyOption.REPLACE_EXISTING);
    }

    /** {@return a copy of {@code m} without per-entry digest attributes, and without the entries left empty} */
    static Manifest withoutDigests(Manifest m) {
        Manifest out = new Manifest();
        out.getMainAttributes().putAll(m.getMainAttributes());
        for (Map.Entry<String, Attributes> e : m.getEntries().entrySet()) {
            Attributes kept = new Attributes();
            for (Map.Entry<Object, Object> a : e.getValue().entrySet()) {
                if (!a.getKey().toString().toLowerCase(Locale.ROOT).endsWith("-digest")) {
                    kept.put(a.getKey(), a.getValue());
                }
            }
            if (!kept.isEmpty()) {
                out.getEntries().put(e.getKey(), kept);
            }
        }
        return out;
    }
}
