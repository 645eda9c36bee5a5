package dev.syncular.server.docs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Method;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * docs/CONFORMANCE.md's table of the Appendix B scenarios names tests that exist: every {@code package.Class#method}
 * it cites is a method of that test class (or of a contract it inherits), and every scenario B.1–B.22 has a row.
 */
class ConformanceTableTest {
    private static final Pattern TEST = Pattern.compile("`([a-z]+(?:\\.[a-z]+)*)\\.([A-Z]\\w*)#(\\w+)`");

    @Test
    void everyCitedTestExistsAndEveryScenarioHasOne() throws Exception {
        String doc = Files.readString(Path.of("docs", "CONFORMANCE.md"));
        String table = doc.substring(doc.indexOf("## Appendix B scenarios in this repository's tests"));
        List<String> missing = new ArrayList<>();
        TreeSet<Integer> scenarios = new TreeSet<>();
        Matcher m = TEST.matcher(table);
        int cited = 0;
        while (m.find()) {
            cited++;
            String type = "dev.syncular.server." + m.group(1) + "." + m.group(2);
            try {
                if (!hasMethod(Class.forName(type), m.group(3))) {
                    missing.add(m.group());
                }
            } catch (ClassNotFoundException e) {
                missing.add(m.group() + " (no class)");
            }
            Matcher b = Pattern.compile("^B(\\d+)").matcher(m.group(3));
            if (b.find()) {
                scenarios.add(Integer.parseInt(b.group(1)));
            }
        }
        assertTrue(cited > 50, "the table cites the tests: " + cited);
        assertEquals(List.of(), missing, "tests the table names");
        for (int i = 1; i <= 22; i++) {
            assertTrue(scenarios.contains(i), "scenario B." + i + " has a test named after it: " + scenarios);
        }
    }

    private static boolean hasMethod(Class<?> type, String name) {
        for (Class<?> c = type; c != null; c = c.getSuperclass()) {
            for (Method method : c.getDeclaredMethods()) {
                if (method.getName().equals(name)) {
                    return true;
                }
            }
            for (Class<?> i : c.getInterfaces()) {
                if (hasMethod(i, name)) {
                    return true;
                }
            }
        }
        return false;
    }
}
