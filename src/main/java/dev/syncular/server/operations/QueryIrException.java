package dev.syncular.server.operations;

/** A queries IR document the server refuses to register, with the one line that says why. */
public final class QueryIrException extends RuntimeException {
    public QueryIrException(String message) {
        super(message, null, false, false);
    }
}
