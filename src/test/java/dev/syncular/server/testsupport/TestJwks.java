package dev.syncular.server.testsupport;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.security.KeyFactory;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.NoSuchAlgorithmException;
import java.security.PrivateKey;
import java.security.interfaces.RSAPublicKey;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.Base64;

/**
 * The tests' identity provider: one RSA key, its public half served as a JWKS by a JDK {@link HttpServer} on a
 * free loopback port. The key pair and the port live in system properties: Quarkus instantiates test profiles in
 * more than one class loader, and they must all see one key and one port.
 */
public final class TestJwks {
    public static final String PORT = "jwt-auth-test.jwks-port";
    public static final String PRIVATE = "jwt-auth-test.private-key";
    public static final String KID = "test-key-1";

    private TestJwks() {
    }

    public static synchronized void ensureStarted() {
        if (System.getProperty(PORT) != null) {
            return;
        }
        KeyPair pair = rsa();
        RSAPublicKey pub = (RSAPublicKey) pair.getPublic();
        String jwks = "{\"keys\":[{\"kty\":\"RSA\",\"use\":\"sig\",\"alg\":\"RS256\",\"kid\":\"" + KID + "\",\"n\":\""
                + b64u(pub.getModulus()) + "\",\"e\":\"" + b64u(pub.getPublicExponent()) + "\"}]}";
        byte[] body = jwks.getBytes(StandardCharsets.UTF_8);
        try {
            HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
            server.createContext("/jwks.json", exchange -> {
                exchange.getResponseHeaders().add("Content-Type", "application/json");
                exchange.sendResponseHeaders(200, body.length);
                try (OutputStream out = exchange.getResponseBody()) {
                    out.write(body);
                }
            });
            server.start(); // lives as long as the test JVM (surefire exits it when the run ends)
            System.setProperty(PRIVATE, Base64.getEncoder().encodeToString(pair.getPrivate().getEncoded()));
            System.setProperty(PORT, Integer.toString(server.getAddress().getPort()));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** {@code http://127.0.0.1:<port>/jwks.json}; starts the server on first use. */
    public static String jwksUrl() {
        ensureStarted();
        return "http://127.0.0.1:" + System.getProperty(PORT) + "/jwks.json";
    }

    public static PrivateKey privateKey() {
        try {
            return KeyFactory.getInstance("RSA").generatePrivate(
                    new PKCS8EncodedKeySpec(Base64.getDecoder().decode(System.getProperty(PRIVATE))));
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
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

    private static String b64u(BigInteger v) {
        byte[] bytes = v.toByteArray();
        if (bytes.length > 1 && bytes[0] == 0) {
            bytes = java.util.Arrays.copyOfRange(bytes, 1, bytes.length);
        }
        return Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
    }
}
