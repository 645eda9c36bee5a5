package dev.syncular.server.testsupport;

import java.net.URISyntaxException;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The Syncular reference data the tests check against: golden vectors and schema-IR fixtures, kept in
 * {@code src/test/resources/syncular} (its README says where each file comes from and how to refresh it).
 */
public final class ReferenceMaterial {
    private ReferenceMaterial() {}

    /** The folder on the test classpath: {@code vectors/}, {@code vectors-0.15.48-wire-v1v2/}, {@code fixtures/}. */
    public static Path dir() {
        URL url = ReferenceMaterial.class.getResource("/syncular/README.md");
        if (url == null) {
            throw new IllegalStateException(
                    "reference material missing from the test classpath (src/test/resources/syncular)");
        }
        try {
            return Path.of(url.toURI()).getParent();
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    /** A file under {@link #dir()}; fails (never skips) when it is absent. */
    public static Path file(String first, String... more) {
        Path p = dir().resolve(Path.of(first, more));
        if (!Files.isRegularFile(p)) {
            throw new IllegalStateException("reference file missing: " + p);
        }
        return p;
    }
}
