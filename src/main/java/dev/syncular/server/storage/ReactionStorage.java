package dev.syncular.server.storage;

/** Where planned §6.9 reactions are kept until delivered: the reaction store on this storage. */
public interface ReactionStorage {

    ReactionStore reactions();
}
