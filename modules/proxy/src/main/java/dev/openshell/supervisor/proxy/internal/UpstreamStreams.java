package dev.openshell.supervisor.proxy.internal;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;

/**
 * The socket streams of an {@link UpstreamPool.Connection}: every {@link IOException} they throw is an
 * {@link UpstreamIOException}, so the session can tell an upstream failure (502/504, or a retry on a fresh
 * connection) from a client one.
 */
final class UpstreamStreams {
    private UpstreamStreams() {
    }

    static final class TaggedIn extends InputStream {
        private final InputStream in;

        TaggedIn(InputStream in) {
            this.in = in;
        }

        @Override
        public int read() throws IOException {
            try {
                return in.read();
            } catch (IOException e) {
                throw tag(e);
            }
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            try {
                return in.read(b, off, len);
            } catch (IOException e) {
                throw tag(e);
            }
        }
    }

    static final class TaggedOut extends OutputStream {
        private final OutputStream out;

        TaggedOut(OutputStream out) {
            this.out = out;
        }

        @Override
        public void write(int b) throws IOException {
            try {
                out.write(b);
            } catch (IOException e) {
                throw tag(e);
            }
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            try {
                out.write(b, off, len);
            } catch (IOException e) {
                throw tag(e);
            }
        }

        @Override
        public void flush() throws IOException {
            try {
                out.flush();
            } catch (IOException e) {
                throw tag(e);
            }
        }
    }

    private static UpstreamIOException tag(IOException e) {
        return e instanceof UpstreamIOException u ? u : new UpstreamIOException(e);
    }
}
