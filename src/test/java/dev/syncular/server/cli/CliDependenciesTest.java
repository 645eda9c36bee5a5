package dev.syncular.server.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * {@code target/syncular-cli.jar} holds the {@code cli}, {@code wire} and {@code schema} packages, Jackson and
 * picocli (pom.xml, the {@code cli-classes} jar and the {@code cli} shade): so those packages may import only each
 * other, Jackson, the JDK and (the CLI's command line) picocli, and no server package depends on the CLI.
 */
class CliDependenciesTest {
    private static final Path MAIN = Path.of("src", "main", "java", "dev", "syncular", "server");
    private static final Pattern IMPORT = Pattern.compile("^import (?:static )?([\\w.]+)", Pattern.MULTILINE);
    private static final Pattern REFERENCE = Pattern.compile("dev\\.syncular\\.server\\.(\\w+)");

    @Test
    void cliJarPackagesImportOnlyEachOtherJacksonAndTheJdk() throws IOException {
        List<String> outside = new ArrayList<>();
        int files = 0;
        for (String pkg : List.of("cli", "wire", "schema")) {
            for (Path file : javaFiles(MAIN.resolve(pkg))) {
                files++;
                String source = Files.readString(file);
                Matcher m = IMPORT.matcher(source);
                while (m.find()) {
                    String name = m.group(1);
                    boolean picocli = pkg.equals("cli") && name.startsWith("picocli.");
                    if (!(picocli
                            || name.startsWith("java.")
                            || name.startsWith("com.fasterxml.jackson.")
                            || name.startsWith("dev.syncular.server.cli.")
                            || name.startsWith("dev.syncular.server.wire.")
                            || name.startsWith("dev.syncular.server.schema."))) {
                        outside.add(file + ": " + name);
                    }
                }
                Matcher r = REFERENCE.matcher(source);
                while (r.find()) {
                    if (!List.of("cli", "wire", "schema").contains(r.group(1))) {
                        outside.add(file + ": " + r.group());
                    }
                }
            }
        }
        assertTrue(files > 50, "scanned " + files + " files");
        assertEquals(List.of(), outside);
    }

    @Test
    void noServerPackageDependsOnTheCli() throws IOException {
        List<String> users = new ArrayList<>();
        for (Path file : javaFiles(MAIN)) {
            if (!file.startsWith(MAIN.resolve("cli")) && Files.readString(file).contains("dev.syncular.server.cli")) {
                users.add(file.toString());
            }
        }
        assertEquals(List.of(), users);
    }

    private static List<Path> javaFiles(Path dir) throws IOException {
        try (Stream<Path> files = Files.walk(dir)) {
            return files.filter(p -> p.toString().endsWith(".java")).sorted().toList();
        }
    }
}
