package dev.syncular.server;

import static com.tngtech.archunit.base.DescribedPredicate.describe;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAPackage;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAnyPackage;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.Dependency;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.JavaConstructorCall;
import com.tngtech.archunit.core.domain.JavaMethod;
import com.tngtech.archunit.core.domain.JavaParameter;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.library.Architectures;
import dev.syncular.server.testsupport.NotesAppProfile;
import dev.syncular.server.testsupport.OwnApp;
import dev.syncular.server.testsupport.ScenarioAppProfile;
import dev.syncular.server.testsupport.StartsProcesses;
import io.quarkus.test.junit.TestProfile;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The house rules the compiler does not check, as tests over the production classes and sources.
 *
 * <ul>
 * <li>Packages depend only downwards, in the order of {@link #LAYERS}: a package may use a package of a
 * lower rank, never one of its own rank or above. Packages of one rank (the storage adapters, the edge) do
 * not use each other.</li>
 * <li>No cycles between packages.</li>
 * <li>Only the composition root ({@code boot}) constructs the {@code SyncEngine}, and only it (besides
 * {@code storage.postgres} itself) names {@code PostgresSyncStorage}: everything else depends on storage roles.</li>
 * <li>Only {@code wire.Json} constructs a plain {@code ObjectMapper}: one shared mapper, never reconfigured.</li>
 * <li>{@code wire} (SSP2 bytes to records and back, §1–§5, §11) knows nothing of Quarkus, Vert.x, Netty,
 * CDI, files or the network.</li>
 * <li>No class uses a Vert.x or Quarkus internal ({@code *.impl.*}) type.</li>
 * <li>Every production package has a {@code package-info.java} saying what it owns.</li>
 * <li>Every Quarkus test class on an app of its own ({@code @TestProfile} no other class shares) is tagged
 * {@link OwnApp}, so the fast tier ({@code ./mvnw test -Pfast}) stays fast as tests are added.</li>
 * </ul>
 *
 * <p>Where the code breaks a rule today, the exact package edges are listed in {@link #FROZEN} with the
 * reason; {@link #frozenEdgesStillExist()} fails once an edge is gone, so the list only shrinks.
 */
class ArchitectureTest {

    private static final String ROOT = "dev.syncular.server";

    /**
     * The layer order derived from the code, lowest first. Each inner list is one rank; a package may
     * depend on any package of a strictly lower rank.
     */
    static final List<List<String>> LAYERS = List.of(
            List.of("wire"),
            List.of("wire.realtime"),
            List.of("errors"),
            List.of("config"),
            List.of("schema", "memory"),
            List.of("blobs"),
            List.of("storage"),
            List.of("segments"),
            List.of("sync"),
            List.of("crdt.yjs"),
            List.of("storage.postgres"),
            // what the S3 stores share (the classification of an S3 outage)
            List.of("s3"),
            List.of("segments.postgres", "segments.s3", "segments.memory", "blobs.postgres", "blobs.s3"),
            List.of("operations"),
            List.of("ops"),
            List.of("policy"),
            List.of("auth"),
            List.of("round"),
            List.of("realtime"),
            // the composition root: builds the engine, the realtime hub and the blob service for the edges above
            List.of("boot"),
            List.of("http", "cli", "conformance"),
            // the operator console: pages over the admin API's door (http.AdminAccess) and body reader
            List.of("console"));

    /**
     * Package edges that break the layering today (origin -> target). Each one is a known debt; remove the
     * entry when the edge is gone.
     */
    static final Map<String, String> FROZEN = frozen(
            // The conformance host serves its instances through http's resources and request bodies.
            "conformance -> http",
            "conformance host reuses http's sync, segment and body-reading resources",
            // issue 46: the syncular.storage.* mapping lives in storage; its pool reader BoundedPgPool still sits in
            // config until it moves to storage.postgres (the concurrent move of the Vert.x SQL users): drop this then
            "config -> storage",
            "config.BoundedPgPool reads storage.StorageConfig until it moves to storage.postgres");

    private static JavaClasses classes;

    @BeforeAll
    static void importClasses() {
        classes = new ClassFileImporter()
                .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_JARS)
                .importPackages(ROOT);
        assertTrue(classes.size() > 100, "imported only " + classes.size() + " production classes");
    }

    @Test
    void everyPackageHasARank() {
        Set<String> ranked = LAYERS.stream().flatMap(List::stream).collect(Collectors.toSet());
        Set<String> unranked = new TreeSet<>();
        for (JavaClass c : classes) {
            String p = relative(c.getPackageName());
            if (!ranked.contains(p)) {
                unranked.add(p);
            }
        }
        assertEquals(Set.of(), unranked, "packages missing from ArchitectureTest.LAYERS");
    }

    @Test
    void packagesDependOnlyDownwards() {
        Architectures.LayeredArchitecture rule =
                Architectures.layeredArchitecture().consideringOnlyDependenciesInAnyPackage(ROOT + "..");
        for (List<String> rank : LAYERS) {
            for (String p : rank) {
                rule = rule.layer(p).definedBy(ROOT + "." + p);
            }
        }
        List<String> below = new ArrayList<>();
        for (List<String> rank : LAYERS) {
            for (String p : rank) {
                rule = below.isEmpty()
                        ? rule.whereLayer(p).mayNotAccessAnyLayer()
                        : rule.whereLayer(p).mayOnlyAccessLayers(below.toArray(String[]::new));
            }
            below.addAll(rank);
        }
        for (String edge : FROZEN.keySet()) {
            String[] ends = edge.split(" -> ");
            rule = rule.ignoreDependency(inPackage(ends[0]), inPackage(ends[1]));
        }
        rule.check(classes);
    }

    @Test
    void frozenEdgesStillExist() {
        Set<String> edges = new TreeSet<>();
        for (JavaClass c : classes) {
            for (Dependency d : c.getDirectDependenciesFromSelf()) {
                String target = d.getTargetClass().getPackageName();
                if (target.startsWith(ROOT + ".") && !target.equals(c.getPackageName())) {
                    edges.add(relative(c.getPackageName()) + " -> " + relative(target));
                }
            }
        }
        for (String edge : FROZEN.keySet()) {
            assertTrue(
                    edges.contains(edge),
                    "frozen exception '" + edge + "' no longer occurs: remove it from ArchitectureTest.FROZEN");
        }
    }

    @Test
    void noCyclesBetweenPackages() {
        slices().matching(ROOT + ".(**)").should().beFreeOfCycles().check(classes);
    }

    @Test
    void onlyBootConstructsTheEngine() {
        noClasses()
                .that()
                .resideOutsideOfPackages(ROOT + ".boot", ROOT + ".sync")
                .should()
                .callConstructorWhere(describe(
                        "the constructor is SyncEngine's",
                        (JavaConstructorCall call) ->
                                call.getTargetOwner().getFullName().equals(ROOT + ".sync.SyncEngine")))
                .because("the composition root (boot) is the one place the engine is assembled")
                .check(classes);
    }

    @Test
    void onlyWireJsonBuildsThePlainMapper() {
        noClasses()
                .that()
                .doNotHaveFullyQualifiedName(ROOT + ".wire.Json")
                .should()
                .callConstructorWhere(describe(
                        "the constructor is ObjectMapper's no-argument one",
                        (JavaConstructorCall call) -> call.getTargetOwner()
                                        .getFullName()
                                        .equals("com.fasterxml.jackson.databind.ObjectMapper")
                                && call.getTarget().getRawParameterTypes().isEmpty()))
                .because("the plain mapper is shared (wire.Json); a parser with rules of its own builds its own")
                .check(classes);
    }

    @Test
    void theEdgeDependsOnStorageRolesNotOnThePostgresStorage() {
        noClasses()
                .that()
                .resideOutsideOfPackages(ROOT + ".boot", ROOT + ".storage.postgres")
                .should()
                .dependOnClassesThat()
                .haveFullyQualifiedName(ROOT + ".storage.postgres.PostgresSyncStorage")
                .because("users of the storage depend on the role interfaces of storage (SyncStorage,"
                        + " CheckpointStorage, RealtimeSignals, ExclusiveJobs, ...); only the composition root builds"
                        + " the PostgreSQL one")
                .check(classes);
    }

    /**
     * The pod's start-up is one ordered list ({@code boot.StartupSequence}), not observer priorities spread over
     * packages: no other production class observes {@code StartupEvent}, except the conformance host's warning,
     * which only a conformance build shows.
     */
    @Test
    void onlyTheStartupSequenceObservesStartup() {
        Set<String> observers = new TreeSet<>();
        for (JavaClass c : classes) {
            for (JavaMethod m : c.getMethods()) {
                for (JavaParameter p : m.getParameters()) {
                    if (p.isAnnotatedWith("jakarta.enterprise.event.Observes")
                            && p.getRawType().isEquivalentTo(io.quarkus.runtime.StartupEvent.class)) {
                        observers.add(c.getSimpleName());
                    }
                }
            }
        }
        assertEquals(Set.of("ConformanceHost", "StartupSequence"), observers);
    }

    @Test
    void wireIsPureSsp2() {
        noClasses()
                .that()
                .resideInAPackage(ROOT + ".wire..")
                .should()
                .dependOnClassesThat(resideInAnyPackage(
                                "io.quarkus..",
                                "io.vertx..",
                                "io.netty..",
                                "io.smallrye..",
                                "jakarta..",
                                "java.net..",
                                "java.nio.file..",
                                "java.nio.channels..",
                                "java.sql..")
                        .or(describe(
                                "are java.io file types",
                                (JavaClass t) -> t.getPackageName().equals("java.io")
                                        && (t.getSimpleName().startsWith("File")
                                                || t.getSimpleName().equals("RandomAccessFile")))))
                .because("wire turns SSP2 bytes into records and back and does no I/O")
                .check(classes);
    }

    @Test
    void noVertxOrQuarkusInternals() {
        noClasses()
                .should()
                .dependOnClassesThat(resideInAnyPackage(
                        "io.vertx..impl..", "io.quarkus..impl..", "io.vertx..internal..", "io.quarkus..internal.."))
                .because("internal types change without notice; use a public type or a predicate")
                .check(classes);
    }

    @Test
    void everyPackageHasPackageInfo() throws IOException {
        Path main = Path.of("src", "main", "java");
        assertTrue(Files.isDirectory(main), "run from the project directory");
        List<String> missing = new ArrayList<>();
        try (Stream<Path> dirs = Files.walk(main)) {
            for (Path dir : dirs.filter(Files::isDirectory).toList()) {
                boolean hasSources;
                try (Stream<Path> files = Files.list(dir)) {
                    hasSources = files.anyMatch(f -> f.toString().endsWith(".java")
                            && !f.getFileName().toString().equals("package-info.java"));
                }
                if (hasSources && !Files.exists(dir.resolve("package-info.java"))) {
                    missing.add(main.relativize(dir)
                            .toString()
                            .replace(dir.getFileSystem().getSeparator(), "."));
                }
            }
        }
        assertEquals(List.of(), missing, "packages without package-info.java");
    }

    @Test
    void everyTestClassOnAnAppOfItsOwnIsTaggedOwnApp() {
        JavaClasses tests = new ClassFileImporter()
                .withImportOption(ImportOption.Predefined.ONLY_INCLUDE_TESTS)
                .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_JARS)
                .importPackages(ROOT);
        Set<Class<?>> shared = Set.of(ScenarioAppProfile.class, NotesAppProfile.class);
        List<String> untagged = new ArrayList<>();
        int checked = 0;
        for (JavaClass c : tests) {
            if (!c.isAnnotatedWith(TestProfile.class) || c.isAnnotatedWith(StartsProcesses.class)) {
                continue;
            }
            checked++;
            boolean own =
                    !shared.contains(c.getAnnotationOfType(TestProfile.class).value());
            if (own != c.isAnnotatedWith(OwnApp.class)) {
                untagged.add(c.getName() + (own ? " (own app, not tagged)" : " (shared app, tagged)"));
            }
        }
        assertTrue(checked > 40, "found only " + checked + " test classes with a profile");
        assertEquals(List.of(), untagged, "@OwnApp must mark exactly the classes on an app of their own");

        // the fast tier excludes them by file, before surefire loads a class (loading one builds its app)
        Set<String> slow = new TreeSet<>();
        for (JavaClass c : tests) {
            if (c.getSimpleName().endsWith("Test")
                    && (c.isAnnotatedWith(OwnApp.class) || c.isAnnotatedWith(StartsProcesses.class))) {
                slow.add(c.getName().replace('.', '/') + ".java");
            }
        }
        Set<String> listed;
        try (Stream<String> lines = Files.lines(Path.of("src", "test", "fast-tier-excludes.txt"))) {
            listed = lines.map(String::strip)
                    .filter(l -> !l.isEmpty() && !l.startsWith("#"))
                    .collect(Collectors.toCollection(TreeSet::new));
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        assertEquals(
                String.join("\n", slow),
                String.join("\n", listed),
                "src/test/fast-tier-excludes.txt must list exactly the classes tagged @OwnApp or @StartsProcesses");
    }

    private static DescribedPredicate<JavaClass> inPackage(String p) {
        return resideInAPackage(ROOT + "." + p);
    }

    private static String relative(String packageName) {
        return packageName.equals(ROOT) ? "" : packageName.substring(ROOT.length() + 1);
    }

    private static Map<String, String> frozen(String... edgeAndReason) {
        Map<String, String> m = new LinkedHashMap<>();
        for (int i = 0; i < edgeAndReason.length; i += 2) {
            m.put(edgeAndReason[i], edgeAndReason[i + 1]);
        }
        return Map.copyOf(m);
    }
}
