package dev.syncular.server;

import static com.tngtech.archunit.base.DescribedPredicate.describe;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAnyPackage;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.tngtech.archunit.base.DescribedPredicate;
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
import java.util.List;
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
 * <li>Only the composition root ({@code boot}) constructs the {@code SyncEngine}, and only it (besides the
 * PostgreSQL implementations themselves) names a class of {@code storage.postgres}, {@code segments.postgres} or
 * {@code blobs.postgres}: everything else depends on storage roles.</li>
 * <li>Only those implementations and {@code boot} name a Vert.x SQL type ({@code io.vertx.sqlclient},
 * {@code io.vertx.pgclient} and their Mutiny forms).</li>
 * <li>Only {@code wire.Json} constructs a plain {@code ObjectMapper}: one shared mapper, never reconfigured.</li>
 * <li>{@code wire} (SSP2 bytes to records and back, §1–§5, §11) knows nothing of Quarkus, Vert.x, Netty,
 * CDI, files or the network.</li>
 * <li>No class uses a Vert.x or Quarkus internal ({@code *.impl.*}) type.</li>
 * <li>Every production package has a {@code package-info.java} saying what it owns.</li>
 * <li>Every Quarkus test class on an app of its own ({@code @TestProfile} no other class shares) is tagged
 * {@link OwnApp}, so the fast tier ({@code ./mvnw test -Pfast}) stays fast as tests are added.</li>
 * </ul>
 *
 */
class ArchitectureTest {

    private static final String ROOT = "dev.syncular.server";

