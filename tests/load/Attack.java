import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The attacker and the victims of tests/load/attack.sh (not a test). java Attack.java ATTACK PROXY_PORT UPSTREAM_PORT
 * ADMIN_PORT SECONDS runs one attack from 127.0.0.1 against the proxy for SECONDS (at most 120; ATTACK one of none,
 * heads, slow-bodies, uploads, dense, spin), opening at most a fixed number of connections. java Attack.java victim ATTACK
 * PROXY_PORT UPSTREAM_PORT ADMIN_PORT SECONDS FROM is a victim, in a process of its own, from address FROM: it sends
 * GET and small POST requests through a chain, one at a time, each on a fresh connection, and probes /health/live on
 * the admin port, then prints one result line per request kind. attack.sh runs one victim from 127.0.0.2 (another
 * client address) and one from 127.0.0.1 (another process of the attacker's address) beside each attack.
 */
public class Attack {
    private static final InetAddress ATTACKER = addr("127.0.0.1");
    private static final int FOUR_MIB = 4 * 1024 * 1024;
    /** Request heads the heads attack holds open (ATTACK_HEADS, default 4000). */
    private static final int HEADS = Integer.parseInt(System.getenv().getOrDefault("ATTACK_HEADS", "4000"));

    public static void main(String[] args) throws Exception {
        if (args[0].equals("victim")) {
            // victim-only, in a process of its own: java Attack.java victim ATTACK PROXY UPSTREAM ADMIN SECONDS FROM
            int seconds = Math.min(120, Integer.parseInt(args[5]));
            long end = System.nanoTime() + seconds * 1_000_000_000L;
            InetAddress from = addr(args[6]);
            measure(args[1], " (" + args[6] + ")", Integer.parseInt(args[2]), "load.test:" + args[3],
                    Integer.parseInt(args[4]), seconds, end, from).forEach(System.out::println);
            System.exit(0);
        }
        String attack = args[0];
        int proxy = Integer.parseInt(args[1]);
        int upstream = Integer.parseInt(args[2]);
        int admin = Integer.parseInt(args[3]);
        int seconds = Math.min(120, Integer.parseInt(args[4]));
        long end = System.nanoTime() + seconds * 1_000_000_000L;
        String authority = "load.test:" + upstream;
        AtomicInteger attackRefused = new AtomicInteger();
        java.util.concurrent.ConcurrentHashMap<String, Integer> outcomes = new java.util.concurrent.ConcurrentHashMap<>();
        List<Thread> attackers = new ArrayList<>();
        ConcurrentLinkedQueue<Socket> held = new ConcurrentLinkedQueue<>();
        switch (attack) {
            case "none" -> { }
            case "heads" -> attackers.add(Thread.ofVirtual().start(() -> {
                // thousands of connections, each a 60 KiB header section without its final CRLF, then silence
                byte[] head = ("GET http://" + authority + "/ HTTP/1.1\r\nHost: " + authority + "\r\nX-Pad: "
                        + "a".repeat(60 * 1024) + "\r\n").getBytes(StandardCharsets.ISO_8859_1);
                for (int i = 0; i < HEADS && System.nanoTime() < end; i++) {
                    try {
                        Socket s = new Socket(InetAddress.getLoopbackAddress(), proxy, ATTACKER, 0);
                        held.add(s);
                        s.getOutputStream().write(head);
                    } catch (IOException e) {
                        attackRefused.incrementAndGet();
                    }
                }
            }));
            case "slow-bodies" -> {
                // dozens of uploads that declare 4 MiB and send a byte a second
                for (int i = 0; i < 48; i++) {
                    attackers.add(Thread.ofVirtual().start(() -> {
                        while (System.nanoTime() < end) {
                            try (Socket s = new Socket(InetAddress.getLoopbackAddress(), proxy, ATTACKER, 0)) {
                                OutputStream out = s.getOutputStream();
                                out.write(post(authority, FOUR_MIB).getBytes(StandardCharsets.ISO_8859_1));
                                while (System.nanoTime() < end) {
                                    out.write('x');
                                    out.flush();
                                    Thread.sleep(1000); // the attack's pace, not synchronisation
                                }
                            } catch (IOException e) {
                                attackRefused.incrementAndGet(); // closed by the proxy: start another
                            } catch (InterruptedException e) {
                                return;
                            }
                        }
                    }));
                }
            }
            case "uploads" -> {
                // 100 concurrent 4 MiB uploads, each connection posting again as soon as it is answered
                // valid JSON ({"a":"aaa..."}), so the regex stage decodes and scans all of it (a body that is not the
                // JSON it declares is refused as undecodable after a few bytes, which would make the attack cheap)
                byte[] body = new byte[FOUR_MIB];
                Arrays.fill(body, (byte) 'a');
                byte[] open = "{\"a\":\"".getBytes(StandardCharsets.US_ASCII);
                System.arraycopy(open, 0, body, 0, open.length);
                body[FOUR_MIB - 2] = '"';
                body[FOUR_MIB - 1] = '}';
                uploaders(100, proxy, post(authority, "application/json", body.length), body, end, attackRefused,
                        outcomes, attackers);
            }
            case "dense" -> {
                // 8 concurrent 4 MB text/html bodies of "&a;": the costliest body per byte to read in every way a
                // reader might (0.3 to 0.7 s of CPU each), refused at the stage's deadline (403 stage_timeout)
                byte[] body = "&a;".repeat(FOUR_MIB / 3).getBytes(StandardCharsets.US_ASCII);
                uploaders(8, proxy, post(authority, "text/html", body.length), body, end, attackRefused, outcomes,
                        attackers);
            }
            case "spin" -> {
                // 8 clients, each sending requests one after another to a host whose stage spins on the CPU
                byte[] get = ("GET http://spin.test:" + upstream + "/ HTTP/1.1\r\nHost: spin.test:" + upstream
                        + "\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.ISO_8859_1);
                for (int i = 0; i < 8; i++) {
                    attackers.add(Thread.ofVirtual().start(() -> {
                        while (System.nanoTime() < end && !Thread.currentThread().isInterrupted()) {
                            if (exchange(proxy, ATTACKER, get) != 200) {
                                attackRefused.incrementAndGet(); // 403: the stage timed out or is unavailable
                            }
                        }
                    }));
                }
            }
            default -> throw new IllegalArgumentException("unknown attack " + attack);
        }
        // the victims run in processes of their own (attack.sh), so the attacker's threads do not delay their clocks
        long left = end - System.nanoTime();
        if (left > 0) {
            Thread.sleep(left / 1_000_000); // the attack's length, not synchronisation
        }
        for (Thread t : attackers) {
            t.interrupt();
        }
        for (Socket s : held) {
            s.close();
        }
        System.out.println("ATTACK " + attack + " attacker connections refused or closed: " + attackRefused.get()
                + (outcomes.isEmpty() ? "" : " " + new java.util.TreeMap<>(outcomes)));
        System.exit(0);
    }

    /**
     * The victim: GET, a small POST and {@code /health/live}, one after another, each on a fresh connection from
     * {@code from}, after the attack had time to build up, until {@code end}. {@return the result lines}
     */
    private static List<String> measure(String attack, String tag, int proxy, String authority, int admin, int seconds,
                                        long end, InetAddress from) throws InterruptedException {
        Thread.sleep(Math.min(2000, seconds * 200L)); // let the attack build up before measuring
        Stats get = new Stats();
        Stats post = new Stats();
        Stats live = new Stats();
        byte[] small = "{\"q\":\"hello\"}".getBytes(StandardCharsets.US_ASCII);
        while (System.nanoTime() < end) {
            get.time(() -> exchange(proxy, from, ("GET http://" + authority + "/v HTTP/1.1\r\nHost: " + authority
                    + "\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.ISO_8859_1)));
            post.time(() -> {
                ByteArrayOutputStream b = new ByteArrayOutputStream();
                b.writeBytes(post(authority, small.length).replace("\r\n\r\n", "\r\nConnection: close\r\n\r\n")
                        .getBytes(StandardCharsets.ISO_8859_1));
                b.writeBytes(small);
                return exchange(proxy, from, b.toByteArray());
            });
            if (admin > 0) {
                live.time(() -> exchange(admin, from, ("GET /health/live HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                        + "Connection: close\r\n\r\n").getBytes(StandardCharsets.ISO_8859_1)));
            }
        }
        List<String> lines = new ArrayList<>();
        lines.add(get.line(attack, "victim GET" + tag));
        lines.add(post.line(attack, "victim small POST" + tag));
        if (admin > 0) {
            lines.add(live.line(attack, "/health/live" + tag));
        }
        return lines;
    }

    private static String post(String authority, int length) {
        return post(authority, "application/json", length);
    }

    private static String post(String authority, String type, int length) {
        return "POST http://" + authority + "/upload HTTP/1.1\r\nHost: " + authority
                + "\r\nContent-Type: " + type + "\r\nContent-Length: " + length + "\r\n\r\n";
    }

    /**
     * Starts {@code clients} uploaders, each posting {@code body} again on its connection as soon as it is answered
     * 200 (on a new connection after any other status) until {@code end}.
     */
    private static void uploaders(int clients, int proxy, String head, byte[] body, long end,
                                  AtomicInteger refused, java.util.Map<String, Integer> outcomes,
                                  List<Thread> attackers) {
        for (int i = 0; i < clients; i++) {
            attackers.add(Thread.ofVirtual().start(() -> {
                while (System.nanoTime() < end) {
                    try (Socket s = new Socket(InetAddress.getLoopbackAddress(), proxy, ATTACKER, 0)) {
                        s.setSoTimeout(30_000);
                        while (System.nanoTime() < end) {
                            OutputStream out = s.getOutputStream();
                            out.write(head.getBytes(StandardCharsets.ISO_8859_1));
                            out.write(body);
                            out.flush();
                            int st = status(s.getInputStream());
                            if (st != 200) {
                                refused.incrementAndGet();
                                outcomes.merge("status " + st, 1, Integer::sum);
                                break;
                            }
                        }
                    } catch (IOException e) {
                        refused.incrementAndGet();
                        outcomes.merge(e.getClass().getSimpleName(), 1, Integer::sum);
                    }
                }
            }));
        }
    }

    /** One request on a fresh connection from {@code from}; {@return the status, -1 on a connection failure} */
    private static int exchange(int port, InetAddress from, byte[] request) {
        try (Socket s = new Socket(InetAddress.getLoopbackAddress(), port, from, 0)) {
            s.setSoTimeout(10_000);
            s.getOutputStream().write(request);
            return status(s.getInputStream());
        } catch (IOException e) {
            return -1;
        }
    }

    /** Reads a response head and a Content-Length body; {@return the status} */
    private static int status(InputStream in) throws IOException {
        StringBuilder head = new StringBuilder();
        int c;
        while ((c = in.read()) >= 0) {
            head.append((char) c);
            if (head.length() >= 4 && head.lastIndexOf("\r\n\r\n") == head.length() - 4) {
                break;
            }
        }
        if (head.length() < 12) {
            return -1;
        }
        int length = 0;
        for (String line : head.toString().split("\r\n")) {
            if (line.regionMatches(true, 0, "content-length:", 0, 15)) {
                length = Integer.parseInt(line.substring(15).trim());
            }
        }
        in.readNBytes(length);
        return Integer.parseInt(head.substring(9, 12));
    }

    private static InetAddress addr(String a) {
        try {
            return InetAddress.getByName(a);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Latencies of one kind of victim request. */
    private static final class Stats {
        private final List<Long> nanos = new ArrayList<>();
        private final AtomicLong failed = new AtomicLong();

        interface Call {
            int run();
        }

        void time(Call call) {
            long t0 = System.nanoTime();
            int status = call.run();
            long t = System.nanoTime() - t0;
            if (status == 200) {
                nanos.add(t);
            } else {
                failed.incrementAndGet();
            }
        }

        String line(String attack, String what) {
            long[] s = nanos.stream().mapToLong(Long::longValue).sorted().toArray();
            double p50 = s.length == 0 ? Double.NaN : s[s.length / 2] / 1e6;
            double p99 = s.length == 0 ? Double.NaN : s[Math.min(s.length - 1, (int) (s.length * 0.99))] / 1e6;
            double max = s.length == 0 ? Double.NaN : s[s.length - 1] / 1e6;
            return String.format("RESULT %-12s %-40s ok %6d  failed %5d  p50 %8.2f ms  p99 %8.2f ms  max %8.2f ms",
                    attack, what, s.length, failed.get(), p50, p99, max);
        }
    }
}
