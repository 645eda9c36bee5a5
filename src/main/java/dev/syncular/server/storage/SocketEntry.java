package dev.syncular.server.storage;

/**
 * What a realtime socket's upgrade reads (§8.1), in one snapshot where the storage can: the client's record, whose
 * stored subscriptions become the socket's registrations, and the partition's state.
 *
 * @param client    the client record of {@code (partition, clientId)}, or {@code null} when there is none
 * @param partition the partition state, or {@code null} when the partition is not registered
 */
public record SocketEntry(ClientRecord client, PartitionState partition) {}