    /**
     * The intended layer order, lowest first (issue 46). Each inner list is one rank; a package may depend on any
     * package of a strictly lower rank. The SSP2 model (wire, schema) is at the bottom, then the storage roles
     * (interfaces), the engine (sync), the services over it (operations, ops, policy, auth, round, realtime), the
     * edges (http, cli, console), the PostgreSQL implementations of the storage roles, the composition root (boot)
     * and, on top, the conformance host, a separate host boot's code assembles with options of its own.
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
            List.of("rollout"),
            List.of("crdt.yjs"),
            // what the S3 stores share (the classification of an S3 outage)
            List.of("s3"),
            List.of("segments.s3", "segments.memory", "blobs.s3"),
            List.of("operations"),
            // metrics, tracing and the tenant-load accounting; the health checks; the claimed background jobs
            List.of("observability"),
            List.of("health"),
            List.of("jobs"),
            List.of("policy"),
            List.of("auth"),
            List.of("round"),
            List.of("realtime"),
            List.of("http", "cli"),
            // the operator console: pages over the admin API's door (http.AdminAccess) and body reader
            List.of("console"),
            // the PostgreSQL implementations of the storage roles: only boot names them (see below)
            List.of("storage.postgres"),
            List.of("segments.postgres", "blobs.postgres"),
            // the composition root: builds the engine, the realtime hub and the blob service for the edges
            List.of("boot"),
            // a separate host assembled by boot's code with options of its own; it serves through http's resources
            List.of("conformance"));

    /** The packages of this server's PostgreSQL implementations: only boot and they themselves name them. */
    static final List<String> POSTGRES = List.of("storage.postgres", "segments.postgres", "blobs.postgres");

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
        rule.check(classes);
    }

    /** The Vert.x SQL client's types, reactive and Mutiny. */
    private static final DescribedPredicate<JavaClass> VERTX_SQL_TYPES = resideInAnyPackage(
            "io.vertx.sqlclient..", "io.vertx.pgclient..", "io.vertx.mutiny.sqlclient..", "io.vertx.mutiny.pgclient..");

    /**
     * The PostgreSQL implementations rank just below the composition root: nothing but {@code boot} (and those
     * packages among themselves) names a class of {@code storage.postgres}, {@code segments.postgres} or
     * {@code blobs.postgres}. Everything else works through the storage roles (interfaces of {@code storage},
     * {@code segments}, {@code blobs}).
     */
    @Test
    void onlyBootNamesThePostgresImplementations() {
        noClasses()
                .that()
                .resideOutsideOfPackages(bootAndPostgres())
                .should()
                .dependOnClassesThat(resideInAnyPackage(
                        POSTGRES.stream().map(p -> ROOT + "." + p).toArray(String[]::new)))
                .because("the PostgreSQL implementations are chosen and built by the composition root only")
                .check(classes);
    }

    /**
     * No class outside the PostgreSQL implementations and the composition root names a Vert.x SQL type: SQL runs
     * behind a storage role.
     */
    @Test
    void onlyThePostgresImplementationsNameVertxSql() {
        noClasses()
                .that()
                .resideOutsideOfPackages(bootAndPostgres())
                .should()
                .dependOnClassesThat(VERTX_SQL_TYPES)
                .because("SQL is the PostgreSQL storage's business: everything else uses a storage role")
                .check(classes);
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

    /**
     * Every test class is run: surefire picks classes named {@code …Test} or {@code …Tests}, failsafe the {@code …IT}
     * classes; a top-level class with tests named otherwise would never run (abstract contract suites run through
     * their subclasses).
     */
    @Test
    void everyTestClassIsNamedForARunner() {
        JavaClasses tests = testClasses();
        List<String> unnamed = new ArrayList<>();
        int checked = 0;
        for (JavaClass c : tests) {
            boolean hasTests = c.getMethods().stream()
                    .anyMatch(m -> m.getAnnotations().stream()
                            .anyMatch(a -> a.getRawType().getPackageName().startsWith("org.junit.jupiter")
                                    && a.getRawType()
                                            .getSimpleName()
                                            .matches("Test|ParameterizedTest|RepeatedTest|TestFactory")));
            if (!hasTests
                    || c.getEnclosingClass().isPresent()
                    || c.getModifiers().contains(com.tngtech.archunit.core.domain.JavaModifier.ABSTRACT)) {
                continue;
            }
            checked++;
            if (!c.getSimpleName().matches(".*(Test|Tests|IT)")) {
                unnamed.add(c.getName());
            }
        }
        assertTrue(checked > 150, "found only " + checked + " test classes");
        assertEquals(List.of(), unnamed, "test classes no runner picks up by name");
    }

    @Test
    void everyTestClassOnAnAppOfItsOwnIsTaggedOwnApp() {
        JavaClasses tests = testClasses();
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
        Set<String> listed = new TreeSet<>(fastTierExcludes());
        assertEquals(
                String.join("\n", slow),
                String.join("\n", listed),
                "src/test/fast-tier-excludes.txt must list exactly the classes tagged @OwnApp or @StartsProcesses");
    }

    /** One composition root: every CDI producer of the pod is declared in {@code boot} (issue 46). */
    @Test
    void onlyBootDeclaresProducers() {
        com.tngtech.archunit.lang.syntax.ArchRuleDefinition.methods()
                .that()
                .areAnnotatedWith(jakarta.enterprise.inject.Produces.class)
                .should()
                .beDeclaredInClassesThat()
                .resideInAPackage(ROOT + ".boot")
                .because("the composition root (boot) is where the pod's beans are produced; a package offers"
                        + " factories (policy.WritePolicies, operations.DeclaredCommands, ...) that boot calls")
                .check(classes);
        com.tngtech.archunit.lang.syntax.ArchRuleDefinition.fields()
                .that()
                .areAnnotatedWith(jakarta.enterprise.inject.Produces.class)
                .should()
                .beDeclaredInClassesThat()
                .resideInAPackage(ROOT + ".boot")
                .allowEmptyShould(true)
                .check(classes);
    }

    /** One concern per file: no production source file over 600 lines (issue 46). */
    @Test
    void noProductionFileIsOver600Lines() throws IOException {
        Set<String> tooLong = new TreeSet<>();
        try (Stream<Path> files = Files.walk(Path.of("src", "main", "java"))) {
            for (Path f : files.filter(f -> f.toString().endsWith(".java")).toList()) {
                long lines;
                try (Stream<String> l = Files.lines(f)) {
                    lines = l.count();
                }
                if (lines > 600) {
                    tooLong.add(f + " (" + lines + ")");
                }
            }
        }
        assertEquals(Set.of(), tooLong, "split these by concern");
    }

    /**
     * The fast tier covers every package: each production package has a test class of its own package that the
     * fast tier runs (not listed in {@code src/test/fast-tier-excludes.txt}).
     */
    @Test
    void everyPackageHasATestInTheFastTier() throws IOException {
        Set<String> excluded = fastTierExcludes();
        Path main = Path.of("src", "main", "java");
        Path test = Path.of("src", "test", "java");
        Set<String> packages = new TreeSet<>();
        try (Stream<Path> files = Files.walk(main)) {
            files.filter(f -> f.toString().endsWith(".java"))
                    .forEach(f -> packages.add(main.relativize(f.getParent()).toString()));
        }
        Set<String> uncovered = new TreeSet<>();
        for (String dir : packages) {
            Path tests = test.resolve(dir);
            boolean covered = false;
            if (Files.isDirectory(tests)) {
                try (Stream<Path> files = Files.list(tests)) {
                    covered = files.map(f -> test.relativize(f).toString())
                            .anyMatch(f -> f.endsWith("Test.java") && !excluded.contains(f));
                }
            }
            if (!covered) {
                uncovered.add(dir.replace('/', '.'));
            }
        }
        assertTrue(packages.size() > 20, "found only " + packages.size() + " packages");
        assertEquals(Set.of(), uncovered, "packages without a test class in the fast tier");
    }

    /** The composition root and the PostgreSQL implementations: the packages that may name the latter. */
    private static String[] bootAndPostgres() {
        List<String> allowed = new ArrayList<>(List.of(ROOT + ".boot"));
        POSTGRES.forEach(p -> allowed.add(ROOT + "." + p));
        return allowed.toArray(String[]::new);
    }

    /** The test tree's classes. */
    private static JavaClasses testClasses() {
        return new ClassFileImporter()
                .withImportOption(ImportOption.Predefined.ONLY_INCLUDE_TESTS)
                .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_JARS)
                .importPackages(ROOT);
    }

    /** The test files the fast tier leaves out ({@code src/test/fast-tier-excludes.txt}). */
    private static Set<String> fastTierExcludes() {
        try (Stream<String> lines = Files.lines(Path.of("src", "test", "fast-tier-excludes.txt"))) {
            return lines.map(String::strip)
                    .filter(l -> !l.isEmpty() && !l.startsWith("#"))
                    .collect(Collectors.toSet());
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private static String relative(String packageName) {
        return packageName.equals(ROOT) ? "" : packageName.substring(ROOT.length() + 1);
    }
}
