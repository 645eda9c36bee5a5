package dev.syncular.server.storage;

/** Where §7.3 auth leases are kept: the lease store on this storage, sealing its records under a key. */
public interface AuthLeaseStorage {

    /** The §7.3 auth lease store on this storage, sealing records under {@code key}. */
    AuthLeaseStore authLeases(byte[] key);
}
