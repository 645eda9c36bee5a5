/**
 * The §10 error catalogue: {@link dev.syncular.server.errors.ErrorCode} fixes each code's category,
 * retryability, recommended action and HTTP status (§10.1, §10.2), and
 * {@link dev.syncular.server.errors.SyncError} carries one of them with a static message and its
 * {@code details}.
 *
 * <p>Depends on nothing of this server. It sits below every package that raises a catalogue error
 * ({@code blobs}, {@code sync}, the HTTP edge), so none of them needs another to name an error.
 */
package dev.syncular.server.errors;
