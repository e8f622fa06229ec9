package dev.openshell.supervisor.proxy.internal;

import dev.openshell.middleware.spi.internal.Syntax;
import java.nio.charset.StandardCharsets;

/**
 * A secret as percent-encoding may spell it (RFC 3986 section 2.1; form encoding's {@code +} for a space): each byte
 * of its UTF-8 literal or as {@code %XX} (hex in either case, mixed too), in any mix: {@code %43%72%45...} with every
 * character encoded, or only some of them, does not hide it (attacker pass finding 7).
 */
final class PercentSpelling implements Spelling {
    private final byte[] raw;

    /** @param secret the secret value; not empty */
    PercentSpelling(String secret) {
        raw = secret.getBytes(StandardCharsets.UTF_8);
    }

    @Override
    public int longest() {
        return 3 * raw.length;
    }

    @Override
    public void starts(Pairs pairs) {
        int hi = (raw[0] & 0xff) >>> 4;
        pairs.pair('%', Character.toUpperCase(Character.forDigit(hi, 16)));
        pairs.pair('%', Character.forDigit(hi, 16));
        int[] firsts = raw[0] == ' ' ? new int[] {' ', '+'} : new int[] {raw[0] & 0xff};
        for (int b0 : firsts) {
            if (raw.length == 1) {
                pairs.pair(b0, -1);
                continue;
            }
            pairs.pair(b0, raw[1] & 0xff);
            pairs.pair(b0, '%');
            if (raw[1] == ' ') {
                pairs.pair(b0, '+');
            }
        }
    }

    @Override
    public int match(byte[] buf, int i, int n) {
        int p = i;
        for (byte want : raw) {
            if (p >= n) {
                return -1;
            }
            byte x = buf[p];
            if (x == '%') {
                if (p + 2 >= n) {
                    return -1;
                }
                int h1 = Syntax.hexDigit((char) (buf[p + 1] & 0xff));
                int h2 = Syntax.hexDigit((char) (buf[p + 2] & 0xff));
                if (h1 >= 0 && h2 >= 0 && (h1 << 4 | h2) == (want & 0xff)) {
                    p += 3;
                    continue;
                }
            }
            if (x == want || x == '+' && want == ' ') {
                p++;
                continue;
            }
            return 0;
        }
        return p - i;
    }
}
