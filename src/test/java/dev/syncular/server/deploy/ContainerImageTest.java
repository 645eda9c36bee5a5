package dev.syncular.server.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * {@code Dockerfile.jvm} ships a trained AOT cache that the server can actually use: the training stage and the
 * final stage stand on one base image (a cache belongs to one JDK build), the final stage takes the application
 * and the cache from the training stage (same class path and file times), the entry point names the file the
 * training wrote, the training ran with the chart's {@code javaOpts} (the flags the cache records), and the build
 * context lets in everything the training reads.
 */
class ContainerImageTest {
    private static final Path DOCKERFILE = Path.of("src", "main", "docker", "Dockerfile.jvm");
    private static final Path TRAINING = Path.of("src", "main", "docker", "train-aot.sh");

    private static String read(Path path) throws IOException {
        return Files.readString(path);
    }

    @Test
    void bothStagesStandOnOneBaseImageAndTheFinalOneCopiesTheTrainedApplication() throws IOException {
        List<String> froms =
                read(DOCKERFILE).lines().filter(l -> l.startsWith("FROM ")).toList();
        assertEquals(List.of("FROM ${BASE_IMAGE} AS train", "FROM ${BASE_IMAGE}"), froms);
        String text = read(DOCKERFILE);
        assertTrue(text.contains("ARG BASE_IMAGE=eclipse-temurin:25-jre"), "a JDK 25 base (AOT cache with profiles)");
        assertTrue(text.contains("COPY --from=train /deployments/ /deployments/"));
        String finalStage = text.substring(text.lastIndexOf("FROM ${BASE_IMAGE}"));
        assertTrue(!finalStage.contains("COPY target/"), "the final stage copies nothing past the training stage");
    }

    @Test
    void theEntryPointUsesTheCacheTheTrainingWrote() throws IOException {
        String text = read(DOCKERFILE);
        Matcher run = Pattern.compile("train-aot\\.sh /deployments \\S+\\s*\\\\?\\s*\\S+ (\\S+)")
                .matcher(text);
        assertTrue(run.find(), "the training stage runs train-aot.sh");
        String cache = run.group(1);
        assertEquals("/deployments/app.aot", cache);
        assertTrue(text.contains("ENTRYPOINT [\"java\", \"-XX:AOTCache=" + cache + "\""));
    }

    @Test
    void theTrainingRunsWithTheChartsJavaOpts() throws IOException {
        String chartOpts = new ObjectMapper(new YAMLFactory())
                .readTree(Path.of("helm", "syncular-server", "values.yaml").toFile())
                .path("javaOpts")
                .asText();
        Matcher defaults = Pattern.compile("TRAIN_JAVA_OPTS=\"\\$\\{TRAIN_JAVA_OPTS:-([^}]*)}\"")
                .matcher(read(TRAINING));
        assertTrue(defaults.find(), "train-aot.sh defaults TRAIN_JAVA_OPTS");
        assertEquals(chartOpts, defaults.group(1));
    }

    @Test
    void theBuildContextLetsInWhatTheTrainingReads() throws IOException {
        List<String> ignore = read(Path.of(".dockerignore")).lines().toList();
        assertTrue(ignore.contains("!target/quarkus-app/"));
        assertTrue(ignore.contains("!target/syncular-cli.jar"));
        assertTrue(ignore.contains("!src/main/"), "the schema and train-aot.sh live under src/main");
        assertTrue(Files.exists(Path.of("src", "main", "resources", "schema", "quickstart.syncular.ir.json")));
        assertTrue(Files.isExecutable(TRAINING));
    }
}
