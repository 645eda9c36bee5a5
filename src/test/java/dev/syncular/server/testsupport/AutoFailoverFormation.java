package dev.syncular.server.testsupport;

import java.io.File;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserPrincipal;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumSet;
import java.util.List;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Stream;
import org.postgresql.Driver;

/**
 * A pg_auto_failover formation of the test's own — a monitor, a primary and its synchronous standby, each run by
 * {@code pg_autoctl} (2.0) as the HA manager runs in production, in a temporary directory on free ports — for the
 * fault campaign's failovers ({@code faults.FailoverCampaignIT}). The pods get the formation's write endpoint as a host
 * list ({@link #url()}, the form {@code quarkus.datasource.reactive.url} takes) and follow whichever node is the
 * primary; the faults are the HA manager's own: a planned failover ({@link #failover(Callable)}, {@code pg_autoctl perform
 * failover}) and the primary node lost ({@link #killPrimary(Callable)}: {@code kill -9} of its keeper and PostgreSQL, the
 * monitor promotes the standby by itself; {@link #startAgain()} brings the node back, and it rejoins as the standby,
 * {@code pg_rewind} first).
 *
 * <p>Needs Debian's (or Ubuntu's) {@value #PACKAGES}: {@code pg_autoctl} and the monitor's extension, which exists
 * for the distribution's PostgreSQL build only (not the embedded PostgreSQL the other tests run), so the formation runs
 * {@code /usr/lib/postgresql/<version>/bin}, the newest version with the extension. Missing, {@link #start()} fails
 * naming the packages: the test is never skipped. PostgreSQL refuses root: as root every {@code pg_autoctl} runs as
 * the {@code postgres} user ({@code runuser}) in directories it owns. Its configuration and state
 * ({@code XDG_CONFIG_HOME}, {@code XDG_DATA_HOME}, {@code XDG_RUNTIME_DIR}) stay in the formation's directory, its
 * output goes to {@code target/it-logs/failover-<node>.log}.
 *
 * <p>Made for a short test: the monitor checks the nodes every second and fails over once it has not heard from
 * the primary for 4 s, after a demote timeout of 3 s (pg_auto_failover's defaults: every 5 s, 20 s, 30 s), and the standby's base backup
 * does not wait for a spread checkpoint ({@code CHECKPOINT} is issued on the primary while the formation settles). The
 * database user is the operating-system user the nodes run as (its initdb superuser), with trust authentication on the
 * loopback.
 */
public final class AutoFailoverFormation implements CampaignDatabase {
    /** The Debian packages of pg_auto_failover for the distribution's PostgreSQL (bookworm: 15). */
    public static final String PACKAGES = "pg-auto-failover-cli postgresql-15-auto-failover";

    private static final Duration WAIT = Duration.ofSeconds(120);
    private static final String DATABASE = "syncular_failover";
    private static final String MONITOR_DATABASE = "pg_auto_failover";
    private static final Path LOGS = Path.of("target", "it-logs");
    /** The monitor's timings (pg_auto_failover's GUCs; defaults in comments), set before the nodes register. */
    private static final List<String> MONITOR_SETTINGS = List.of(
            "pgautofailover.health_check_period = 1000", // 5000 ms
            "pgautofailover.health_check_timeout = 2000", // 5000 ms
            "pgautofailover.health_check_max_retries = 1", // 2
            "pgautofailover.health_check_retry_delay = 500", // 2000 ms
            "pgautofailover.node_considered_unhealthy_timeout = 4000", // 20000 ms
            "pgautofailover.primary_demote_timeout = 3000"); // 30000 ms

    private final Path autoctl;
    private final Path pgBin;
    private final Path dir;
    private final boolean asPostgresUser;
    private final String user;
    private final Node monitor;
    private final List<Node> nodes;
    private final AtomicBoolean closed = new AtomicBoolean();
    /** The node {@link #killPrimary(Callable)} killed, until {@link #startAgain()}; -1 when none is down. */
    private volatile int killed = -1;

    private long startedMs;

    /** One {@code pg_autoctl} service: the monitor or a PostgreSQL node, and its running process. */
    private static final class Node {
        final String name;
        final int port;
        final Path pgdata;
        final Path log;
        volatile Process process;

