import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.jar.JarOutputStream;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import java.util.zip.ZipEntry;

/**
 * Rewrites every signed JAR of a directory without its signature files (META-INF/*.SF, *.RSA, *.DSA, *.EC and the
 * SIG-* files), in place. jlink ignores JAR signatures anyway (--ignore-signing-information: a runtime image holds no
 * signed modules) but warns "signed modular JAR ... is currently not supported" once per signed JAR; without the
 * files it has nothing to warn about. The manifest's per-entry digests are kept: they are harmless without signatures.
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
                signed = j.stream().anyMatch(e -> SIGNATURE.matcher(e.getName()).matches());
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
                try (InputStream data = in.getInputStream(e)) {
                    data.transferTo(out);
                }
                out.closeEntry();
            }
        }
        Files.move(tmp, jar, StandardCopyOption.REPLACE_EXISTING);
    }
}
