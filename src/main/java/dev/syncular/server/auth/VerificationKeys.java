package dev.syncular.server.auth;

import java.io.ByteArrayInputStream;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PublicKey;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.spec.X509EncodedKeySpec;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import org.jose4j.json.JsonUtil;
import org.jose4j.jwk.JsonWebKey;
import org.jose4j.jwk.PublicJsonWebKey;
import org.jose4j.lang.JoseException;

/**
 * An immutable set of public verification keys: the answer of a JWKS URL, a JWK/JWKS document, or one PEM key.
 * Only public signature keys are kept (RSA, EC, OKP; {@code use} absent or {@code sig}; {@code key_ops} absent or
 * naming {@code verify}); symmetric ({@code oct}) and private-only entries are dropped, so a public key can never
 * serve as an HMAC secret.
 */
final class VerificationKeys {
    /** One key: its {@code kid} and {@code alg} (either may be {@code null}) and the key. */
    record Key(String kid, String alg, PublicKey key) {}

    private final List<Key> keys;

    VerificationKeys(List<Key> keys) {
        this.keys = List.copyOf(keys);
    }

    /** A single key without {@code kid} (a PEM public key): it verifies tokens whatever their {@code kid}. */
    static VerificationKeys single(PublicKey key) {
        return new VerificationKeys(List.of(new Key(null, null, key)));
    }

    /**
     * The keys of a JWKS ({@code {"keys":[...]}}) or, when {@code allowSingle}, of one JWK object; entries that are
     * not usable public signature keys are skipped.
     *
     * @throws IllegalArgumentException when the text is not such a document or holds no usable key
     */
    static VerificationKeys parse(String json, boolean allowSingle) {
        Map<String, Object> document;
        try {
            document = JsonUtil.parseJson(json);
        } catch (JoseException | RuntimeException e) {
            throw new IllegalArgumentException("not a JSON object");
        }
        List<?> entries;
        if (document != null && document.get("keys") instanceof List<?> list) {
            entries = list;
        } else if (allowSingle && document != null && document.containsKey("kty")) {
            entries = List.of(document);
        } else {
            throw new IllegalArgumentException("no keys member");
        }
        List<Key> keys = new ArrayList<>();
        for (Object entry : entries) {
            Key key = entry instanceof Map<?, ?> map ? key(map) : null;
            if (key != null) {
                keys.add(key);
            }
        }
        if (keys.isEmpty()) {
            throw new IllegalArgumentException("no usable public signature key");
        }
        return new VerificationKeys(keys);
    }

    /**
     * A configured static key: a JWK or JWKS document (text starting with <code>{</code>), else a PEM public key
     * or certificate (or its base64 DER without the armor): RSA, EC or Edwards-curve.
     *
     * @throws IllegalArgumentException when the text is none of these
     */
    static VerificationKeys fromText(String text) {
        String t = text.trim();
        if (t.startsWith("{")) {
            return parse(t, true);
        }
        boolean certificate = t.contains("-----BEGIN CERTIFICATE-----");
        byte[] der;
        try {
            der = Base64.getMimeDecoder().decode(t.replaceAll("-----[A-Z ]+-----", ""));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("not base64");
        }
        if (certificate) {
            try {
                return single(CertificateFactory.getInstance("X.509")
                        .generateCertificate(new ByteArrayInputStream(der))
                        .getPublicKey());
            } catch (CertificateException e) {
                throw new IllegalArgumentException("not an X.509 certificate");
            }
        }
        for (String type : List.of("RSA", "EC", "EdDSA")) {
            try {
                return single(KeyFactory.getInstance(type).generatePublic(new X509EncodedKeySpec(der)));
            } catch (GeneralSecurityException e) {
                // try the next key type
            }
        }
        throw new IllegalArgumentException("not a public key");
    }

    @SuppressWarnings("unchecked")
    private static Key key(Map<?, ?> params) {
        JsonWebKey jwk;
        try {
            jwk = JsonWebKey.Factory.newJwk((Map<String, Object>) params);
        } catch (JoseException | RuntimeException e) {
            return null;
        }
        if (!(jwk instanceof PublicJsonWebKey pub) || pub.getPublicKey() == null) {
            return null;
        }
        if (jwk.getUse() != null && !"sig".equals(jwk.getUse())) {
            return null;
        }
        if (jwk.getKeyOps() != null && !jwk.getKeyOps().contains("verify")) {
            return null;
        }
        return new Key(jwk.getKeyId(), jwk.getAlgorithm(), pub.getPublicKey());
    }

    int size() {
        return keys.size();
    }

    /** Whether a key carries exactly this {@code kid}; for a token without {@code kid}, whether any key exists. */
    boolean knows(String kid) {
        if (kid == null) {
            return !keys.isEmpty();
        }
        for (Key k : keys) {
            if (kid.equals(k.kid())) {
                return true;
            }
        }
        return false;
    }

    /**
     * The keys that may have signed a token with this {@code kid} and {@code alg}: those with that {@code kid}
     * (else, when none has it, those without a {@code kid}; a token without {@code kid}: all), whose type fits
     * the algorithm and whose own {@code alg}, when set, is the token's.
     */
    List<PublicKey> candidates(String kid, String alg) {
        boolean byKid = kid != null && knows(kid);
        List<PublicKey> out = new ArrayList<>();
        for (Key k : keys) {
            boolean kidFits = kid == null || (byKid ? kid.equals(k.kid()) : k.kid() == null);
            if (kidFits && (k.alg() == null || k.alg().equals(alg)) && typeFits(k.key(), alg)) {
                out.add(k.key());
            }
        }
        return out;
    }

    /** RS and PS need an RSA key, ES an EC key, EdDSA an Edwards-curve key (JCA algorithm names). */
    private static boolean typeFits(PublicKey key, String alg) {
        String type = key.getAlgorithm();
        if (alg.startsWith("RS") || alg.startsWith("PS")) {
            return "RSA".equals(type);
        }
        if (alg.startsWith("ES")) {
            return "EC".equals(type);
        }
        return "EdDSA".equals(alg) && ("EdDSA".equals(type) || "Ed25519".equals(type) || "Ed448".equals(type));
    }
}
