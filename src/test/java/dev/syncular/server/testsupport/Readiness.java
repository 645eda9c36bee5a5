package dev.syncular.server.testsupport;

import static io.restassured.RestAssured.given;

import java.time.Duration;

/** Kubernetes' view of a server under test: {@code /q/health/ready} polled (RestAssured's base URL and port). */
public final class Readiness {
    private Readiness() {}

    /** Polls readiness until it answers {@code status} or {@code deadline} passes. */
    public static void await(int status, Duration deadline) {
        long end = System.nanoTime() + deadline.toNanos();
        int last;
        do {
            last = given().get("/q/health/ready").statusCode();
            if (last == status) {
                return;
            }
        } while (System.nanoTime() < end);
        throw new AssertionError("readiness stayed " + last + ", expected " + status);
    }
}
