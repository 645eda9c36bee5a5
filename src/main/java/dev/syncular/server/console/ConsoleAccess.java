package dev.syncular.server.console;

import dev.syncular.server.auth.Authenticator;
import dev.syncular.server.auth.JwtAuthenticator;
import dev.syncular.server.config.SyncularConfig;
import dev.syncular.server.errors.ErrorCode;
import dev.syncular.server.errors.SyncError;
import dev.syncular.server.http.AdminAccess;
import dev.syncular.server.http.CredentialAttempts;
import dev.syncular.server.http.RequestBodies;
import dev.syncular.server.http.RequestBody;
import dev.syncular.server.observability.AdminConfig;
import dev.syncular.server.round.ErrorBodies;
import dev.syncular.server.round.HttpError;
import dev.syncular.server.storage.ConsoleSession;
import dev.syncular.server.storage.ConsoleSessionStorage;
import dev.syncular.server.storage.StorageException;
import io.smallrye.mutiny.Uni;
import io.vertx.core.http.HttpServerRequest;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.NewCookie;
import jakarta.ws.rs.core.Response;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.Map;
import java.util.function.BiFunction;
import java.util.function.Function;
import org.jboss.logging.Logger;

/**
 * The door of the operator console ({@code <mount>/console}): it exists only when the admin API does
 * ({@code syncular.admin.token} set; otherwise every console path is 404 {@code sync.not_found}, §10.1 JSON).
 *
 * <p>Sign-in exchanges the admin token (compared in constant time) for a session: a random 256-bit id held by the
 * browser in an {@code HttpOnly}, {@code SameSite=Strict} cookie on {@code <mount>/console} that expires after
 * {@code syncular.admin.console.session-ttl}, and stored by every pod's shared storage as its SHA-256 only
 * ({@link ConsoleSessionStorage}) with the session's CSRF token. A page without a session redirects to the sign-in
 * form; an action (every {@code POST}) without one is 401 {@code sync.auth_required}, and one whose CSRF token (form
 * field {@value #CSRF_FIELD} or header {@value #CSRF_HEADER}) is missing or not the session's is 403
 * {@code sync.forbidden} ({@code reason: csrf_token_invalid}) — before it does anything. A form body is read by the
 * console itself, after the session check and under {@value #MAX_FORM_BYTES} bytes.
 *
 * <p>Every console request leaves one line on the admin audit category ({@link AdminAccess#AUDIT_CATEGORY}): the
 * route template, who ({@code admin-token}, {@code -} without a session), the status and the §10 code of a
 * refusal; never the token, the session id or the CSRF token.
 */
@ApplicationScoped
public class ConsoleAccess {
    public static final String COOKIE = "syncular_console";
    public static final String CSRF_FIELD = "csrf";
    public static final String CSRF_HEADER = "X-CSRF-Token";
    /** Who signed in with the admin token. */
    public static final String ADMIN_TOKEN_PRINCIPAL = "admin-token";
    /** Cap of a console form body (a few identifiers), read after the session check. */
    public static final int MAX_FORM_BYTES = 16 * 1024;

    private static final Logger AUDIT = Logger.getLogger(AdminAccess.AUDIT_CATEGORY);
    private static final Logger LOG = Logger.getLogger(ConsoleAccess.class);
    private static final SecureRandom RANDOM = new SecureRandom();

    private final String token;
    private final long ttlMs;
    private final boolean secureCookie;
    private final String base;
    private final ConsoleSessionStorage sessions;
    private final RequestBodies bodies;
    private final ConsoleRole role;
    private final CredentialAttempts attempts;
    /** The admin token's SHA-256, the key every stored session id is bound to ({@link #hash(String, String)}). */
    private final byte[] credential;
    /**
     * The key of sessions a JWT opened: {@link #credential} with the role claim and role that granted them, so a pod
     * configured with another console role (a revoked role) knows none of them ({@link #hash(String)}).
     */
    private final byte[] roleCredential;

