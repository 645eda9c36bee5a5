package dev.syncular.server.storage;

/**
 * The outcome of activating a checkpoint: {@code ACTIVATED}; {@code STALE} when a source table changed
 * above the watermark (the backfill must catch up first); {@code UNVERIFIABLE} when the history that
 * would prove the sources clean was pruned past the watermark.
 */
public enum ActivationResult {
    ACTIVATED,
    STALE,
    UNVERIFIABLE
}
