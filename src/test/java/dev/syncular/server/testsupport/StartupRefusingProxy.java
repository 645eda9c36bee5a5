package dev.syncular.server.testsupport;

import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A TCP proxy in front of the test PostgreSQL that refuses chosen connections at their start: the first {@code n}
 * whose startup message names an {@code application_name} beginning with a prefix are closed before they reach the
 * server (the client sees its connect fail, as during a failover, a restart or a full connection limit); every other
 * connection is passed through byte for byte. The fault is real — a closed TCP connection — and only at the network
 * seam.
 */
public final class StartupRefusingProxy implements AutoCloseable {
    private static final int SSL_REQUEST = 80877103;
    private static final int GSSENC_REQUEST = 80877104;

    private final ServerSocket listener;
    private final String upstreamHost;
    private final int upstreamPort;
    private final String refusedPrefix;
    private final AtomicInteger toRefuse;
    private final AtomicInteger refused = new AtomicInteger();
    private final AtomicInteger passed = new AtomicInteger();

    private StartupRefusingProxy(URI upstream, String refusedPrefix, int refuse) throws IOException {
        this.listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        this.upstreamHost = upstream.getHost();
        this.upstreamPort = upstream.getPort();
        this.refusedPrefix = refusedPrefix;
        this.toRefuse = new AtomicInteger(refuse);
        Thread accept = new Thread(this::acceptLoop, "startup-refusing-proxy");
        accept.setDaemon(true);
        accept.start();
    }

    /** A proxy to the test database refusing the first {@code refuse} connections whose name begins {@code prefix}. */
    public static StartupRefusingProxy refusing(String prefix, int refuse) throws IOException {
        return new StartupRefusingProxy(
                URI.create(TestPostgres.url().replaceFirst("^postgresql:", "tcp:")), prefix, refuse);
    }

    /** The test database's reactive URL through this proxy. */
    public String url() {
        URI db = URI.create(TestPostgres.url().replaceFirst("^postgresql:", "tcp:"));
        return "postgresql://127.0.0.1:" + listener.getLocalPort() + db.getPath();
    }

    /** Connections closed at their start so far. */
    public int refused() {
        return refused.get();
    }

    /** Connections passed through so far. */
    public int passed() {
        return passed.get();
    }

    private void acceptLoop() {
        while (!listener.isClosed()) {
            try {
                Socket client = listener.accept();
                Thread t = new Thread(() -> serve(client), "startup-refusing-proxy-conn");
                t.setDaemon(true);
                t.start();
            } catch (IOException e) {
                return; // closed
            }
        }
    }

    private void serve(Socket client) {
        try (client) {
            DataInputStream in = new DataInputStream(client.getInputStream());
            OutputStream toClient = client.getOutputStream();
            byte[] startup = message(in);
            int code = code(startup);
            while (code == SSL_REQUEST || code == GSSENC_REQUEST) {
                toClient.write('N'); // no encryption through the proxy: the client goes on in plain text
                toClient.flush();
                startup = message(in);
                code = code(startup);
            }
            String name = applicationName(startup);
            if (name.startsWith(refusedPrefix) && toRefuse.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
                refused.incrementAndGet();
                return; // closed before the server saw it
            }
            passed.incrementAndGet();
            try (Socket server = new Socket(upstreamHost, upstreamPort)) {
                OutputStream toServer = server.getOutputStream();
                toServer.write(startup);
                toServer.flush();
                Thread back = new Thread(() -> pipe(server, client), "startup-refusing-proxy-back");
                back.setDaemon(true);
                back.start();
                pipe(client, server);
                back.join();
            }
        } catch (IOException | InterruptedException e) {
            // the connection ended
        }
    }

    private static void pipe(Socket from, Socket to) {
        try {
            InputStream in = from.getInputStream();
            OutputStream out = to.getOutputStream();
            byte[] buf = new byte[16 * 1024];
            int n;
            while ((n = in.read(buf)) >= 0) {
                out.write(buf, 0, n);
                out.flush();
            }
        } catch (IOException e) {
            // one side closed
        } finally {
            try {
                to.shutdownOutput();
            } catch (IOException e) {
                // already closed
            }
        }
    }

    /** One length-prefixed startup-phase message (its length word included). */
    private static byte[] message(DataInputStream in) throws IOException {
        int length = in.readInt();
        if (length < 8 || length > 64 * 1024) {
            throw new IOException("not a PostgreSQL startup message: length " + length);
        }
        byte[] rest = new byte[length - 4];
        in.readFully(rest);
        ByteArrayOutputStream all = new ByteArrayOutputStream(length);
        all.write(length >>> 24);
        all.write(length >>> 16);
        all.write(length >>> 8);
        all.write(length);
        all.write(rest, 0, rest.length);
        return all.toByteArray();
    }

    private static int code(byte[] message) {
        return ((message[4] & 0xff) << 24)
                | ((message[5] & 0xff) << 16)
                | ((message[6] & 0xff) << 8)
                | (message[7] & 0xff);
    }

    /** The {@code application_name} parameter of a StartupMessage, or "" (NUL-terminated key and value pairs). */
    private static String applicationName(byte[] startup) {
        int i = 8;
        while (i < startup.length && startup[i] != 0) {
            int keyEnd = i;
            while (startup[keyEnd] != 0) {
                keyEnd++;
            }
            int valueEnd = keyEnd + 1;
            while (valueEnd < startup.length && startup[valueEnd] != 0) {
                valueEnd++;
            }
            String key = new String(startup, i, keyEnd - i, StandardCharsets.UTF_8);
            if (key.equals("application_name")) {
                return new String(startup, keyEnd + 1, valueEnd - keyEnd - 1, StandardCharsets.UTF_8);
            }
            i = valueEnd + 1;
        }
        return "";
    }

    @Override
    public void close() throws IOException {
        listener.close();
    }
}