    @Inject
    public ConsoleAccess(
            SyncularConfig config,
            AdminConfig admin,
            ConsoleConfig console,
            ConsoleSessionStorage sessions,
            RequestBodies bodies,
            Authenticator authenticator,
            CredentialAttempts attempts) {
        this.attempts = attempts;
        this.token = admin.token().orElse("");
        this.credential = sha256(token.getBytes(StandardCharsets.UTF_8));
        this.ttlMs = console.sessionTtl().toMillis();
        this.secureCookie = console.secureCookie();
        this.base = config.mountPrefix() + "/console";
        this.sessions = sessions;
        this.bodies = bodies;
        this.role = authenticator instanceof JwtAuthenticator jwt
                        && console.role().isPresent()
                ? new ConsoleRole(jwt, console.roleClaim(), console.role().get())
                : ConsoleRole.OFF;
        this.roleCredential = keyed(
                credential,
                "role\u0000" + console.roleClaim() + '\u0000' + console.role().orElse(""));
    }

    /** Whether a JWT with the admin role signs in too (JWT authentication and {@code role} configured). */
    public boolean jwtSignIn() {
        return role != ConsoleRole.OFF;
    }

    /** Whether the console exists: the admin API is configured. */
    public boolean enabled() {
        return !token.isEmpty();
    }

    /** The console's absolute path prefix: {@code <mount>/console}. */
    public String base() {
        return base;
    }

    /**
     * A page: 404 while the console is off, a redirect to the sign-in form without a live session, else
     * {@code render}'s answer for the session.
     */
    public Uni<Response> page(String route, String cookie, Function<ConsoleSession, Uni<Response>> render) {
        if (!enabled()) {
            return audited(route, "-", Uni.createFrom().item(disabled()));
        }
        return session(cookie)
                .flatMap(s -> s == null
                        ? audited(route, "-", Uni.createFrom().item(signInRedirect()))
                        : audited(route, s.principal(), guard(() -> render.apply(s))));
    }

    /**
     * An action ({@code POST}): 404 while the console is off, 401 without a live session, then the form body
     * (under {@link #MAX_FORM_BYTES}), 403 unless it (or the {@value #CSRF_HEADER} header) carries the session's
     * CSRF token, else {@code act}'s answer.
     */
    public Uni<Response> action(
            String route,
            String cookie,
            HttpServerRequest request,
            BiFunction<ConsoleSession, ConsoleForm, Uni<Response>> act) {
        return action(route, cookie, request, MAX_FORM_BYTES, act);
    }

    /** {@link #action} with a form body of at most {@code maxFormBytes} (a pasted document). */
    public Uni<Response> action(
            String route,
            String cookie,
            HttpServerRequest request,
            int maxFormBytes,
            BiFunction<ConsoleSession, ConsoleForm, Uni<Response>> act) {
        if (!enabled()) {
            return audited(route, "-", Uni.createFrom().item(disabled()));
        }
        return session(cookie).flatMap(s -> {
            if (s == null) {
                return audited(
                        route,
                        "-",
                        Uni.createFrom()
                                .item(error(401, ErrorCode.AUTH_REQUIRED, "console session required", Map.of())));
            }
            return audited(
                    route,
                    s.principal(),
                    guard(() -> form(request, maxFormBytes).flatMap(form -> {
                        String presented = form.get(CSRF_FIELD);
                        if (presented.isEmpty() && request.getHeader(CSRF_HEADER) != null) {
                            presented = request.getHeader(CSRF_HEADER);
                        }
                        if (!constantTimeEquals(s.csrfToken(), presented)) {
                            return Uni.createFrom().item(csrfRefused());
                        }
                        return act.apply(s, form);
                    })));
        });
    }

    /**
     * The sign-in form's POST: no session yet; the form carries the token. A source past its wrong attempts is
     * answered 429 with {@code Retry-After} before its form is read ({@link CredentialAttempts}); {@code act} reports
     * the outcome with {@link #signInFailed} or {@link #signInSucceeded}.
     */
    public Uni<Response> signIn(String route, HttpServerRequest request, Function<ConsoleForm, Uni<Response>> act) {
        if (!enabled()) {
            return audited(route, "-", Uni.createFrom().item(disabled()));
        }
        long blocked = attempts.blockedForMs(CredentialAttempts.source(request), System.currentTimeMillis());
        if (blocked > 0) {
            return audited(route, "-", Uni.createFrom().item(CredentialAttempts.refusal(blocked)));
        }
        return guard(() -> form(request).flatMap(f -> act.apply(f)));
    }

