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

    /**
     * {@return whether some reader resolves {@code name}, given as {@link CharsetName} reads it} Compared by its key,
     * by its key as ICU compares names ({@link #icuKey}), and, for a name starting with {@code x-}, by the rest's
     * two keys too: ICU looks a name up again without that prefix (libxml2 falls back to ICU for a name iconv cannot
     * open, as Debian builds it: {@code x-utf-7}, {@code utf-07}, {@code windows-065000} are UTF-7 there; attacker
     * pass 15b, P17b-1).
     */
    static boolean resolves(String name) {
        if (KEYS.contains(key(name)) || KEYS.contains(icuKey(name))) {
            return true;
        }
        String rest = name.startsWith("x-") ? name.substring(2) : null;
        return rest != null && (KEYS.contains(key(rest)) || KEYS.contains(icuKey(rest)));
    }

    /**
     * {@return a name as ICU compares it ({@code ucnv_io_stripASCIIForCompare}): only letters (lower-cased) and
     * digits, and a {@code 0} that starts a number and is followed by a digit dropped ({@code 0007} is {@code 7};
     * a number starts after anything but a digit, an ignored byte included)}
     */
    static String icuKey(String name) {
        StringBuilder b = new StringBuilder(name.length());
        boolean afterDigit = false;
        for (int i = 0; i < name.length(); i++) {
            char c = Character.toLowerCase(name.charAt(i));
            if (!CharsetName.alnum(c)) {
                afterDigit = false;
                continue;
            }
            boolean digit = c >= '0' && c <= '9';
            if (c == '0' && !afterDigit && i + 1 < name.length() && name.charAt(i + 1) >= '0'
                    && name.charAt(i + 1) <= '9') {
                continue; // a leading zero before another digit
            }
            afterDigit = digit;
            b.append(c);
        }
        return b.toString();
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
                    keys.add(icuKey(line.strip()));
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        for (Charset cs : Charset.availableCharsets().values()) {
            keys.add(key(cs.name().toLowerCase(Locale.ROOT)));
            keys.add(icuKey(cs.name()));
            cs.aliases().forEach(a -> {
                keys.add(key(a));
                keys.add(icuKey(a));
            });
        }
        keys.remove("");
        return Set.copyOf(keys);
    }
}