        Node(String name, int port, Path pgdata, Path log) {
            this.name = name;
            this.port = port;
            this.pgdata = pgdata;
            this.log = log;
        }

        boolean alive() {
            Process p = process;
            return p != null && p.isAlive();
        }
    }

    private AutoFailoverFormation(Path autoctl, Path pgBin, Path dir, boolean asPostgresUser, List<Integer> ports) {
        this.autoctl = autoctl;
        this.pgBin = pgBin;
        this.dir = dir;
        this.asPostgresUser = asPostgresUser;
        this.user = asPostgresUser ? "postgres" : System.getProperty("user.name");
        this.monitor = new Node("monitor", ports.get(0), dir.resolve("monitor"), LOGS.resolve("failover-monitor.log"));
        this.nodes = List.of(
                new Node("node1", ports.get(1), dir.resolve("node1"), LOGS.resolve("failover-node1.log")),
                new Node("node2", ports.get(2), dir.resolve("node2"), LOGS.resolve("failover-node2.log")));
    }

    /**
     * Creates and runs the monitor, then both nodes at once (the first to register becomes the primary), and returns
     * once one is the primary and the other its streaming synchronous standby. Fails, naming {@value #PACKAGES}, where
     * pg_auto_failover is not installed.
     */
    public static AutoFailoverFormation start() throws IOException, InterruptedException, SQLException {
        Path autoctl = onPath("pg_autoctl").orElseThrow(() -> missing("no pg_autoctl on the PATH"));
        Path pgBin =
                extensionServer().orElseThrow(() -> missing("no /usr/lib/postgresql/<version>/lib/pgautofailover.so"));
        boolean root = "root".equals(System.getProperty("user.name"));
        Path dir = ownedDirectory(Files.createTempDirectory("syncular-autofailover-"), root);
        for (String sub : List.of("config", "data", "run")) {
            ownedDirectory(Files.createDirectory(dir.resolve(sub)), root);
        }
        Files.createDirectories(LOGS);
        AutoFailoverFormation f =
                new AutoFailoverFormation(autoctl, pgBin, dir, root, List.of(freePort(), freePort(), freePort()));
        Runtime.getRuntime().addShutdownHook(new Thread(f::closeQuietly, "autofailover-formation-shutdown"));
        try {
            long t0 = System.nanoTime();
            for (Node n : f.all()) {
                Files.deleteIfExists(n.log);
            }
            f.launch(
                    f.monitor,
                    "create",
                    "monitor",
                    "--pgdata",
                    f.monitor.pgdata.toString(),
                    "--pgport",
                    Integer.toString(f.monitor.port),
                    "--hostname",
                    "127.0.0.1",
                    "--auth",
                    "trust",
                    "--no-ssl",
                    "--run");
            f.awaitMonitor();
            for (Node n : f.nodes) {
                f.launch(
                        n,
                        "create",
                        "postgres",
                        "--pgdata",
                        n.pgdata.toString(),
                        "--pgport",
                        Integer.toString(n.port),
                        "--hostname",
                        "127.0.0.1",
                        "--listen",
                        "127.0.0.1",
                        "--auth",
                        "trust",
                        "--no-ssl",
                        "--monitor",
                        "postgres://autoctl_node@127.0.0.1:" + f.monitor.port + "/" + MONITOR_DATABASE
                                + "?sslmode=disable",
                        "--name",
                        n.name,
                        "--dbname",
                        DATABASE,
                        "--run");
            }
            f.awaitStable();
            f.startedMs = (System.nanoTime() - t0) / 1_000_000;
            return f;
        } catch (IOException | InterruptedException | SQLException | RuntimeException e) {
            f.closeQuietly();
            throw e;
        }
    }

    /** How long {@link #start()} took, from the monitor's creation to a streaming synchronous standby. */
    public long startedMs() {
        return startedMs;
    }

    /**
     * The write endpoint as {@code quarkus.datasource.reactive.url} takes a host list: one URL per node,
     * comma-separated (what {@code pg_autoctl show uri} gives as {@code postgres://h1:p1,h2:p2/db?target_session_attrs=read-write}).
     */
    @Override
    public String url() {
        List<String> urls = new ArrayList<>();
        for (Node n : nodes) {
            urls.add("postgresql://127.0.0.1:" + n.port + "/" + DATABASE);
        }
        return String.join(",", urls);
    }

