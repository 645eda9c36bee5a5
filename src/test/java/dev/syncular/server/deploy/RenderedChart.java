package dev.syncular.server.deploy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.MappingIterator;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.marcnuri.helm.Helm;
import com.marcnuri.helm.TemplateCommand;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.KubernetesResource;
import java.io.IOException;
import java.io.StringReader;
import java.io.UncheckedIOException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.UnaryOperator;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * The chart ({@code helm/syncular-server}) rendered by {@code helm template} (helm-java: Helm's own Go code,
 * no binary) and every document parsed strictly into the fabric8 Kubernetes model: a kind the model does not
 * know, or a field its type does not have (an unknown or misplaced key lands in a model object's
 * {@code additionalProperties}), fails the parse.
 *
 * <p>helm-java's template prints the release manifest only, without hooks (the {@code helm test} pod, the
 * backfill Job). So the chart is rendered from a copy whose {@code helm.sh/hook*} annotation lines are removed
 * ({@link #HOOK_LINE}): the hooked resources then render like the others; {@link #hookAnnotations} reads the
 * annotations from the chart itself.
 */
final class RenderedChart {
    static final Path CHART = Path.of("helm", "syncular-server");
    static final Path PRODUCTION_VALUES = CHART.resolve("ci").resolve("production-values.yaml");
    static final String RELEASE = "sync";
    static final Pattern HOOK_LINE = Pattern.compile("^\\s*helm\\.sh/hook[a-z-]*:.*$");
    private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());
    private static final ObjectMapper JSON = new ObjectMapper();

    final String yaml;
    final List<HasMetadata> resources;

    private RenderedChart(String yaml, List<HasMetadata> resources) {
        this.yaml = yaml;
        this.resources = resources;
    }

    /** The smallest values an install needs (the database settings the chart requires). */
    static final Path MINIMAL_VALUES = CHART.resolve("ci").resolve("minimal-values.yaml");

    /** {@link #render} on top of {@link #MINIMAL_VALUES}: the chart's defaults plus the required database settings. */
    static RenderedChart minimal(UnaryOperator<TemplateCommand> options) {
        return render(t -> options.apply(t.withValuesFile(MINIMAL_VALUES)));
    }

    /**
     * A copy of the chart whose {@code values.yaml} carries the {@link #MINIMAL_VALUES} database settings, for
     * {@code helm lint}, which takes no values file: with the bare defaults every template stops at the chart's
     * {@code required} database settings.
     */
    static synchronized Path lintable() {
        try {
            Path dir = Files.createTempDirectory("chart-lint-").resolve("syncular-server");
            try (Stream<Path> files = Files.walk(CHART)) {
                for (Path f : (Iterable<Path>) files::iterator) {
                    Path target = dir.resolve(CHART.relativize(f).toString());
                    if (Files.isDirectory(f)) {
                        Files.createDirectories(target);
                    } else {
                        Files.copy(f, target);
                    }
                }
            }
            JsonNode minimal = YAML.readTree(MINIMAL_VALUES.toFile()).get("postgresql");
            String values = Files.readString(dir.resolve("values.yaml"));
            int at = values.indexOf("\npostgresql:\n");
            String head = values.substring(0, at);
            String tail = values.substring(at)
                    .replaceFirst(
                            "\n  url: \"\"\n", "\n  url: " + minimal.get("url").asText() + "\n")
                    .replaceFirst(
                            "\n  existingSecret: \"\"\n",
                            "\n  existingSecret: "
                                    + minimal.get("existingSecret").asText() + "\n");
            Files.writeString(dir.resolve("values.yaml"), head + tail);
            return dir;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The chart's {@code Chart.yaml}. */
    static JsonNode chartYaml() {
        try {
            return YAML.readTree(CHART.resolve("Chart.yaml").toFile());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** {@code helm template sync helm/syncular-server --namespace apps} with {@code options} applied. */
    static RenderedChart render(UnaryOperator<TemplateCommand> options) {
        String out = options.apply(new Helm(hooksAsManifests())
                        .template()
                        .withName(RELEASE)
                        .withNamespace("apps"))
                .call();
        return new RenderedChart(out, parse(out));
    }

    private static Path copy;

    /** A copy of the chart without its hook annotation lines (made once). */
    private static synchronized Path hooksAsManifests() {
        if (copy == null) {
            try {
                Path dir = Files.createTempDirectory("chart-").resolve("syncular-server");
                try (Stream<Path> files = Files.walk(CHART)) {
                    for (Path f : (Iterable<Path>) files::iterator) {
                        Path target = dir.resolve(CHART.relativize(f).toString());
                        if (Files.isDirectory(f)) {
                            Files.createDirectories(target);
                        } else {
                            Files.write(
                                    target,
                                    Files.readAllLines(f).stream()
                                            .filter(line ->
                                                    !HOOK_LINE.matcher(line).matches())
                                            .toList());
                        }
                    }
                }
                copy = dir;
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        return copy;
    }

    /** The {@code helm.sh/hook*} annotation lines of a template of the chart itself, trimmed. */
    static List<String> hookAnnotations(String template) throws IOException {
        return Files.readAllLines(CHART.resolve("templates").resolve(template)).stream()
                .filter(line -> HOOK_LINE.matcher(line).matches())
                .map(String::strip)
                .toList();
    }

    static List<HasMetadata> parse(String yaml) {
        List<HasMetadata> out = new ArrayList<>();
        try (MappingIterator<JsonNode> docs = YAML.readerFor(JsonNode.class).readValues(new StringReader(yaml))) {
            while (docs.hasNext()) {
                JsonNode doc = docs.next();
                if (doc == null || doc.isNull() || doc.isEmpty()) {
                    continue; // an empty document between separators
                }
                KubernetesResource r = JSON.treeToValue(doc, KubernetesResource.class);
                String what = doc.path("kind").asText() + " "
                        + doc.path("metadata").path("name").asText();
                if (r instanceof GenericKubernetesResource || !(r instanceof HasMetadata m)) {
                    throw new AssertionError(what + ": a kind the Kubernetes model does not know ("
                            + doc.path("apiVersion").asText() + ")");
                }
                List<String> unknown = new ArrayList<>();
                unknownFields(r, what, unknown, new IdentityHashMap<>());
                if (!unknown.isEmpty()) {
                    throw new AssertionError("fields the Kubernetes model does not have: " + unknown);
                }
                out.add(m);
            }
        } catch (IOException e) {
            throw new AssertionError("rendered YAML does not parse:\n" + yaml, e);
        }
        return out;
    }

    /** Walks the model objects' getters, collecting every non-empty {@code additionalProperties} by path. */
    private static void unknownFields(Object o, String path, List<String> out, Map<Object, Boolean> seen) {
        if (o == null || seen.put(o, Boolean.TRUE) != null) {
            return;
        }
        if (o instanceof Collection<?> c) {
            int i = 0;
            for (Object e : c) {
                unknownFields(e, path + "[" + i++ + "]", out, seen);
            }
            return;
        }
        if (o instanceof Map<?, ?> m) {
            m.forEach((k, v) -> unknownFields(v, path + "." + k, out, seen));
            return;
        }
        if (!o.getClass().getName().startsWith("io.fabric8.")) {
            return;
        }
        for (Method g : o.getClass().getMethods()) {
            if (g.getParameterCount() != 0
                    || Modifier.isStatic(g.getModifiers())
                    || !g.getName().startsWith("get")
                    || g.getDeclaringClass() == Object.class) {
                continue;
            }
            Object v;
            try {
                v = g.invoke(o);
            } catch (IllegalAccessException | InvocationTargetException e) {
                continue;
            }
            String field =
                    Character.toLowerCase(g.getName().charAt(3)) + g.getName().substring(4);
            if (field.equals("additionalProperties")) {
                if (v instanceof Map<?, ?> extra && !extra.isEmpty()) {
                    out.add(path + " " + extra.keySet());
                }
            } else {
                unknownFields(v, path + "." + field, out, seen);
            }
        }
    }

    /** The one resource of {@code type} named {@code name}. */
    <T extends HasMetadata> T get(Class<T> type, String name) {
        return resources.stream()
                .filter(type::isInstance)
                .map(type::cast)
                .filter(r -> r.getMetadata().getName().equals(name))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no " + type.getSimpleName() + " " + name + " in " + kinds()));
    }

    <T extends HasMetadata> List<T> all(Class<T> type) {
        return resources.stream().filter(type::isInstance).map(type::cast).toList();
    }

    Set<String> kinds() {
        return resources.stream()
                .map(r -> r.getKind() + "/" + r.getMetadata().getName())
                .collect(Collectors.toCollection(TreeSet::new));
    }

    /** The server's configuration file, from the chart's ConfigMap. */
    Properties config() {
        Properties p = new Properties();
        try {
            p.load(new StringReader(get(ConfigMap.class, RELEASE + "-syncular-server-config")
                    .getData()
                    .get("application.properties")));
        } catch (IOException e) {
            throw new AssertionError(e);
        }
        return p;
    }
}