    /** A wrong credential on the sign-in form of {@code request}. */
    public void signInFailed(HttpServerRequest request) {
        attempts.failed(CredentialAttempts.source(request), System.currentTimeMillis());
    }

    /** The right credential on the sign-in form of {@code request}. */
    public void signInSucceeded(HttpServerRequest request) {
        attempts.succeeded(CredentialAttempts.source(request));
    }

    /**
     * Who the presented credential signs in as: {@link #ADMIN_TOKEN_PRINCIPAL} for the admin token, the
     * {@link ConsoleRole} grant of a JWT carrying the admin role, else a {@code null} item.
     */
    public Uni<ConsoleRole.Grant> principalFor(String presented) {
        String p = presented == null ? "" : presented.trim();
        if (enabled() && constantTimeEquals(token, p)) {
            return Uni.createFrom().item(new ConsoleRole.Grant(ADMIN_TOKEN_PRINCIPAL, Long.MAX_VALUE));
        }
        return enabled() ? role.grant(p) : Uni.createFrom().nullItem();
    }

    /**
     * A fresh session for {@code grant}: stored (hashed) and answered with its cookie and a redirect; it expires
     * after the session TTL, or with the JWT that opened it if that is sooner.
     */
    public Uni<Response> open(ConsoleRole.Grant grant, String next) {
        // a JWT's session id starts with '.' (outside the base64url alphabet of random ids): its key is role-bound
        String id = ADMIN_TOKEN_PRINCIPAL.equals(grant.principal()) ? random() : JWT_SESSION + random();
        long now = System.currentTimeMillis();
        long expires = Math.min(now + ttlMs, grant.untilMs());
        ConsoleSession s = new ConsoleSession(hash(id), grant.principal(), random(), now, expires);
        return sessions.createConsoleSession(s, now)
                .map(v -> Response.seeOther(URI.create(next))
                        .cookie(cookie(id, (int) Math.max(1, (expires - now) / 1000)))
                        .build());
    }

    /** Ends the session of {@code cookie} (if any): the row is deleted and the cookie cleared. */
    public Uni<Response> close(String cookie) {
        Uni<Boolean> deleted = cookie == null || cookie.isEmpty()
                ? Uni.createFrom().item(false)
                : sessions.deleteConsoleSession(hash(cookie));
        return deleted.map(d -> Response.seeOther(URI.create(base + "/sign-in"))
                .cookie(cookie("", 0))
                .build());
    }

    /** The audit line of a sign-in attempt, whose principal is known only once the form is read. */
    public void audit(String route, String principal, int status, String code) {
        AUDIT.infof("console %s by=%s status=%d code=%s", route, principal, status, code);
    }

    /** The live session of {@code cookie}, or a {@code null} item. */
    public Uni<ConsoleSession> session(String cookie) {
        if (cookie == null || cookie.isEmpty() || cookie.length() > 128) {
            return Uni.createFrom().nullItem();
        }
        return sessions.readConsoleSession(hash(cookie), System.currentTimeMillis());
    }

    /** 303 to the sign-in form. */
    public Response signInRedirect() {
        return Response.seeOther(URI.create(base + "/sign-in")).build();
    }

    private Uni<ConsoleForm> form(HttpServerRequest request) {
        return form(request, MAX_FORM_BYTES);
    }

    private Uni<ConsoleForm> form(HttpServerRequest request, int maxBytes) {
        RequestBody body;
        try {
            body = bodies.open(request, maxBytes, RequestBody::tooLarge);
        } catch (HttpError e) {
            return Uni.createFrom().failure(e);
        } catch (SyncError busy) {
            return Uni.createFrom().failure(busy);
        }
        return body.read()
                .onTermination()
                .invoke(body::release)
                .map(b -> ConsoleForm.parse(b.toString(StandardCharsets.UTF_8)));
    }