    /** The JDBC URL of whichever node is the primary now (pgjdbc's host list, {@code targetServerType=primary}). */
    public String jdbcUrl() {
        List<String> hosts = new ArrayList<>();
        for (Node n : nodes) {
            hosts.add("127.0.0.1:" + n.port);
        }
        return "jdbc:postgresql://" + String.join(",", hosts) + "/" + DATABASE + "?targetServerType=primary";
    }

    @Override
    public String user() {
        return user;
    }

    /** Trust authentication: any password. */
    @Override
    public String password() {
        return "trust-authentication";
    }

    @Override
    public Connection connect() throws SQLException {
        return DriverManager.getConnection(jdbcUrl(), user, password());
    }

    @Override
    public Set<FaultSchedule.Kind> faults() {
        return EnumSet.of(FaultSchedule.Kind.FAILOVER, FaultSchedule.Kind.KILL_PRIMARY);
    }

    /**
     * {@code pg_autoctl perform failover}: the monitor demotes the primary and promotes its standby; returns once the
     * new primary takes a write and the old one streams from it as its synchronous standby.
     */
    @Override
    public String failover(Callable<String> whenWritable) throws Exception {
        int before = awaitStable();
        int after = 1 - before;
        String[] perform = {"perform", "failover", "--pgdata", monitor.pgdata.toString()};
        Path out = Files.createTempFile("syncular-autoctl-", ".log");
        try {
            long t0 = System.nanoTime();
            Process p = begin(out, perform);
            // while the command waits for the whole transition: the moment the standby takes writes (a command that
            // failed ends the wait with its output)
            long deadline = t0 + WAIT.toNanos();
            while (!writes(after)) {
                if (!p.isAlive() && p.exitValue() != 0) {
                    finish(p, out, perform);
                }
                pollPause(monitor, deadline, nodes.get(after).name + " took no write", null);
            }
            long writable = sinceMs(t0);
            String then = whenWritable.call();
            finish(p, out, perform);
            if (awaitStable() != after) {
                throw new IllegalStateException(
                        "pg_autoctl perform failover left " + nodes.get(before).name + " the primary");
            }
            return nodes.get(before).name + " → " + nodes.get(after).name + " (pg_autoctl perform failover): writes"
                    + " after " + writable + " ms; " + then + "; the old primary its synchronous standby after "
                    + sinceMs(t0) + " ms";
        } finally {
            Files.deleteIfExists(out);
        }
    }

    /**
     * {@code kill -9} of the primary node (its keeper, PostgreSQL and every backend: the machine lost); returns once
     * the monitor promoted the standby and it takes a write. The node stays down until {@link #startAgain()}.
     */
    @Override
    public String killPrimary(Callable<String> whenWritable) throws Exception {
        int primary = awaitStable();
        Node node = nodes.get(primary);
        int other = 1 - primary;
        long t0 = System.nanoTime();
        killTree(node);
        killed = primary;
        awaitPromoted(other);
        long promoted = sinceMs(t0);
        long writable = awaitWritable(other, t0);
        return "killed " + node.name + " (the primary); " + nodes.get(other).name + " promoted by the monitor after "
                + promoted + " ms, writes after " + writable + " ms; " + whenWritable.call();
    }

    /** The node {@link #killPrimary(Callable)} killed run again ({@code pg_autoctl run}); returns once it is the standby. */
    @Override
    public void startAgain() throws IOException, InterruptedException {
        int down = killed;
        if (down < 0) {
            return;
        }
        Node n = nodes.get(down);
        launch(n, "run", "--pgdata", n.pgdata.toString());
        awaitStable();
        killed = -1;
    }

