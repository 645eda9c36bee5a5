package dev.syncular.server.http;

import static org.junit.jupiter.api.Assertions.assertEquals;

import jakarta.ws.rs.DELETE;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.PUT;
import jakarta.ws.rs.Path;
import java.lang.reflect.Method;
import java.nio.file.Files;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The README's administration table names every route of the admin API, as the resources declare them (no route
 * missing, none that does not exist). A table cell names a route as {@code `VERB /admin/…`}; {@code {a,b}} in it
 * stands for one route per listed segment, a query string is ignored.
 */
class AdminRoutesDocTest {
    private static final List<Class<?>> RESOURCES = List.of(
            AdminResource.class,
            AdminCheckpointsResource.class,
            AdminReactionsResource.class,
            AdminStalestResource.class,
            AdminSchemaResource.class);
    private static final Pattern CELL = Pattern.compile("`((?:GET|POST|PUT|DELETE) /admin[^`?]*)[^`]*`");
    private static final Pattern GROUP = Pattern.compile("\\{([^{},]+(?:,[^{},]+)+)}");

    @Test
    void theReadmeTableListsEveryAdminRoute() throws Exception {
        String readme = Files.readString(java.nio.file.Path.of("README.md"));
        String table = readme.substring(readme.indexOf("## Administration"), readme.indexOf("## What is implemented"));
        Set<String> documented = new TreeSet<>();
        Matcher m = CELL.matcher(table);
        while (m.find()) {
            expand(m.group(1).trim(), documented);
        }
        assertEquals(declared(), documented);
    }

    private static void expand(String route, Set<String> out) {
        Matcher g = GROUP.matcher(route);
        if (!g.find()) {
            out.add(route);
            return;
        }
        for (String part : g.group(1).split(",")) {
            expand(route.substring(0, g.start()) + part.trim() + route.substring(g.end()), out);
        }
    }

    private static Set<String> declared() {
        Set<String> routes = new TreeSet<>();
        for (Class<?> resource : RESOURCES) {
            String base = resource.getAnnotation(Path.class).value();
            for (Method method : resource.getDeclaredMethods()) {
                String verb = method.isAnnotationPresent(GET.class)
                        ? "GET"
                        : method.isAnnotationPresent(POST.class)
                                ? "POST"
                                : method.isAnnotationPresent(PUT.class)
                                        ? "PUT"
                                        : method.isAnnotationPresent(DELETE.class) ? "DELETE" : null;
                if (verb == null) {
                    continue;
                }
                Path sub = method.getAnnotation(Path.class);
                routes.add(verb + " " + base + (sub == null ? "" : sub.value()));
            }
        }
        return routes;
    }
}
