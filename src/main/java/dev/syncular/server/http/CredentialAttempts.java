package dev.syncular.server.http;

import dev.syncular.server.errors.ErrorCode;
import dev.syncular.server.observability.AdminConfig;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.net.SocketAddress;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.ws.rs.core.Response;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Wrong admin credentials per source address, on this pod (issue 45): the admin API's bearer token and the
 * console's sign-in. A source may fail {@code syncular.admin.free-attempts} times (5); each failure after that blocks it for twice
 * as long as the one before, from 1 s up to {@value #MAX_BLOCK_MS} ms, and while it is blocked every attempt from
 * it — right or wrong — is answered 429 {@code sync.rate_limited} with {@code Retry-After} ({@code details.reason}
 * {@code credential_attempts}) before the credential is compared. A success clears the source; a source quiet for
 * {@value #FORGET_MS} ms is forgotten, and past {@value #MAX_SOURCES} remembered sources those not blocked now are
 * dropped. Guessing a 32-byte token at a few attempts a minute is hopeless; an operator who mistyped waits seconds.
 * The source is the connection's remote address ({@code quarkus.http.proxy.*} decides whether a load balancer's
 * forwarded address counts).
 */
@ApplicationScoped
public class CredentialAttempts {
    static final long FIRST_BLOCK_MS = 1000;
    static final long MAX_BLOCK_MS = 60_000;
    static final long FORGET_MS = 15 * 60_000;
    static final int MAX_SOURCES = 10_000;

    private record Failures(int count, long lastMs, long blockedUntilMs) {}

    private final Map<String, Failures> bySource = new ConcurrentHashMap<>();
    /** Failures a source may have before it waits; {@code 0}: never throttled. */
    private final int freeFailures;

    @Inject
    public CredentialAttempts(AdminConfig config) {
        this.freeFailures = config.freeAttempts();
    }

    /** The source of {@code request}: its remote address, {@code -} when unknown. */
    public static String source(HttpServerRequest request) {
        SocketAddress remote = request == null ? null : request.remoteAddress();
        return remote == null || remote.hostAddress() == null ? "-" : remote.hostAddress();
    }

    /** How long {@code source} must still wait before its next attempt is compared; {@code 0}: it may try now. */
    public long blockedForMs(String source, long nowMs) {
        if (freeFailures == 0) {
            return 0;
        }
        Failures f = bySource.get(source);
        return f == null ? 0 : Math.max(0, f.blockedUntilMs() - nowMs);
    }

    /** A wrong credential from {@code source}. */
    public void failed(String source, long nowMs) {
        if (freeFailures == 0) {
            return;
        }
        bySource.compute(source, (k, f) -> {
            int count = f == null || nowMs - f.lastMs() > FORGET_MS ? 1 : f.count() + 1;
            long block = count <= freeFailures
                    ? 0
                    : Math.min(MAX_BLOCK_MS, FIRST_BLOCK_MS << Math.min(20, count - freeFailures - 1));
            return new Failures(count, nowMs, nowMs + block);
        });
        if (bySource.size() > MAX_SOURCES) {
            forgetOldest(nowMs);
        }
    }

    /** The right credential from {@code source}: its failures are forgotten. */
    public void succeeded(String source) {
        bySource.remove(source);
    }

    /** 429 {@code sync.rate_limited} for a blocked source, with {@code Retry-After} in whole seconds. */
    public static Response refusal(long waitMs) {
        long seconds = Math.max(1, (waitMs + 999) / 1000);
        Map<String, Object> details = new LinkedHashMap<>();
        details.put("reason", "credential_attempts");
        details.put("retryAfterMs", waitMs);
        return Response.fromResponse(AdminAccess.error(
                        429, ErrorCode.RATE_LIMITED, "too many wrong credentials; retry later", details))
                .header("Retry-After", Long.toString(seconds))
                .build();
    }

    private void forgetOldest(long nowMs) {
        Iterator<Map.Entry<String, Failures>> it = bySource.entrySet().iterator();
        while (it.hasNext() && bySource.size() > MAX_SOURCES) {
            Map.Entry<String, Failures> e = it.next();
            if (e.getValue().blockedUntilMs() <= nowMs) {
                it.remove();
            }
        }
    }
}
