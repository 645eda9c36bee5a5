package dev.syncular.server.testsupport;

import io.restassured.RestAssured;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.eclipse.microprofile.config.ConfigProvider;

/**
 * One scrape of {@code /q/metrics} (on the management interface) in the Prometheus text format, parsed into samples: sample name (with its
 * {@code _total}, {@code _count}, {@code _bucket}... suffix), labels and value.
 */
public final class PrometheusScrape {
    /** One sample line. */
    public record Sample(String name, Map<String, String> labels, double value) {}

    public final List<Sample> samples;

    private PrometheusScrape(List<Sample> samples) {
        this.samples = samples;
    }

    /**
     * The management interface's port of the app under {@code @QuarkusTest} ({@code quarkus.management.test-port}):
     * {@code /q/metrics} and {@code /q/openapi} are served there, not on the API port.
     */
    public static int managementTestPort() {
        return ConfigProvider.getConfig()
                .getOptionalValue("quarkus.management.test-port", Integer.class)
                .orElse(9001);
    }

    /** One scrape of the app under {@code @QuarkusTest}: {@code GET /q/metrics} on its management port. */
    public static PrometheusScrape scrape() {
        return parse(RestAssured.given()
                .port(managementTestPort())
                .get("/q/metrics")
                .then()
                .statusCode(200)
                .extract()
                .asString());
    }

    public static PrometheusScrape parse(String text) {
        List<Sample> out = new ArrayList<>();
        for (String line : text.split("\n")) {
            if (line.isBlank() || line.startsWith("#")) {
                continue;
            }
            int brace = line.indexOf('{');
            int space = line.lastIndexOf(' ');
            Map<String, String> labels = new TreeMap<>();
            String name;
            if (brace >= 0 && brace < space) {
                name = line.substring(0, brace);
                int close = line.lastIndexOf('}');
                String body = line.substring(brace + 1, close);
                int i = 0;
                while (i < body.length()) {
                    int eq = body.indexOf('=', i);
                    String key = body.substring(i, eq).trim();
                    StringBuilder v = new StringBuilder();
                    int j = eq + 2; // past ="
                    while (body.charAt(j) != '"') {
                        if (body.charAt(j) == '\\') {
                            j++;
                        }
                        v.append(body.charAt(j++));
                    }
                    labels.put(key, v.toString());
                    i = j + 1;
                    if (i < body.length() && body.charAt(i) == ',') {
                        i++;
                    }
                }
                space = line.indexOf(' ', close);
            } else {
                name = line.substring(0, line.indexOf(' '));
                space = line.indexOf(' ');
            }
            String[] rest = line.substring(space + 1).trim().split(" ");
            out.add(new Sample(name, labels, Double.parseDouble(rest[0])));
        }
        return new PrometheusScrape(out);
    }

    /** Whether any sample has this name. */
    public boolean exports(String name) {
        return samples.stream().anyMatch(s -> s.name().equals(name));
    }

    /** The sum of the samples of {@code name} whose labels include {@code labels} (0 when none). */
    public double value(String name, Map<String, String> labels) {
        double sum = 0;
        for (Sample s : samples) {
            if (s.name().equals(name) && s.labels().entrySet().containsAll(labels.entrySet())) {
                sum += s.value();
            }
        }
        return sum;
    }

    /** {@link #value} for each name-and-labels key, for diagnostics. */
    public Map<String, Double> values(String name) {
        Map<String, Double> out = new LinkedHashMap<>();
        for (Sample s : samples) {
            if (s.name().equals(name)) {
                out.put(s.labels().toString(), s.value());
            }
        }
        return out;
    }
}
