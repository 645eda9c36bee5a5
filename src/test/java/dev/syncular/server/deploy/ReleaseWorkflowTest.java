package dev.syncular.server.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The release path publishes what the chart's defaults name: {@code .github/workflows/release.yml} runs on version
 * tags, sets a non-SNAPSHOT Maven version before building, pushes the JVM image under the chart's default
 * {@code image.repository} with the version as tag (the chart's {@code appVersion}) and the native image beside
 * it, packages the chart with version and appVersion from the tag, pushes it to an OCI registry, and signs all
 * three with cosign keyless; {@code Chart.yaml} names a released version that CHANGELOG.md describes.
 */
class ReleaseWorkflowTest {
    private static final Path WORKFLOW = Path.of(".github", "workflows", "release.yml");
    private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());

    private static List<String> runs(JsonNode job) {
        List<String> out = new ArrayList<>();
        for (JsonNode step : job.path("steps")) {
            if (step.has("run")) {
                out.add(step.get("run").asText());
            }
        }
        return out;
    }

    private static int indexOf(List<String> runs, String needle) {
        for (int i = 0; i < runs.size(); i++) {
            if (runs.get(i).contains(needle)) {
                return i;
            }
        }
        return -1;
    }

    private static String text(JsonNode job) {
        return job.toString();
    }

    @Test
    void aVersionTagPublishesSignedImagesAndChartThatTheDefaultsName() throws IOException {
        JsonNode wf = YAML.readTree(WORKFLOW.toFile());
        JsonNode tags = wf.path("on").path("push").path("tags");
        assertTrue(tags.isArray() && tags.get(0).asText().startsWith("v"), "runs on version tags: " + tags);
        assertTrue(wf.path("on").path("push").path("branches").isMissingNode(), "tags only");

        JsonNode values =
                YAML.readTree(RenderedChart.CHART.resolve("values.yaml").toFile());
        String repository = values.path("image").path("repository").asText();
        String image = wf.path("env").path("IMAGE").asText();
        assertEquals("ghcr.io/${{ github.repository_owner }}/syncular-server-java", image);
        assertEquals(
                "ghcr.io/syncular/syncular-server-java", repository, "the chart's default image is the published one");
        assertEquals("", values.path("image").path("tag").asText(), "the tag defaults to appVersion");

        JsonNode jobs = wf.path("jobs");
        for (String name : List.of("jvm", "native")) {
            JsonNode job = jobs.path(name);
            List<String> runs = runs(job);
            int setVersion = indexOf(runs, "versions:set -DnewVersion=\"$VERSION\"");
            int build = indexOf(runs, "./mvnw -B package");
            assertTrue(setVersion >= 0 && build > setVersion, name + ": the release version is set before the build");
            assertTrue(indexOf(runs, "cosign sign --yes \"$IMAGE@") >= 0, name + ": signed by digest");
            assertEquals("write", job.path("permissions").path("id-token").asText(), name + ": keyless signing");
            assertEquals("write", job.path("permissions").path("packages").asText(), name);
        }
        assertTrue(
                text(jobs.path("jvm")).contains("${{ env.IMAGE }}:${{ env.VERSION }}\""), "JVM image tagged <version>");
        assertTrue(text(jobs.path("jvm")).contains("src/main/docker/Dockerfile.jvm"));
        assertTrue(text(jobs.path("native")).contains("${{ env.IMAGE }}:${{ env.VERSION }}-native"));
        assertTrue(indexOf(runs(jobs.path("native")), "-Dnative") >= 0);

        JsonNode chart = jobs.path("chart");
        List<String> chartRuns = runs(chart);
        assertTrue(
                chart.path("needs").toString().contains("jvm")
                        && chart.path("needs").toString().contains("native"),
                "the chart is published after the images it names");
        assertTrue(indexOf(
                        chartRuns,
                        "helm package helm/syncular-server --version \"$VERSION\" --app-version \"$VERSION\"")
                >= 0);
        assertTrue(indexOf(chartRuns, "helm push") >= 0
                && wf.path("env").path("CHARTS").asText().startsWith("oci://"));
        assertTrue(indexOf(chartRuns, "cosign sign --yes") >= 0, "the chart is signed");
        assertTrue(indexOf(runs(jobs.path("version")), "CHANGELOG.md") >= 0, "a release needs its CHANGELOG section");
    }

    /**
     * One version on the release path: the pom (no {@code -SNAPSHOT}), {@code Chart.yaml}'s version and appVersion
     * (so the chart's default image is the one the release publishes), the newest dated CHANGELOG.md section, and
     * every release the READMEs tell a reader to verify or install.
     */
    @Test
    void thePomTheChartTheChangelogAndTheReadmesNameOneVersion() throws IOException {
        String pom = Files.readString(Path.of("pom.xml"));
        java.util.regex.Matcher project = java.util.regex.Pattern.compile(
                        "<artifactId>syncular-server-java</artifactId>\\s*<version>([^<]+)</version>")
                .matcher(pom);
        assertTrue(project.find(), "the pom's version");
        String version = project.group(1);
        assertFalse(version.contains("SNAPSHOT"), "pom version " + version);
        JsonNode chart = RenderedChart.chartYaml();
        assertEquals(version, chart.path("appVersion").asText(), "Chart.yaml appVersion");
        assertEquals(version, chart.path("version").asText(), "Chart.yaml version");
        java.util.regex.Matcher released = java.util.regex.Pattern.compile(
                        "(?m)^## \\[(\\d+\\.\\d+\\.\\d+[^\\]]*)] — (\\d{4}-\\d{2}-\\d{2})$")
                .matcher(Files.readString(Path.of("CHANGELOG.md")));
        assertTrue(released.find(), "CHANGELOG.md has a dated release section");
        assertEquals(version, released.group(1), "the newest CHANGELOG.md release");
        java.util.regex.Pattern named = java.util.regex.Pattern.compile(
                "syncular-server-java:(\\d+\\.\\d+\\.\\d+)|syncular-server --version (\\d+\\.\\d+\\.\\d+)");
        int references = 0;
        for (Path readme : List.of(Path.of("README.md"), Path.of("helm", "syncular-server", "README.md"))) {
            java.util.regex.Matcher m = named.matcher(Files.readString(readme));
            while (m.find()) {
                references++;
                assertEquals(version, m.group(1) != null ? m.group(1) : m.group(2), readme + ": " + m.group());
            }
        }
        assertTrue(references >= 3, "the READMEs name the release to verify and install");
    }

    @Test
    void chartYamlNamesAReleasedVersionTheChangelogDescribes() throws IOException {
        JsonNode chart = RenderedChart.chartYaml();
        String app = chart.path("appVersion").asText();
        assertFalse(app.isEmpty() || app.contains("SNAPSHOT"), "appVersion " + app);
        assertEquals(app, chart.path("version").asText(), "chart and app are released together");
        assertTrue(
                Files.readString(Path.of("CHANGELOG.md")).contains("\n## [" + app + "]"),
                "CHANGELOG.md section " + app);
    }
}
