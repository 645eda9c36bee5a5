package dev.syncular.server.testsupport;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.NoSuchAlgorithmException;
import java.security.PrivateKey;
import java.security.Signature;
import java.security.interfaces.RSAPublicKey;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The tests' identity provider: JWKS endpoints served by a JDK {@link HttpServer} on free loopback ports, each
 * counting the requests it gets and answering as a test tells it (its keys, a status, a delay, a raw body).
 *
 * <p>Quarkus instantiates test profiles in more than one class loader, and the test methods run in yet another,
 * so an endpoint's whole state lives in JDK-typed objects kept in {@link System#getProperties()} under its name:
 * every class loader's {@link Endpoint} view sees one server, one counter and one key set. The
 * {@link #DEFAULT} endpoint (key {@link #KID}) also keeps its port and private key in the system properties
 * {@link #PORT} and {@link #PRIVATE}, for the packaged-server tests.
 */
public final class TestJwks {
    public static final String PORT = "jwt-auth-test.jwks-port";
    public static final String PRIVATE = "jwt-auth-test.private-key";
    public static final String KID = "test-key-1";
    public static final String DEFAULT = "default";
    private static final String STATE = "syncular.test.jwks.";

    private TestJwks() {}

    /** Starts the default endpoint (serving {@link #KID}) once per JVM. */
    public static synchronized void ensureStarted() {
        Endpoint e = endpoint(DEFAULT);
        if (System.getProperty(PORT) == null) {
            if (!e.hasKey(KID)) {
                e.addKey(KID);
            }
            System.setProperty(
                    PRIVATE,
                    Base64.getEncoder().encodeToString(e.privateKey(KID).getEncoded()));
            System.setProperty(PORT, Integer.toString(e.port()));
        }
    }

    /** {@code http://127.0.0.1:<port>/jwks.json} of the default endpoint; starts it on first use. */
    public static String jwksUrl() {
        ensureStarted();
        return endpoint(DEFAULT).url();
    }

    /** The private half of {@link #KID} on the default endpoint. */
    public static PrivateKey privateKey() {
        ensureStarted();
        return endpoint(DEFAULT).privateKey(KID);
    }

    public static KeyPair rsa() {
        try {
            KeyPairGenerator g = KeyPairGenerator.getInstance("RSA");
            g.initialize(2048);
            return g.generateKeyPair();
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The endpoint {@code name}, started (with no keys) on first use; lives until {@link Endpoint#stop}. */
    public static Endpoint endpoint(String name) {
        synchronized (System.getProperties()) {
            @SuppressWarnings("unchecked")
            Map<String, Object> state =
                    (Map<String, Object>) System.getProperties().get(STATE + name);
            if (state == null) {
                state = start();
                System.getProperties().put(STATE + name, state);
            }
            return new Endpoint(name, state);
        }
    }

    private static Map<String, Object> start() {
        Map<String, Object> state = new ConcurrentHashMap<>();
        state.put("keys", new ConcurrentSkipListMap<String, KeyPair>());
        state.put("fetches", new AtomicInteger());
        state.put("pending", new AtomicInteger());
        state.put("status", new AtomicInteger(200));
        state.put("chunked", new AtomicInteger());
        state.put("delayMs", new AtomicLong());
        state.put("body", new AtomicReference<String>());
        ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> daemon(r, "test-jwks-delay"));
        ExecutorService workers = Executors.newCachedThreadPool(r -> daemon(r, "test-jwks"));
        try {
            HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
            Endpoint view = new Endpoint("?", state);
            server.createContext("/jwks.json", exchange -> view.handle(exchange, timer));
            server.setExecutor(workers);
            server.start();
            state.put("server", server);
            state.put("timer", timer);
            state.put("workers", workers);
            state.put("port", server.getAddress().getPort());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return state;
    }

    private static Thread daemon(Runnable r, String name) {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        return t;
    }

    /** A JWKS document holding the public half of {@code pair} as RSA key {@code kid} (RS256). */
    public static String jwksDocument(KeyPair pair, String kid) {
        return "{\"keys\":[" + jwk(pair, kid) + "]}";
    }

    private static String jwk(KeyPair pair, String kid) {
        RSAPublicKey pub = (RSAPublicKey) pair.getPublic();
        return "{\"kty\":\"RSA\",\"use\":\"sig\",\"alg\":\"RS256\",\"kid\":\"" + kid + "\",\"n\":\""
                + b64u(pub.getModulus()) + "\",\"e\":\"" + b64u(pub.getPublicExponent()) + "\"}";
    }

    /** A compact JWS of exactly these header and payload JSON texts, signed RS256 with {@code key}. */
    public static String rs256(String header, String payload, PrivateKey key) {
        String input =
                b64u(header.getBytes(StandardCharsets.UTF_8)) + "." + b64u(payload.getBytes(StandardCharsets.UTF_8));
        try {
            Signature s = Signature.getInstance("SHA256withRSA");
            s.initSign(key);
            s.update(input.getBytes(StandardCharsets.US_ASCII));
            return input + "." + b64u(s.sign());
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Unpadded base64url (RFC 7515 §2). */
    public static String b64u(byte[] bytes) {
        return Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
    }

    private static String b64u(BigInteger v) {
        byte[] bytes = v.toByteArray();
        if (bytes.length > 1 && bytes[0] == 0) {
            bytes = Arrays.copyOfRange(bytes, 1, bytes.length);
        }
        return b64u(bytes);
    }

    /** A view of one endpoint's shared state; cheap, make one wherever needed. */
    public static final class Endpoint {
        private final String name;
        private final Map<String, Object> state;

        private Endpoint(String name, Map<String, Object> state) {
            this.name = name;
            this.state = state;
        }

        public int port() {
            return (Integer) state.get("port");
        }

        public String url() {
            return "http://127.0.0.1:" + port() + "/jwks.json";
        }

        /** Requests received so far. */
        public int fetches() {
            return counter("fetches").get();
        }

        /** Requests received and not yet answered (held by {@link #delay}). */
        public int pending() {
            return counter("pending").get();
        }

        /** Waits (on the endpoint's signal) until it has received at least {@code n} requests. */
        public void awaitFetches(int n, Duration deadline) {
            AtomicInteger fetches = counter("fetches");
            long end = System.nanoTime() + deadline.toNanos();
            synchronized (fetches) {
                while (fetches.get() < n) {
                    long left = TimeUnit.NANOSECONDS.toMillis(end - System.nanoTime());
                    if (left <= 0) {
                        throw new AssertionError("JWKS " + name + " got " + fetches.get() + " requests, expected " + n);
                    }
                    try {
                        fetches.wait(left);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        throw new AssertionError(e);
                    }
                }
            }
        }

        /** Generates an RSA key pair published under {@code kid} from the next request on. */
        public Endpoint addKey(String kid) {
            return addKey(kid, rsa());
        }

        /** Publishes {@code pair}'s public half under {@code kid} from the next request on. */
        public Endpoint addKey(String kid, KeyPair pair) {
            keys().put(kid, pair);
            return this;
        }

        public Endpoint removeKey(String kid) {
            keys().remove(kid);
            return this;
        }

        public boolean hasKey(String kid) {
            return keys().containsKey(kid);
        }

        public PrivateKey privateKey(String kid) {
            KeyPair pair = keys().get(kid);
            if (pair == null) {
                throw new IllegalArgumentException("no key " + kid);
            }
            return pair.getPrivate();
        }

        /** Answers every request with this status (200: the JWKS, anything else: an empty JSON body). */
        public Endpoint status(int status) {
            ((AtomicInteger) state.get("status")).set(status);
            return this;
        }

        /** Holds every answer this long (a slow or, longer than the client's timeout, a hanging provider). */
        public Endpoint delay(Duration delay) {
            ((AtomicLong) state.get("delayMs")).set(delay.toMillis());
            return this;
        }

        /** Answers 200 with this body instead of the JWKS ({@code null}: the JWKS again). */
        public Endpoint body(String body) {
            @SuppressWarnings("unchecked")
            AtomicReference<String> ref = (AtomicReference<String>) state.get("body");
            ref.set(body);
            return this;
        }

        /** Sends answers chunked, without {@code Content-Length}. */
        public Endpoint chunked(boolean chunked) {
            counter("chunked").set(chunked ? 1 : 0);
            return this;
        }

        /** Back to prompt 200 answers with the JWKS. */
        public Endpoint healthy() {
            return status(200).delay(Duration.ZERO).body(null).chunked(false);
        }

        /** The JWKS document of the current keys. */
        public String jwks() {
            List<String> out = new ArrayList<>();
            keys().forEach((kid, pair) -> out.add(jwk(pair, kid)));
            return "{\"keys\":[" + String.join(",", out) + "]}";
        }

        /** Stops the server and forgets the endpoint. */
        public void stop() {
            synchronized (System.getProperties()) {
                System.getProperties().remove(STATE + name);
            }
            ((HttpServer) state.get("server")).stop(0);
            ((ScheduledExecutorService) state.get("timer")).shutdownNow();
            ((ExecutorService) state.get("workers")).shutdownNow();
        }

        private void handle(HttpExchange exchange, ScheduledExecutorService timer) {
            AtomicInteger fetches = counter("fetches");
            synchronized (fetches) {
                fetches.incrementAndGet();
                fetches.notifyAll();
            }
            int status = counter("status").get();
            @SuppressWarnings("unchecked")
            String raw = ((AtomicReference<String>) state.get("body")).get();
            byte[] body = (status != 200 ? "{}" : raw != null ? raw : jwks()).getBytes(StandardCharsets.UTF_8);
            long delay = ((AtomicLong) state.get("delayMs")).get();
            boolean chunked = counter("chunked").get() == 1;
            if (delay <= 0) {
                answer(exchange, status, body, chunked);
                return;
            }
            counter("pending").incrementAndGet();
            timer.schedule(
                    () -> {
                        counter("pending").decrementAndGet();
                        answer(exchange, status, body, chunked);
                    },
                    delay,
                    TimeUnit.MILLISECONDS);
        }

        private static void answer(HttpExchange exchange, int status, byte[] body, boolean chunked) {
            try {
                exchange.getResponseHeaders().add("Content-Type", "application/json");
                exchange.sendResponseHeaders(status, chunked ? 0 : body.length);
                try (OutputStream out = exchange.getResponseBody()) {
                    out.write(body);
                }
            } catch (IOException e) {
                // the client gave up (a timeout under test): nothing to answer
            } finally {
                exchange.close();
            }
        }

        @SuppressWarnings("unchecked")
        private ConcurrentSkipListMap<String, KeyPair> keys() {
            return (ConcurrentSkipListMap<String, KeyPair>) state.get("keys");
        }

        private AtomicInteger counter(String key) {
            return (AtomicInteger) state.get(key);
        }
    }
}
