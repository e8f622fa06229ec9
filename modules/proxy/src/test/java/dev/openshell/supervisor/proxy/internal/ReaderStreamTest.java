package dev.openshell.supervisor.proxy.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.helidon.common.buffers.DataReader;
import io.helidon.common.socket.NioSocket;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;

/**
 * {@link ProxyConnection.ReaderStream} over a real loopback connection and Helidon's own {@link NioSocket} and
 * {@link DataReader}: every byte the client sends is read once, in order, then the end of the stream, whether the
 * reader had pulled the first bytes (as Helidon does while it chooses the connection's protocol) or not, for any sizes
 * of the client's writes and of the stream's reads. It pins what the direct socket read relies on in Helidon's
 * {@code NioSocket}: its buffer's stale bytes are taken by the first direct read, and the channel is read after.
 */
class ReaderStreamTest {
    @Provide
    Arbitrary<List<Integer>> writes() {
        return Arbitraries.integers().between(1, 40_000).list().ofMinSize(1).ofMaxSize(12);
    }

    @Provide
    Arbitrary<List<Integer>> reads() {
        return Arbitraries.oneOf(Arbitraries.integers().between(1, 16),
                Arbitraries.integers().between(1, 70_000)).list().ofMinSize(1).ofMaxSize(8);
    }

    @Property(tries = 60)
    void readsEveryByteOnceInOrder(@ForAll("writes") List<Integer> writes, @ForAll("reads") List<Integer> reads,
            @ForAll boolean pulledFirst, @ForAll boolean direct, @ForAll @IntRange(max = 1000) int seed)
            throws Exception {
        int total = writes.stream().mapToInt(Integer::intValue).sum();
        byte[] sent = new byte[total];
        new Random(seed).nextBytes(sent);
        try (ServerSocketChannel listener = ServerSocketChannel.open()) {
            listener.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            try (SocketChannel client = SocketChannel.open(listener.getLocalAddress());
                 SocketChannel accepted = listener.accept()) {
                CompletableFuture<Void> sender = CompletableFuture.runAsync(() -> send(client, sent, writes));
                NioSocket socket = NioSocket.server(accepted, "test", "test");
                DataReader reader = DataReader.create(socket);
                if (pulledFirst) {
                    reader.ensureAvailable(); // Helidon reads the first bytes before it hands the connection over
                }
                ProxyConnection.ReaderStream in = new ProxyConnection.ReaderStream(reader, direct ? socket : null);
                ByteArrayOutputStream got = new ByteArrayOutputStream();
                int r = 0;
                for (int n; ; r++) {
                    byte[] b = new byte[reads.get(r % reads.size()) + 3];
                    n = in.read(b, 3, b.length - 3);
                    if (n < 0) {
                        break;
                    }
                    got.write(b, 3, n);
                }
                sender.join();
                assertArrayEquals(sent, got.toByteArray());
                assertEquals(-1, in.read(new byte[8], 0, 8), "the end of the stream stays the end");
            }
        }
    }

    private static void send(SocketChannel client, byte[] bytes, List<Integer> writes) {
        try {
            int at = 0;
            for (int w : writes) {
                ByteBuffer b = ByteBuffer.wrap(bytes, at, w);
                while (b.hasRemaining()) {
                    client.write(b);
                }
                at += w;
            }
            client.shutdownOutput();
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
