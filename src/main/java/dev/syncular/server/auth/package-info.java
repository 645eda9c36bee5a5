/**
 * Host authentication and scope resolution (§1.1, §3.2): the {@link dev.syncular.server.auth.Authenticator}
 * seam run on every protocol request, and the development pair — a header authenticator and a
 * configured scope resolver, both replaceable CDI default beans — with the start-up check that keeps them
 * out of production unless explicitly enabled.
 *
 * <p>Part of the Quarkus edge: it may depend on {@code schema}, {@code sync} and {@code config}; nothing
 * below depends on it.
 */
package dev.syncular.server.auth;
