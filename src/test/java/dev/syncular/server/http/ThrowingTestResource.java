package dev.syncular.server.http;

import io.vertx.core.http.ConnectionPoolTooBusyException;
import io.vertx.pgclient.PgException;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;

/** Test-only routes that fail with an exception outside the catalogue, or with a transient storage failure. */
@Path("/test-only")
public class ThrowingTestResource {
    static final String SECRET = "db password is hunter2";

    @GET
    @Path("/boom")
    public String boom() {
        throw new IllegalStateException(SECRET);
    }

    /** What PostgreSQL raises when a statement waited longer than {@code lock_timeout}. */
    @GET
    @Path("/lock-timeout")
    public String lockTimeout() {
        throw new PgException("canceling statement due to lock timeout", "ERROR", "55P03", null);
    }

    /** What the pool raises when its wait queue is full. */
    @GET
    @Path("/pool-busy")
    public String poolBusy() {
        throw new ConnectionPoolTooBusyException("Connection pool reached max wait queue size of 1");
    }
}