    /**
     * {@code pg_autoctl stop --fast} of every service, nodes first; what is still running after that (or a
     * stop that failed) is killed with its children. The directory is removed.
     */
    @Override
    public void close() throws IOException, InterruptedException {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        List<Node> order = new ArrayList<>(nodes);
        order.add(monitor);
        for (Node n : order) {
            if (n.alive()) {
                try {
                    // --fast (SIGINT), not --immediate: that is SIGQUIT, which the JVM's child processes inherit
                    // blocked
                    run("stop", "--pgdata", n.pgdata.toString(), "--fast");
                } catch (IllegalStateException stopFailed) {
                    System.out.println("formation: " + n.name + " did not stop, killed: " + stopFailed.getMessage());
                }
            }
        }
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        for (Node n : order) {
            Process p = n.process;
            if (p != null) {
                p.waitFor(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                killTree(n);
            }
        }
        try (Stream<Path> all = Files.walk(dir)) {
            all.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }

    private void closeQuietly() {
        try {
            close();
        } catch (IOException | RuntimeException e) {
            // the JVM is exiting, or a start failed: the cause is reported by the caller
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    // --------------------------------------------------------------------------------------------- waiting

    /** Until the monitor answers and its nodes table exists; then its timings ({@link #MONITOR_SETTINGS}). */
    private void awaitMonitor() throws InterruptedException, SQLException {
        long deadline = System.nanoTime() + WAIT.toNanos();
        SQLException last = null;
        while (true) {
            try (Connection c = connect(monitor.port, MONITOR_DATABASE);
                    Statement st = c.createStatement()) {
                st.executeQuery("SELECT count(*) FROM pgautofailover.node").close();
                for (String setting : MONITOR_SETTINGS) {
                    st.execute("ALTER SYSTEM SET " + setting);
                }
                st.execute("SELECT pg_reload_conf()");
                return;
            } catch (SQLException notYet) {
                last = notYet;
            }
            pollPause(monitor, deadline, "the monitor did not start", last);
        }
    }

    /**
     * Until the monitor reports one node {@code primary} and the other {@code secondary}, both as assigned (the
     * standby streams and is the synchronous one); returns the primary's index. While waiting, {@code CHECKPOINT} on
     * a node that takes writes, so a standby's base backup does not wait for a spread checkpoint.
     */
    private int awaitStable() throws InterruptedException {
        long deadline = System.nanoTime() + WAIT.toNanos();
        String last = "";
        while (true) {
            List<String[]> states = List.of();
            try {
                states = states();
            } catch (SQLException monitorDown) {
                last = monitorDown.getMessage();
            }
            int primary = -1;
            int secondary = -1;
            for (String[] s : states) {
                int i = indexOf(Integer.parseInt(s[0]));
                if (s[1].equals(s[2]) && s[1].equals("primary")) {
                    primary = i;
                } else if (s[1].equals(s[2]) && s[1].equals("secondary")) {
                    secondary = i;
                }
            }
            if (states.size() == 2 && primary >= 0 && secondary >= 0) {
                return primary;
            }
            if (!states.isEmpty()) {
                last = render(states);
            }
            nudgeCheckpoint();
            for (Node n : nodes) {
                if (n.process != null && !n.alive() && killed != indexOf(n.port)) {
                    throw new IllegalStateException(n.name + " exited (" + n.process.exitValue() + "); formation "
                            + last + "; log:\n" + tail(n.log));
                }
            }
            pollPause(monitor, deadline, "the formation did not settle (primary, secondary): " + last, null);
        }
    }

    /** Until the monitor reports node {@code index} promoted ({@code wait_primary} or {@code primary}, as assigned). */
    private void awaitPromoted(int index) throws InterruptedException {
        long deadline = System.nanoTime() + WAIT.toNanos();
        String last = "";
        while (true) {
            try {
                List<String[]> states = states();
                for (String[] s : states) {
                    if (indexOf(Integer.parseInt(s[0])) == index
                            && s[1].equals(s[2])
                            && (s[1].equals("wait_primary") || s[1].equals("primary"))) {
                        return;
                    }
                }
                last = render(states);
            } catch (SQLException monitorDown) {
                last = monitorDown.getMessage();
            }
            pollPause(monitor, deadline, nodes.get(index).name + " was not promoted: " + last, null);
        }
    }

    /**
     * Until node {@code index} commits a transaction (synchronously replicated where it has a standby); the ms since
     * {@code t0}.
     */
    private long awaitWritable(int index, long t0) throws InterruptedException {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (!writes(index)) {
            pollPause(monitor, deadline, nodes.get(index).name + " took no write", null);
        }
        return sinceMs(t0);
    }

    /** Whether node {@code index} commits a transaction now ({@code txid_current()}: a standby refuses it). */
    private boolean writes(int index) {
        try (Connection c = connect(nodes.get(index).port, DATABASE);
                Statement st = c.createStatement()) {
            st.executeQuery("SELECT txid_current()").close();
            return true;
        } catch (SQLException notYet) {
            return false;
        }
    }

    /** The monitor's view: {@code [port, reported state, assigned state]} per node. */
    private List<String[]> states() throws SQLException {
        try (Connection c = connect(monitor.port, MONITOR_DATABASE);
                PreparedStatement st = c.prepareStatement("SELECT nodeport, reportedstate::text, goalstate::text"
                        + " FROM pgautofailover.node WHERE formationid = 'default' ORDER BY nodeid");
                ResultSet rs = st.executeQuery()) {
            List<String[]> out = new ArrayList<>();
            while (rs.next()) {
                out.add(new String[] {Integer.toString(rs.getInt(1)), rs.getString(2), rs.getString(3)});
            }
            return out;
        }
    }

    private void nudgeCheckpoint() {
        for (Node n : nodes) {
            try (Connection c = connect(n.port, "postgres");
                    Statement st = c.createStatement();
                    ResultSet rs = st.executeQuery("SELECT pg_is_in_recovery()")) {
                rs.next();
                if (!rs.getBoolean(1)) {
                    st.execute("CHECKPOINT");
                }
            } catch (SQLException notUp) {
                // not started, or restarting as a standby
            }
        }
    }

    private String render(List<String[]> states) {
        StringBuilder sb = new StringBuilder();
        for (String[] s : states) {
            sb.append(sb.length() == 0 ? "" : ", ")
                    .append(nodes.get(indexOf(Integer.parseInt(s[0]))).name)
                    .append(' ')
                    .append(s[1])
                    .append('/')
                    .append(s[2]);
        }
        return sb.toString();
    }

    private int indexOf(int port) {
        for (int i = 0; i < nodes.size(); i++) {
            if (nodes.get(i).port == port) {
                return i;
            }
        }
        throw new IllegalStateException("no node on port " + port);
    }

    /**
     * The pause between two polls of a condition: a wait on the monitor's exit (a monitor that died ends the wait
     * with its log); fails with {@code what} after {@code deadline}.
     */
    private static void pollPause(Node monitor, long deadline, String what, Exception cause)
            throws InterruptedException {
        if (System.nanoTime() > deadline) {
            throw new IllegalStateException(what + " within " + WAIT, cause);
        }
        Process p = monitor.process;
        if (p.waitFor(200, TimeUnit.MILLISECONDS)) {
            throw new IllegalStateException("the monitor exited (" + p.exitValue() + "); log:\n" + tail(monitor.log));
        }
    }

    // --------------------------------------------------------------------------------------------- processes

    private List<Node> all() {
        List<Node> out = new ArrayList<>(nodes);
        out.add(0, monitor);
        return out;
    }

    /** {@code pg_autoctl args…} as the nodes' user, with the formation's own configuration and state directories. */
    private List<String> command(String... args) {
        List<String> cmd = new ArrayList<>();
        if (asPostgresUser) {
            cmd.addAll(List.of("runuser", "-u", "postgres", "--"));
        }
        cmd.add("env");
        // the extension's PostgreSQL first: pg_autoctl runs the pg_ctl, initdb and postgres it finds there
        cmd.add("PATH=" + pgBin + File.pathSeparator + System.getenv().getOrDefault("PATH", "/usr/bin:/bin"));
        cmd.add("XDG_CONFIG_HOME=" + dir.resolve("config"));
        cmd.add("XDG_DATA_HOME=" + dir.resolve("data"));
        cmd.add("XDG_RUNTIME_DIR=" + dir.resolve("run"));
        cmd.add(autoctl.toString());
        cmd.addAll(List.of(args));
        return cmd;
    }

    /** Starts a {@code pg_autoctl} service of {@code node} (it runs until stopped); output appended to its log. */
    private void launch(Node node, String... args) throws IOException {
        node.process = new ProcessBuilder(command(args))
                .directory(dir.toFile())
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(node.log.toFile()))
                .start();
        node.process.getOutputStream().close();
    }

    /** Runs {@code pg_autoctl args…} to its exit (deadline {@link #WAIT}); fails with its output unless it exits 0. */
    private void run(String... args) throws IOException, InterruptedException {
        Path out = Files.createTempFile("syncular-autoctl-", ".log");
        try {
            finish(begin(out, args), out, args);
        } finally {
            Files.deleteIfExists(out);
        }
    }

    /** Starts the command {@code pg_autoctl args…}, its output to {@code out}. */
    private Process begin(Path out, String... args) throws IOException {
        Process p = new ProcessBuilder(command(args))
                .directory(dir.toFile())
                .redirectErrorStream(true)
                .redirectOutput(out.toFile())
                .start();
        p.getOutputStream().close();
        return p;
    }

    /** Waits for a command's exit (deadline {@link #WAIT}); fails with its output unless it exits 0. */
    private void finish(Process p, Path out, String... args) throws IOException, InterruptedException {
        if (!p.waitFor(WAIT.toSeconds(), TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new IllegalStateException("timed out: pg_autoctl " + String.join(" ", args));
        }
        if (p.exitValue() != 0) {
            throw new IllegalStateException("pg_autoctl " + String.join(" ", args) + " failed (" + p.exitValue() + "): "
                    + Files.readString(out));
        }
    }

    /**
     * SIGKILL of a service and everything under it (keeper, supervisor, postmaster, backends — which start sessions of
     * their own, so a process group would miss them), taken as one snapshot before the first signal.
     */
    private static void killTree(Node node) throws InterruptedException {
        Process p = node.process;
        if (p == null) {
            return;
        }
        List<ProcessHandle> tree = new ArrayList<>();
        tree.add(p.toHandle());
        p.toHandle().descendants().forEach(tree::add);
        tree.forEach(ProcessHandle::destroyForcibly);
        for (ProcessHandle h : tree) {
            h.onExit().join();
        }
        p.waitFor();
    }

    // --------------------------------------------------------------------------------------------- helpers

    private Connection connect(int port, String database) throws SQLException {
        Properties props = new Properties();
        props.setProperty("user", user);
        props.setProperty("connectTimeout", "2");
        // a commit waiting for a standby that is gone must not hang a poll
        props.setProperty("socketTimeout", "5");
        return new Driver().connect("jdbc:postgresql://127.0.0.1:" + port + "/" + database, props);
    }

    /** The executable {@code name} in a directory of the PATH. */
    private static Optional<Path> onPath(String name) {
        for (String d : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
            Path candidate = Path.of(d.isEmpty() ? "." : d, name);
            if (Files.isExecutable(candidate)) {
                return Optional.of(candidate);
            }
        }
        return Optional.empty();
    }

    /** The newest {@code /usr/lib/postgresql/<version>/bin} whose version has the monitor's extension. */
    private static Optional<Path> extensionServer() throws IOException {
        Path debian = Path.of("/usr/lib/postgresql");
        if (!Files.isDirectory(debian)) {
            return Optional.empty();
        }
        try (Stream<Path> versions = Files.list(debian)) {
            return versions.filter(v -> Files.isRegularFile(v.resolve("lib").resolve("pgautofailover.so"))
                            && Files.isExecutable(v.resolve("bin").resolve("pg_ctl")))
                    .max(Comparator.comparingInt(
                            v -> Integer.parseInt(v.getFileName().toString().replaceAll("\\D", "0"))))
                    .map(v -> v.resolve("bin"));
        }
    }

    private static IllegalStateException missing(String what) {
        return new IllegalStateException("pg_auto_failover is not installed (" + what + "): the failover campaign runs"
                + " a real HA manager. Install it: apt-get install " + PACKAGES + " (Debian, Ubuntu; .ci/run does)");
    }

    /** {@code dir} owned by {@code postgres} (mode 700) when the nodes run as that user. */
    private static Path ownedDirectory(Path dir, boolean root) throws IOException {
        if (root) {
            UserPrincipal postgres =
                    dir.getFileSystem().getUserPrincipalLookupService().lookupPrincipalByName("postgres");
            Files.setOwner(dir, postgres);
        }
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwx------"));
        return dir;
    }

    private static String tail(Path log) {
        try {
            String all = Files.readString(log);
            return all.length() > 4000 ? all.substring(all.length() - 4000) : all;
        } catch (IOException e) {
            return "(no log: " + e + ")";
        }
    }

    private static long sinceMs(long t0) {
        return (System.nanoTime() - t0) / 1_000_000;
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }
}
