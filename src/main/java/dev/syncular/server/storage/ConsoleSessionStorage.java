package dev.syncular.server.storage;

import io.smallrye.mutiny.Uni;

/**
 * Where operator console sessions are kept: in the storage every pod shares, so a browser signed in through one
 * pod is signed in on all of them, and a sign-out or an expiry holds everywhere at once. Non-blocking; nothing is
 * cached.
 */
public interface ConsoleSessionStorage {

    /** Stores {@code session}, and deletes every session expired at {@code nowMs} on the way. */
    Uni<Void> createConsoleSession(ConsoleSession session, long nowMs);

    /** The session whose id hashes to {@code idHash}, or a {@code null} item when there is none or it expired. */
    Uni<ConsoleSession> readConsoleSession(byte[] idHash, long nowMs);

    /** Deletes the session (sign-out); the item is whether it existed. */
    Uni<Boolean> deleteConsoleSession(byte[] idHash);
}
