package dev.syncular.server.cli;

/** A non-success HTTP answer; {@code body} is what the server sent, the §10.1 error JSON on its routes. */
public final class HttpFailure extends RuntimeException {
    public final int status;
    public final String body;

    public HttpFailure(int status, String body) {
        super("HTTP " + status + ": " + body, null, false, false);
        this.status = status;
        this.body = body;
    }
}
