package dev.syncular.server.http;

import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;

/** Test-only route that fails with an exception outside the catalogue. */
@Path("/test-only")
public class ThrowingTestResource {
    static final String SECRET = "db password is hunter2";

    @GET
    @Path("/boom")
    public String boom() {
        throw new IllegalStateException(SECRET);
    }
}
