package dev.syncular.server.config;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.syncular.server.testsupport.MappedConfig;
import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithName;
import io.smallrye.config.WithParentName;
import java.io.IOException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * docs/CONFIGURATION.md documents every property of every {@code @ConfigMapping} of the server (each feature's
 * mapping in the package that owns it, found in the production classes by {@link MappedConfig#MAPPINGS}, so a new
 * mapping cannot go undocumented), by name and by its environment-variable form. The names are derived from the
 * interfaces the way SmallRye Config does: camelCase
 * methods become kebab-case segments, nested interfaces are groups, lists of interfaces are indexed
 * ({@code syncular.checkpoints[0].name}) and {@code Optional} is transparent. No Quarkus boot.
 */
class ConfigurationDocTest {
    private static final Path DOC = Path.of("docs", "CONFIGURATION.md");

    @Test
    void everyMappedPropertyIsDocumentedWithItsEnvironmentVariable() throws IOException {
        String doc = Files.readString(DOC, StandardCharsets.UTF_8);
        List<String> names = allProperties();
        assertTrue(names.size() > 150, "walked the mappings: " + names);
        TreeSet<String> missing = new TreeSet<>();
        for (String name : names) {
            if (!doc.contains("`" + name + "`")) {
                missing.add(name);
            }
            if (!doc.contains("`" + envName(name) + "`")) {
                missing.add(envName(name) + " (environment form of " + name + ")");
            }
        }
        assertTrue(missing.isEmpty(), DOC + " does not document " + missing);
    }

    @Test
    void namesAreDerivedTheWaySmallRyeDoes() {
        assertTrue(MappedConfig.MAPPINGS.size() > 20, "found the mappings: " + MappedConfig.MAPPINGS);
        List<String> names = allProperties();
        assertTrue(names.contains("syncular.max-request-bytes"), names.toString());
        assertTrue(names.contains("syncular.realtime.max-delta-bytes"), names.toString());
        assertTrue(names.contains("syncular.admin.console.session-ttl"), names.toString());
        assertTrue(names.contains("syncular.reactions.endpoints.<key>.types"), names.toString());
        assertTrue(names.contains("syncular.limits.max-operations-per-request"), names.toString());
        assertTrue(names.contains("syncular.checkpoints[0].schema-version"), names.toString());
        assertTrue(names.contains("syncular.embedded-postgres.data-dir"), names.toString());
        assertTrue(!names.contains("syncular.mount-prefix"), "default methods are not properties");
        assertTrue(envName("syncular.checkpoints[0].schema-version").equals("SYNCULAR_CHECKPOINTS_0__SCHEMA_VERSION"));
        assertTrue(envName("syncular.limits.max-operations-per-request")
                .equals("SYNCULAR_LIMITS_MAX_OPERATIONS_PER_REQUEST"));
    }

    /** The property names of every mapping, each under its own prefix, sorted. */
    static List<String> allProperties() {
        TreeSet<String> out = new TreeSet<>();
        for (Class<?> mapping : MappedConfig.MAPPINGS) {
            out.addAll(properties(
                    mapping, mapping.getAnnotation(ConfigMapping.class).prefix()));
        }
        return new ArrayList<>(out);
    }

    /** The property names of a mapping interface under {@code prefix}, in declaration-independent sorted order. */
    static List<String> properties(Class<?> mapping, String prefix) {
        List<String> out = new ArrayList<>();
        walk(mapping, prefix, out);
        return new ArrayList<>(new TreeSet<>(out));
    }

    private static void walk(Class<?> type, String prefix, List<String> out) {
        for (Method m : type.getMethods()) {
            if (m.isDefault()
                    || Modifier.isStatic(m.getModifiers())
                    || m.getParameterCount() != 0
                    || m.getDeclaringClass() == Object.class) {
                continue;
            }
            String name;
            if (m.isAnnotationPresent(WithParentName.class)) {
                name = prefix;
            } else {
                WithName wn = m.getAnnotation(WithName.class);
                name = prefix + "." + (wn != null ? wn.value() : kebab(m.getName()));
            }
            Type t = m.getGenericReturnType();
            if (raw(t) == Optional.class) {
                t = arg(t, 0);
            }
            Class<?> r = raw(t);
            if (Collection.class.isAssignableFrom(r) && group(raw(arg(t, 0)))) {
                walk(raw(arg(t, 0)), name + "[0]", out);
            } else if (Map.class.isAssignableFrom(r) && group(raw(arg(t, 1)))) {
                walk(raw(arg(t, 1)), name + ".<key>", out);
            } else if (group(r)) {
                walk(r, name, out);
            } else {
                out.add(name);
            }
        }
    }

    /** A config group: an interface that is not a JDK or SmallRye value type. */
    private static boolean group(Class<?> c) {
        return c.isInterface() && !c.getName().startsWith("java.");
    }

    private static Class<?> raw(Type t) {
        if (t instanceof Class<?> c) {
            return c;
        }
        if (t instanceof ParameterizedType p) {
            return (Class<?>) p.getRawType();
        }
        return Object.class;
    }

    private static Type arg(Type t, int i) {
        return t instanceof ParameterizedType p ? p.getActualTypeArguments()[i] : Object.class;
    }

    /** SmallRye's default naming strategy: {@code maxRequestBytes} becomes {@code max-request-bytes}. */
    static String kebab(String method) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < method.length(); i++) {
            char c = method.charAt(i);
            if (Character.isUpperCase(c)) {
                if (i > 0) {
                    sb.append('-');
                }
                sb.append(Character.toLowerCase(c));
            } else {
                sb.append(c);
            }
        }
        return sb.toString();
    }

    /** MicroProfile Config's environment-variable form: non-alphanumerics become {@code _}, upper case. */
    static String envName(String property) {
        StringBuilder sb = new StringBuilder();
        for (char c : property.toCharArray()) {
            sb.append(Character.isLetterOrDigit(c) ? Character.toUpperCase(c) : '_');
        }
        return sb.toString();
    }
}