    private NewCookie cookie(String value, int maxAgeSeconds) {
        return new NewCookie.Builder(COOKIE)
                .value(value)
                .path(base)
                .maxAge(maxAgeSeconds)
                .httpOnly(true)
                .secure(secureCookie)
                .sameSite(NewCookie.SameSite.STRICT)
                .build();
    }

    /** Storage failures, bad input and refusals of the body reader as §10.1 JSON; never a stack trace. */
    private static Uni<Response> guard(java.util.function.Supplier<Uni<Response>> call) {
        Uni<Response> u;
        try {
            u = call.get();
        } catch (IllegalArgumentException e) {
            return Uni.createFrom().item(bad("invalid request"));
        }
        return u.onFailure(IllegalArgumentException.class)
                .recoverWithItem(e -> bad("invalid request"))
                .onFailure(HttpError.class)
                .recoverWithItem(e -> error(((HttpError) e).status(), ((HttpError) e).code(), e.getMessage(), Map.of()))
                .onFailure(StorageException.class)
                .recoverWithItem(e -> {
                    LOG.error("console call failed in storage", e);
                    return error(500, ErrorCode.INTERNAL_ERROR, "internal server error", Map.of());
                });
    }

    private Uni<Response> audited(String route, String principal, Uni<Response> answer) {
        return answer.onItemOrFailure().invoke((response, failure) -> {
            int status = failure != null ? 500 : response.getStatus();
            String code = failure != null
                    ? ErrorCode.INTERNAL_ERROR.code
                    : response.getEntity() instanceof com.fasterxml.jackson.databind.JsonNode n && n.hasNonNull("code")
                            ? n.get("code").asText()
                            : "-";
            audit(route, principal, status, code);
        });
    }

    static Response disabled() {
        return error(404, ErrorCode.NOT_FOUND, "console disabled: the admin API is not configured", Map.of());
    }

    static Response csrfRefused() {
        return error(403, ErrorCode.FORBIDDEN, "CSRF token missing or invalid", Map.of("reason", "csrf_token_invalid"));
    }

    static Response bad(String message) {
        return error(400, ErrorCode.INVALID_REQUEST, message, Map.of());
    }

    static Response error(int status, ErrorCode code, String message, Map<String, Object> details) {
        return Response.status(status)
                .type(MediaType.APPLICATION_JSON)
                .entity(ErrorBodies.body(code, message, details))
                .build();
    }

    private static boolean constantTimeEquals(String expected, String presented) {
        return MessageDigest.isEqual(
                expected.getBytes(StandardCharsets.UTF_8), presented.getBytes(StandardCharsets.UTF_8));
    }

    private static String random() {
        byte[] b = new byte[32];
        RANDOM.nextBytes(b);
        return Base64.getUrlEncoder().withoutPadding().encodeToString(b);
    }

    /** The first character of the id of a session a JWT opened. */
    static final String JWT_SESSION = ".";

    /**
     * The stored key of session {@code sessionId} under this pod's admin token ({@link #hash(String, String)}), and
     * for a session a JWT opened also under its console role and role claim (issue 45: a role taken out of the
     * configuration ends every session it granted, on every pod that runs without it).
     */
    byte[] hash(String sessionId) {
        return keyed(sessionId.startsWith(JWT_SESSION) ? roleCredential : credential, sessionId);
    }

    /**
     * The stored key of a session: SHA-256 over the admin token's own SHA-256 and the session id. A session is thus
     * bound to the admin token in force when it was opened (issue 45): a pod configured with a new token derives
     * other keys, so every session opened under the old one is unknown there at once — on every pod that runs with
     * the new token — whoever opened it (the admin token or a JWT with the admin role). Neither the token nor the
     * session id is stored.
     */
    static byte[] hash(String adminToken, String sessionId) {
        return keyed(sha256(adminToken.getBytes(StandardCharsets.UTF_8)), sessionId);
    }

    private static byte[] keyed(byte[] credential, String sessionId) {
        try {
            MessageDigest sha = MessageDigest.getInstance("SHA-256");
            sha.update(credential);
            return sha.digest(sessionId.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    private static byte[] sha256(byte[] bytes) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(bytes);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
