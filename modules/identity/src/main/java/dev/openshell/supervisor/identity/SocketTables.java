package dev.openshell.supervisor.identity;

import java.io.BufferedReader;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.Map;

/**
 * Reads a network namespace's TCP tables ({@code net/tcp}, {@code net/tcp6}; see {@code proc_net_tcp(5)}): finds the
 * socket whose local end is the client's address and whose remote end is the proxy's, and returns its inode.
 *
 * <p>Each row is {@code sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode ...}. An address
 * is the in-memory bytes of the network-order address printed as 32-bit words in host byte order ({@code %08X} per
 * word), the port in hex. IPv4-mapped IPv6 addresses ({@code ::ffff:a.b.c.d}, a dual-stack socket) compare equal to
 * the IPv4 address. Rows with inode 0 (TIME_WAIT, orphaned sockets) belong to no process and are skipped. The
 * four-tuple is unique in a namespace, so at most one row matches.
 */
final class SocketTables {
    private static final boolean LITTLE_ENDIAN = ByteOrder.nativeOrder() == ByteOrder.LITTLE_ENDIAN;

    private SocketTables() {
    }

    /**
     * {@return every socket with an inode in one of the namespace's tables, by {@link #key} of its local and remote
     * ends}
     *
     * @param table the table, {@code net/tcp} or {@code net/tcp6} of the namespace
     * @throws IOException if it cannot be read ({@code tcp6} is absent on a kernel without IPv6)
     */
    static Map<String, Long> read(Path table) throws IOException {
        Map<String, Long> out = new HashMap<>();
        try (BufferedReader r = Files.newBufferedReader(table, StandardCharsets.US_ASCII)) {
            r.readLine(); // the header
            String[] f = new String[10];
            for (String line = r.readLine(); line != null; line = r.readLine()) {
                if (fields(line, f) < 10) {
                    continue;
                }
                long inode = parseInode(f[9]);
                byte[] local = address(f[1]);
                byte[] remote = address(f[2]);
                if (inode > 0 && local != null && remote != null) {
                    out.put(key(local, port(f[1]), remote, port(f[2])), inode);
                }
            }
        }
        return out;
    }

    /**
     * {@return whether a client address may have its socket in {@code net/tcp}: an IPv4 address, or an IPv4-mapped
     * IPv6 one (the client's socket is then IPv4, or dual-stack IPv6 in {@code net/tcp6})}
     */
    static boolean ipv4(InetSocketAddress client) {
        return normal(client.getAddress()).length == 4;
    }

    /** {@return the key of a connection: both ends, IPv4-mapped addresses as IPv4} */
    static String key(InetSocketAddress local, InetSocketAddress remote) {
        return key(normal(local.getAddress()), local.getPort(), normal(remote.getAddress()), remote.getPort());
    }

    private static String key(byte[] local, int localPort, byte[] remote, int remotePort) {
        HexFormat hex = HexFormat.of();
        return hex.formatHex(local) + ":" + localPort + ">" + hex.formatHex(remote) + ":" + remotePort;
    }

    private static int port(String field) {
        int colon = field.indexOf(':');
        try {
            return Integer.parseInt(field, colon + 1, field.length(), 16);
        } catch (NumberFormatException | IndexOutOfBoundsException e) {
            return -1;
        }
    }

    /** Splits the first {@code out.length} whitespace-separated fields; {@return how many were found} */
    static int fields(String line, String[] out) {
        int n = 0;
        int i = 0;
        int len = line.length();
        while (n < out.length) {
            while (i < len && line.charAt(i) == ' ') {
                i++;
            }
            if (i >= len) {
                break;
            }
            int start = i;
            while (i < len && line.charAt(i) != ' ') {
                i++;
            }
            out[n++] = line.substring(start, i);
        }
        return n;
    }

    private static long parseInode(String s) {
        try {
            return Long.parseLong(s);
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    /** {@return the address of a {@code HEX:PORT} field as 4 bytes (IPv4, also for a mapped IPv6), or null} */
    static byte[] address(String field) {
        int colon = field.indexOf(':');
        if (colon != 8 && colon != 32) {
            return null;
        }
        byte[] bytes = new byte[colon / 2];
        for (int w = 0; w < colon / 8; w++) {
            long word;
            try {
                word = Long.parseLong(field, w * 8, w * 8 + 8, 16);
            } catch (NumberFormatException e) {
                return null;
            }
            for (int b = 0; b < 4; b++) {
                int shift = LITTLE_ENDIAN ? 8 * b : 8 * (3 - b);
                bytes[w * 4 + b] = (byte) (word >>> shift);
            }
        }
        return bytes.length == 16 ? unmap(bytes) : bytes;
    }

    /** {@return the bytes of an address, an IPv4-mapped IPv6 address as its 4 IPv4 bytes} */
    static byte[] normal(InetAddress a) {
        byte[] b = a.getAddress();
        return b.length == 16 ? unmap(b) : b;
    }

    private static byte[] unmap(byte[] b) {
        for (int i = 0; i < 10; i++) {
            if (b[i] != 0) {
                return b;
            }
        }
        if (b[10] != (byte) 0xff || b[11] != (byte) 0xff) {
            return b;
        }
        return Arrays.copyOfRange(b, 12, 16);
    }

    /** {@return a table field for an address and port, as the kernel prints it (for fake trees in tests)} */
    static String field(InetAddress a, int port, boolean sixColumn) {
        byte[] b = a.getAddress();
        if (sixColumn && b.length == 4) {
            byte[] m = new byte[16];
            m[10] = (byte) 0xff;
            m[11] = (byte) 0xff;
            System.arraycopy(b, 0, m, 12, 4);
            b = m;
        }
        StringBuilder sb = new StringBuilder();
        for (int w = 0; w < b.length / 4; w++) {
            long word = 0;
            for (int i = 0; i < 4; i++) {
                int shift = LITTLE_ENDIAN ? 8 * i : 8 * (3 - i);
                word |= (b[w * 4 + i] & 0xffL) << shift;
            }
            sb.append(String.format("%08X", word));
        }
        return sb.append(':').append(hexPort(port)).toString();
    }

    private static String hexPort(int port) {
        return String.format("%04X", port);
    }
}
