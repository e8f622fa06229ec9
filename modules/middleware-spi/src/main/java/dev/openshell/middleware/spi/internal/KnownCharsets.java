package dev.openshell.middleware.spi.internal;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.Locale;
import java.util.Set;

/**
 * Whether some reader of a body resolves a charset name a body declares in itself (attacker pass 11, P13-5): a name
 * no reader resolves ({@code %s}, {@code {enc}}, {@code ${charset}} in a template or a code sample that builds a
 * {@code <meta>}) is skipped by every reader (BeautifulSoup and {@code charset_normalizer} through Python's codec
 * lookup, lxml through libxml2 and iconv, browsers and html5lib through the WHATWG labels, Java through
 * {@link Charset}), so it declares nothing. The names: {@code charset-names.txt} (Python's codecs and aliases, glibc's
 * {@code iconv -l}, GNU libiconv's encodings and aliases, which lxml's wheels from PyPI link (its {@code JAVA} and
 * {@code C99} decode backslash-u escapes: attacker pass 15, P17-1), the WHATWG labels; {@code scripts/charset-names.py})
 * and the JDK's charsets and aliases. A name
 * is compared by its key: the name as a codec lookup reads it ({@link CharsetName}) without {@code -} and {@code .}
 * (BeautifulSoup also tries a name without its hyphens, Python with {@code .} as {@code _}), so the comparison errs
 * towards resolving. It is not looser than glibc's own: libxml2 (lxml) hands a value to {@code iconv_open} as
 * written, and glibc (2.32 and later) drops every byte but letters, digits and {@code _-.,:/} and upper-cases the
 * rest before its alias lookup, so a template's {@code %(e)s} or {@code {e}s} is {@code ES} (ISO646-ES) there, and a
 * name whose letters and digits spell a glibc name is one glibc resolves, or nearly (P14-6 reviewed: a per-reader
 * comparison would have to keep that rule for glibc, and so would refuse the same names). Immutable after class
 * initialisation.
 */
final class KnownCharsets {
    private static final Set<String> KEYS = load();

    private KnownCharsets() {
    }

    /** {@return whether some reader resolves {@code name}, given as {@link CharsetName} reads it} */
    static boolean resolves(String name) {
        return KEYS.contains(key(name));
    }

    private static String key(String name) {
        StringBuilder b = new StringBuilder(name.length());
        for (int i = 0; i < name.length(); i++) {
            char c = Character.toLowerCase(name.charAt(i));
            if (CharsetName.alnum(c)) {
                b.append(c);
            }
        }
        return b.toString();
    }

    private static Set<String> load() {
        Set<String> keys = new HashSet<>();
        try (InputStream in = KnownCharsets.class.getResourceAsStream("charset-names.txt")) {
            if (in == null) {
                throw new IllegalStateException("charset-names.txt is missing from dev.openshell.middleware.spi");
            }
            BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.US_ASCII));
            for (String line = r.readLine(); line != null; line = r.readLine()) {
                if (!line.isBlank() && !line.startsWith("#")) {
                    keys.add(key(line.strip()));
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        for (Charset cs : Charset.availableCharsets().values()) {
            keys.add(key(cs.name().toLowerCase(Locale.ROOT)));
            cs.aliases().forEach(a -> keys.add(key(a)));
        }
        keys.remove("");
        return Set.copyOf(keys);
    }
}
