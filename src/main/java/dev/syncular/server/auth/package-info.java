/**
 * Host authentication and scope resolution (§1.1, §3.2): the {@link dev.syncular.server.auth.Authenticator}
 * seam run on every protocol request; JWT bearer authentication configured by {@code syncular.auth.jwt.*}
 * ({@code JwtAuthenticator} + {@code JwtScopeResolver}), with its syntactic pre-check ({@code CompactJws}), its key
 * sources (static keys, or the per-pod {@code JwksCache} of a JWKS URL, fetched with bounded {@code JwksFetch}es)
 * and the static refusal reasons of its 401s ({@code TokenRejection}, §10.1 {@code details}); the claim hygiene
 * rule shared by both authenticators ({@code ClaimText}); the development pair — a header authenticator and a
 * configured scope resolver — used when JWT is not configured, with the start-up check that keeps it out of
 * production unless explicitly enabled. The composition root ({@code boot.AuthProducer}) picks the pair at run time; both are replaceable
 * CDI default beans (docs/AUTHENTICATION.md).
 *
 * <p>Part of the Quarkus edge: it may depend on {@code schema}, {@code sync} and {@code config}; nothing
 * below depends on it.
 *
 * <p>Configuration (issue 46: each feature maps its own {@code syncular.*} group): {@code DevAuthConfig} ({@code syncular.dev-auth.*}) and {@code JwtConfig} ({@code syncular.auth.jwt.*}).
 */
package dev.syncular.server.auth;
