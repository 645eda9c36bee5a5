/**
 * {@code syncular}, the command-line client ({@code target/syncular-cli.jar}, built by {@code ./mvnw package}):
 * talks SSP2 to any running server with any schema and prints what the server sends as §11.1 debug JSON.
 * It pushes rows given as JSON, pulls and bootstraps subscriptions (§4), downloads segments (§5.5) and blobs
 * (§5.9), sends a bearer token or any other header, and keeps its sync progress — client id, log epoch
 * (§2.1), per-subscription cursor and bootstrap resume state (§1.4) — in a JSON state file, so successive
 * invocations continue one sync. It compiles the schema against the built-in {@code yjs-doc} crdt type and the
 * ones {@code --crdt-types} names (§5.10.1: the server's own mergers), never merging itself.
 *
 * <p>{@link dev.syncular.server.cli.SyncularCli} is the entry point and its commands (picocli subcommands, the
 * options of {@link dev.syncular.server.cli.CliOptions} inherited by each); {@link dev.syncular.server.cli.ClientState}
 * with {@link dev.syncular.server.cli.Subscription} and {@link dev.syncular.server.cli.ResponseHandler} is the
 * client core (request building, §1.4 response application), {@link dev.syncular.server.cli.RowValues} turns
 * JSON rows into push operations, {@link dev.syncular.server.cli.ServerConnection} is the HTTP side. The test
 * client ({@code testsupport.SyncTestClient}) is built on the same core.
 *
 * <p>Not part of the server: it depends only on {@code wire} and {@code schema}, the JDK HTTP client, Jackson and
 * picocli (its command line) — no Quarkus, no CDI — and nothing in the
 * server depends on it.
 */
package dev.syncular.server.cli;
