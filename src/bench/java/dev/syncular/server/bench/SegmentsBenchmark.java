package dev.syncular.server.bench;

import dev.syncular.server.cli.HttpFailure;
import dev.syncular.server.schema.ColumnSchema;
import dev.syncular.server.schema.CompiledSchema;
import dev.syncular.server.schema.SchemaLoader;
import dev.syncular.server.schema.TableSchema;
import dev.syncular.server.testsupport.HttpTransport;
import dev.syncular.server.testsupport.SyncTestClient;
import dev.syncular.server.wire.ErrorFrame;
import dev.syncular.server.wire.Frame;
import dev.syncular.server.wire.MediaType;
import dev.syncular.server.wire.Message;
import dev.syncular.server.wire.MessageDecoder;
import dev.syncular.server.wire.PullHeader;
import dev.syncular.server.wire.PushOperation;
import dev.syncular.server.wire.ReqHeader;
import dev.syncular.server.wire.RespHeader;
import dev.syncular.server.wire.RowsSegment;
import dev.syncular.server.wire.SegmentInline;
import dev.syncular.server.wire.SegmentRef;
import dev.syncular.server.wire.SegmentRow;
import dev.syncular.server.wire.SubEnd;
import dev.syncular.server.wire.SubStart;
import dev.syncular.server.wire.SubscriptionFrame;
import dev.syncular.server.wire.SubscriptionStatus;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Bootstrap through S3-presigned segment delivery (§5.3 SQLite images, §5.4 presigned URLs), against a running,
 * packaged server whose segment store is S3 (s3proxy, signatures checked). Not part of the test suite: run with
 * {@code bench/segments.sh}, which starts s3proxy and the server, runs this class and stops both.
 *
 * <p>Usage: {@code SegmentsBenchmark <baseUrl> <serverPid> <schemaPath> <s3proxyPid>}. For every size in
 * {@code bench.sizes} (100000,1000000) a scope {@code seg-<n>} in its own partition is seeded through the protocol
 * ({@code bench.seedCommitsPerRequest} (10) commits of {@code bench.seedBatch} (500) upserts per request; untimed,
 * sizes concurrently), then measured:
 * <ol>
 * <li><b>Image lane</b> (accept = external rows | sqlite | signed URLs): a fresh client's bootstrap (the first
 * for the scope, so it includes the server's cold image build), then a second fresh client's (the stored image
 * is reused). Timed from sending the bootstrap pull to the image bytes fetched from the presigned URL and their
 * SHA-256 verified against the {@code segmentId} ("served"). Applied afterwards, timed separately: (a) open with
 * sqlite-jdbc, check the metadata row and column order (§5.3 client checks) and read every column of every row;
 * (b) a real client apply: ATTACH into a fresh client database and {@code INSERT … SELECT} upserts in
 * primary-key order, 1,024 rows per transaction (§5.3 application contract).</li>
 * <li><b>Rows lane</b> (accept = external rows | signed URLs; {@code limitSnapshotRows} =
 * {@code bench.pageRows}, {@code maxSnapshotPages} = {@code bench.maxPages}): pulls until the bootstrap
 * completes, every segment fetched from its presigned URL (sequentially), verified and decoded. Applied
 * afterwards, timed separately: decode again and upsert into a fresh client database, 1,024 rows per
 * transaction.</li>
 * <li><b>Server memory</b>: {@code /proc/<pid>/status} VmRSS and {@code /q/metrics}
 * {@code jvm_memory_used_bytes{area="heap"}} (summed over pools), {@code jvm_gc_live_data_size_bytes} and GC
 * pause counters are sampled every {@code bench.sampleMs} ms (a scheduled executor, plus one sample at every
 * phase boundary); peaks are reported per phase, with CPU seconds of the server, s3proxy, PostgreSQL and this
 * process.</li>
 * </ol>
 * Both lanes send the same pull limits; only the accept bits differ.
 */
public final class SegmentsBenchmark {
    private static final String SIZES = System.getProperty("bench.sizes", "100000,1000000");
    private static final int SEED_BATCH = Integer.getInteger("bench.seedBatch", 500);
    private static final int SEED_COMMITS = Integer.getInteger("bench.seedCommitsPerRequest", 10);
    private static final int PAGE_ROWS = Integer.getInteger("bench.pageRows", 10_000);
    private static final int MAX_PAGES = Integer.getInteger("bench.maxPages", 10);
    private static final int SAMPLE_MS = Integer.getInteger("bench.sampleMs", 100);
    /** The server's management interface ({@code /q/metrics}): {@code bench.metricsUrl}, else port 9000 of the host. */
    private static final String METRICS_URL = System.getProperty("bench.metricsUrl", "http://127.0.0.1:9000/q/metrics");

    private static final int APPLY_CHUNK = 1024;
    private static final long POSTMASTER_PID = Long.getLong("bench.pgPid", 0);
    private static final String PG_VERSION = System.getProperty("bench.pgVersion", "unknown");
    private static final String TABLE = "notes";
    private static final String ACTOR = "bench-reader";
    private static final Duration PULL_TIMEOUT = Duration.ofMinutes(10);

    private static final HttpClient HTTP = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(10))
            .build();

    private static String baseUrl;
    private static CompiledSchema schema;
    private static Sampler sampler;
    private static long serverPid;
    private static long s3Pid;
    private static Path workDir;
    /** Consumes read values so the JIT cannot drop the reads being timed. */
    private static volatile long sink;
    /** Failed seed requests (retried), reported with the results. */
    private static final List<String> SEED_FAILURES = Collections.synchronizedList(new ArrayList<>());

    private SegmentsBenchmark() {}

    public static void main(String[] args) throws Exception {
        if (args.length < 4) {
            System.err.println("usage: SegmentsBenchmark <baseUrl> <serverPid> <schemaPath> <s3proxyPid>");
            System.exit(2);
        }
        baseUrl = args[0].endsWith("/") ? args[0].substring(0, args[0].length() - 1) : args[0];
        serverPid = Long.parseLong(args[1]);
        schema = SchemaLoader.load(Path.of(args[2]));
        s3Pid = Long.parseLong(args[3]);
        workDir = Files.createTempDirectory("segments-bench");
        int[] sizes = Arrays.stream(SIZES.split(","))
                .map(String::trim)
                .filter(s -> !s.isEmpty())
                .mapToInt(Integer::parseInt)
                .toArray();
        for (int n : sizes) {
            if (n <= PAGE_ROWS) {
                // §5.3 eligibility: the image lane needs a snapshot larger than one rows page
                throw new IllegalArgumentException("size " + n + " must exceed bench.pageRows=" + PAGE_ROWS);
            }
        }

        sampler = new Sampler(serverPid);
        ScheduledExecutorService exec = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "server-sampler");
            t.setDaemon(true);
            return t;
        });
        exec.scheduleWithFixedDelay(sampler::sample, 0, SAMPLE_MS, TimeUnit.MILLISECONDS);
        Metrics atStart = sampler.scrape();
        long rssStart = sampler.rss();

        // ------------------------------------------------------------------------------------- seed (untimed)
        Phase seedPhase = sampler.begin("seed");
        List<Thread> seeders = new ArrayList<>();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Map<Integer, double[]> seedSec = new LinkedHashMap<>();
        for (int n : sizes) {
            double[] t = new double[1];
            seedSec.put(n, t);
            Thread th = new Thread(
                    () -> {
                        try {
                            t[0] = seed(n);
                        } catch (Throwable e) {
                            failure.compareAndSet(null, e);
                        }
                    },
                    "seed-" + n);
            th.start();
            seeders.add(th);
        }
        for (Thread th : seeders) {
            th.join();
        }
        sampler.end(seedPhase);
        if (failure.get() != null) {
            throw new IllegalStateException("seeding failed", failure.get());
        }

        // ------------------------------------------------------------------------------------------- measure
        List<ImageRun> images = new ArrayList<>();
        List<RowsRun> rowsRuns = new ArrayList<>();
        List<Phase> phases = new ArrayList<>();
        for (int n : sizes) {
            Phase cold = sampler.begin(n + " image cold");
            ImageRun c = imageBootstrap(n, "cold build + serve");
            sampler.end(cold);
            phases.add(cold);
            Phase warm = sampler.begin(n + " image warm");
            ImageRun w = imageBootstrap(n, "warm (image reused)");
            sampler.end(warm);
            phases.add(warm);
            if (!c.segmentId.equals(w.segmentId)) {
                System.out.println("NOTE: the second client got a different image (" + w.segmentId + " vs "
                        + c.segmentId + "): not reused");
            }
            applyImage(c);
            applyImage(w);
            Files.deleteIfExists(c.file);
            Files.deleteIfExists(w.file);
            images.add(c);
            images.add(w);
            Phase rows = sampler.begin(n + " rows lane");
            RowsRun r = rowsBootstrap(n);
            sampler.end(rows);
            phases.add(rows);
            applyRows(r);
            r.segments.clear();
            rowsRuns.add(r);
        }
        exec.shutdownNow();
        Metrics atEnd = sampler.scrape();

        // -------------------------------------------------------------------------------------------- report
        System.out.println();
        System.out.println("=== Bootstrap through S3-presigned segments (bench/segments.sh) ===");
        System.out.printf(
                Locale.ROOT,
                "machine: nproc %d; %s; java %s (%s); PostgreSQL %s; s3proxy 2.9.0 (transient, "
                        + "SigV4 checked) on loopback; load average at end %s; %s%n",
                Runtime.getRuntime().availableProcessors(),
                cpuModel(),
                System.getProperty("java.runtime.version"),
                System.getProperty("java.vm.name"),
                PG_VERSION,
                loadAverage(),
                ZonedDateTime.now().format(DateTimeFormatter.RFC_1123_DATE_TIME));
        System.out.printf(
                Locale.ROOT,
                "server: %s; heap max %s%n",
                System.getProperty("bench.serverOpts", "?"),
                mb(atStart.heapMax));
        System.out.printf(
                Locale.ROOT,
                "pull limits (both lanes): limitSnapshotRows=%d, maxSnapshotPages=%d; seeded with "
                        + "%d commits of %,d upserts per request%n",
                PAGE_ROWS,
                MAX_PAGES,
                SEED_COMMITS,
                SEED_BATCH);
        seedSec.forEach((n, t) -> System.out.printf(
                Locale.ROOT, "seeded %,d rows in %.1f s (%,.0f rows/s, untimed)%n", n, t[0], n / t[0]));
        SEED_FAILURES.forEach(f -> System.out.println("seed request failed and was retried: " + f));

        System.out.println();
        System.out.println("SQLite image lane (accept = external rows | sqlite | signed URLs). served = pull sent → "
                + "image fetched from the presigned URL and SHA-256 verified; pull = server response time (cold: "
                + "includes first-page read, image build, hash, S3 upload); client work after that is separate.");
        System.out.println("| rows | run | pull ms | fetch+verify ms | served ms | served rows/s | image MB | "
                + "open+check+read all rows ms | apply to client SQLite ms (ATTACH, 1024-row txns) |");
        System.out.println("|---|---|---|---|---|---|---|---|---|");
        for (ImageRun i : images) {
            System.out.printf(
                    Locale.ROOT,
                    "| %,d | %s | %.0f | %.0f | %.0f | %,.0f | %.1f | %.0f | %.0f |%n",
                    i.rows,
                    i.label,
                    i.pullMs,
                    i.fetchMs,
                    i.pullMs + i.fetchMs,
                    i.rows / ((i.pullMs + i.fetchMs) / 1000),
                    i.bytes / 1048576.0,
                    i.readMs,
                    i.applyMs);
        }

        System.out.println();
        System.out.println("Rows lane (accept = external rows | signed URLs). total = first pull sent → last segment "
                + "fetched, verified and decoded (segments fetched one at a time); client apply separate.");
        System.out.println("| rows | requests | segments | MB fetched | pulls ms | fetch+verify ms | decode ms | "
                + "total ms | rows/s | decode+apply to client SQLite ms (1024-row txns) |");
        System.out.println("|---|---|---|---|---|---|---|---|---|---|");
        for (RowsRun r : rowsRuns) {
            System.out.printf(
                    Locale.ROOT,
                    "| %,d | %d | %d | %.1f | %.0f | %.0f | %.0f | %.0f | %,.0f | %.0f |%n",
                    r.rows,
                    r.requests,
                    r.segmentCount,
                    r.bytes / 1048576.0,
                    r.pullMs,
                    r.fetchMs,
                    r.decodeMs,
                    r.totalMs,
                    r.rows / (r.totalMs / 1000),
                    r.applyMs);
        }

        System.out.println();
        System.out.printf(
                Locale.ROOT,
                "Server memory and CPU per phase (samples every %d ms + phase boundaries; heap = "
                        + "jvm_memory_used_bytes{area=\"heap\"} summed; live = jvm_gc_live_data_size_bytes). RSS at start %s.%n",
                SAMPLE_MS,
                mb(rssStart));
        System.out.println("| phase | wall ms | samples | peak heap used | peak old gen used | peak live after GC | "
                + "GC pauses (n / ms) | peak RSS | CPU s: server / s3proxy / postgres / bench |");
        System.out.println("|---|---|---|---|---|---|---|---|---|");
        List<Phase> all = new ArrayList<>();
        all.add(seedPhase);
        all.addAll(phases);
        for (Phase p : all) {
            System.out.printf(
                    Locale.ROOT,
                    "| %s | %.0f | %d | %s | %s | %s | %d / %.0f | %s | %.1f / %.1f / %.1f / %.1f |%n",
                    p.name,
                    p.wallMs(),
                    p.samples,
                    mb(p.peakHeap),
                    mb(p.peakOld),
                    mb(p.peakLive),
                    p.gcCount(),
                    p.gcMs(),
                    mb(p.peakRss),
                    p.cpu.server,
                    p.cpu.s3,
                    p.cpu.postgres,
                    p.cpu.bench);
        }
        System.out.printf(
                Locale.ROOT,
                "server at end: RSS %s, VmHWM %s, heap used %s, GC pauses in the whole run %d " + "(%.0f ms)%n",
                mb(sampler.rss()),
                mb(sampler.hwm()),
                mb(atEnd.heapUsed),
                (long) (atEnd.gcCount - atStart.gcCount),
                (atEnd.gcSec - atStart.gcSec) * 1000);
        for (ImageRun i : images) {
            if (i.label.startsWith("cold") && i.rows >= 1_000_000) {
                System.out.printf(
                        Locale.ROOT,
                        "targets at %,d rows: cold image pull %.2f s (≤ 3 s target for the build; "
                                + "this upper bound also includes the first-page read, SHA-256 and the S3 upload); ",
                        i.rows,
                        i.pullMs / 1000);
            }
            if (i.label.startsWith("warm") && i.rows >= 1_000_000) {
                System.out.printf(
                        Locale.ROOT,
                        "warm served %,.0f rows/s (≥ 1M rows/s target)%n",
                        i.rows / ((i.pullMs + i.fetchMs) / 1000));
            }
        }
        deleteTree(workDir);
    }

    // ============================================================================================= seeding

    private static String partition(int n) {
        return "bench-seg-" + n;
    }

    private static String scope(int n) {
        return "seg-" + n;
    }

    private static Map<String, Object> noteRow(String id, String project, int n) {
        Map<String, Object> v = new LinkedHashMap<>();
        v.put("id", id);
        v.put("project_id", project);
        v.put("title", "note " + n);
        v.put("body", "benchmark body text for row " + id + " (round " + n + ")");
        v.put("priority", (long) (n % 5));
        v.put("done", (n & 1) == 0);
        return v;
    }

    /** Seeds {@code n} rows into scope {@code seg-n} (partition {@code bench-seg-n}); returns seconds taken. */
    private static double seed(int n) {
        String scope = scope(n);
        SyncTestClient seeder =
                new SyncTestClient(schema, new HttpTransport(baseUrl, partition(n)), "seeder", "seeder-" + n);
        seeder.syncUntilIdle(); // log epoch
        long t0 = System.nanoTime();
        long lastReport = t0;
        int perRequest = SEED_BATCH * SEED_COMMITS;
        for (int from = 0; from < n; from += perRequest) {
            List<String> ids = new ArrayList<>();
            for (int c = from; c < Math.min(n, from + perRequest); c += SEED_BATCH) {
                List<PushOperation> ops = new ArrayList<>(SEED_BATCH);
                for (int i = c; i < Math.min(n, c + SEED_BATCH); i++) {
                    ops.add(seeder.upsertOp(
                            TABLE, noteRow(String.format(Locale.ROOT, "%s-%07d", scope, i), scope, i), null));
                }
                ids.add(seeder.commit(ops));
            }
            for (int attempt = 1; ; attempt++) {
                try {
                    seeder.sync(); // every queued commit in one request
                    break;
                } catch (HttpFailure | UncheckedIOException e) {
                    // the outbox still holds the commits: a retry is idempotent by clientCommitId (§2.3)
                    String what = e instanceof HttpFailure f
                            ? "HTTP " + f.status + " " + f.body
                            : String.valueOf(e.getCause());
                    SEED_FAILURES.add(String.format(
                            Locale.ROOT,
                            "seed %,d, rows %,d..: attempt %d failed after " + "%.1f s: %s",
                            n,
                            from,
                            attempt,
                            (System.nanoTime() - t0) / 1e9,
                            what));
                    System.err.println("  " + SEED_FAILURES.get(SEED_FAILURES.size() - 1));
                    if (attempt == 3) {
                        throw e;
                    }
                }
            }
            for (String id : ids) {
                if (!SyncTestClient.applied(seeder.result(id))) {
                    throw new IllegalStateException("seed commit not applied: " + seeder.result(id));
                }
            }
            if (System.nanoTime() - lastReport > 15_000_000_000L) {
                lastReport = System.nanoTime();
                System.err.printf(Locale.ROOT, "  seeding %,d: %,d rows so far%n", n, Math.min(n, from + perRequest));
            }
        }
        double sec = (System.nanoTime() - t0) / 1e9;
        System.out.printf(Locale.ROOT, "seeded %,d rows in %.1f s%n", n, sec);
        return sec;
    }

    // ========================================================================================== the client

    /** A minimal bootstrapping client: one subscription, its own HTTP, frames handled inline for timing. */
    private static final class Client {
        final String clientId;
        final String partition;
        final Map<String, List<String>> scopes;
        final int accept;
        String logEpoch;
        long cursor = -1;
        String bootstrapState;
        int requests;

        Client(int n, int accept, String tag) {
            this.clientId = "bench-" + tag + "-" + n + "-" + System.nanoTime();
            this.partition = partition(n);
            this.scopes = Map.of("project_id", List.of(scope(n)));
            this.accept = accept;
        }

        /** The §2.1 epoch handshake (untimed: every client pays it once, whatever the lane). */
        void handshake() {
            Message m = pull();
            RespHeader h = (RespHeader) m.frames().get(0);
            if (!h.resetRequired() || h.logEpoch() == null) {
                throw new IllegalStateException("expected the epoch handshake, got " + m.frames());
            }
            logEpoch = h.logEpoch();
        }

        Message pull() {
            List<Frame> frames = new ArrayList<>();
            frames.add(new ReqHeader(clientId, schema.version(), logEpoch));
            frames.add(new PullHeader(0, PAGE_ROWS, MAX_PAGES, accept));
            frames.add(new SubscriptionFrame("s1", TABLE, scopes, null, cursor, bootstrapState));
            byte[] body = Message.request(frames).encode();
            HttpRequest req = HttpRequest.newBuilder(URI.create(baseUrl + "/sync"))
                    .timeout(PULL_TIMEOUT)
                    .header("x-actor-id", ACTOR)
                    .header("x-syncular-partition", partition)
                    .header("content-type", HttpTransport.CONTENT_TYPE)
                    .POST(HttpRequest.BodyPublishers.ofByteArray(body))
                    .build();
            requests++;
            HttpResponse<byte[]> r = send(req, HttpResponse.BodyHandlers.ofByteArray(), "POST /sync");
            Message m = MessageDecoder.decodeResponse(r.body());
            for (Frame f : m.frames()) {
                if (f instanceof ErrorFrame e) {
                    throw new IllegalStateException("server error frame: " + e);
                }
                if (f instanceof SubStart s && s.status() != SubscriptionStatus.ACTIVE) {
                    throw new IllegalStateException("subscription not active: " + s);
                }
            }
            return m;
        }

        /** Applies {@code SUB_END}; returns whether the bootstrap is complete. */
        boolean subEnd(SubEnd e) {
            cursor = e.nextCursor();
            bootstrapState = e.bootstrapState();
            return bootstrapState == null;
        }
    }

    private static <T> HttpResponse<T> send(HttpRequest req, HttpResponse.BodyHandler<T> handler, String what) {
        try {
            HttpResponse<T> r = HTTP.send(req, handler);
            if (r.statusCode() != 200) {
                Object body = r.body();
                String text = body instanceof byte[] b
                        ? new String(b, StandardCharsets.UTF_8)
                        : body instanceof InputStream in
                                ? new String(in.readAllBytes(), StandardCharsets.UTF_8)
                                : String.valueOf(body);
                throw new IllegalStateException(what + " answered " + r.statusCode() + ": " + text);
            }
            return r;
        } catch (IOException e) {
            throw new UncheckedIOException(what + " failed", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    // ========================================================================================== image lane

    private static final class ImageRun {
        int rows;
        String label;
        double pullMs;
        double fetchMs;
        long bytes;
        double readMs;
        double applyMs;
        String segmentId;
        Path file;
        SegmentRef ref;
    }

    private static ImageRun imageBootstrap(int n, String label) throws IOException {
        Client c = new Client(
                n, PullHeader.ACCEPT_EXTERNAL_ROWS | PullHeader.ACCEPT_SQLITE | PullHeader.ACCEPT_SIGNED_URLS, "image");
        c.handshake();
        ImageRun run = new ImageRun();
        run.rows = n;
        run.label = label;
        long t0 = System.nanoTime();
        Message m = c.pull();
        long t1 = System.nanoTime();
        SegmentRef ref = null;
        boolean done = false;
        for (Frame f : m.frames()) {
            if (f instanceof SegmentRef r) {
                if (ref != null || r.mediaType() != MediaType.SQLITE) {
                    throw new IllegalStateException("expected exactly one sqlite SEGMENT_REF, got " + m.frames());
                }
                ref = r;
            } else if (f instanceof SegmentInline) {
                throw new IllegalStateException("inline segment without accept bit 0");
            } else if (f instanceof SubEnd e) {
                done = c.subEnd(e);
            }
        }
        if (ref == null || !done) {
            throw new IllegalStateException(
                    "image bootstrap of " + n + " rows: no sqlite SEGMENT_REF or not complete: " + summarize(m));
        }
        if (ref.url() == null) {
            throw new IllegalStateException("sqlite SEGMENT_REF without a presigned URL: " + ref);
        }
        if (ref.rowCursor() != null || ref.nextRowCursor() != null || ref.rowCount() != n) {
            throw new IllegalStateException("bad sqlite descriptor: " + ref);
        }
        Path file = Files.createTempFile(workDir, "image-", ".sqlite");
        String hex = fetchToFile(ref.url(), file);
        long t2 = System.nanoTime();
        if (!ref.segmentId().equals("sha256:" + hex)) {
            throw new IllegalStateException("image content address mismatch: " + ref.segmentId() + " vs sha256:" + hex);
        }
        run.pullMs = (t1 - t0) / 1e6;
        run.fetchMs = (t2 - t1) / 1e6;
        run.bytes = Files.size(file);
        if (run.bytes != ref.byteLength()) {
            throw new IllegalStateException("image byteLength " + ref.byteLength() + " but fetched " + run.bytes);
        }
        run.segmentId = ref.segmentId();
        run.file = file;
        run.ref = ref;
        System.out.printf(
                Locale.ROOT,
                "image %,d rows, %s: pull %.0f ms, fetch+verify %.0f ms, %,d bytes (%s)%n",
                n,
                label,
                run.pullMs,
                run.fetchMs,
                run.bytes,
                host(ref.url()));
        return run;
    }

    /** Streams a presigned GET into {@code file}, hashing on the way; returns the SHA-256 hex. */
    private static String fetchToFile(String url, Path file) throws IOException {
        HttpResponse<InputStream> r = send(
                HttpRequest.newBuilder(URI.create(url))
                        .timeout(PULL_TIMEOUT)
                        .GET()
                        .build(),
                HttpResponse.BodyHandlers.ofInputStream(),
                "GET presigned image URL");
        MessageDigest md = sha256();
        try (InputStream in = r.body();
                OutputStream out = Files.newOutputStream(file)) {
            byte[] buf = new byte[1 << 16];
            for (int k; (k = in.read(buf)) > 0; ) {
                md.update(buf, 0, k);
                out.write(buf, 0, k);
            }
        }
        return HexFormat.of().formatHex(md.digest());
    }

    /** (a) the §5.3 client checks plus reading every cell; (b) ATTACH + INSERT … SELECT upserts in 1,024-row txns. */
    private static void applyImage(ImageRun run) throws SQLException, IOException {
        TableSchema t = schema.table(TABLE);
        SegmentRef ref = run.ref;
        long t0 = System.nanoTime();
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + run.file);
                Statement st = c.createStatement()) {
            try (ResultSet meta =
                    st.executeQuery("SELECT format, \"table\", schemaVersion, asOfCommitSeq, scopeDigest, "
                            + "rowCount FROM _syncular_segment")) {
                if (!meta.next()
                        || meta.getInt(1) != 1
                        || !TABLE.equals(meta.getString(2))
                        || meta.getInt(3) != schema.version()
                        || meta.getLong(4) != ref.asOfCommitSeq()
                        || !ref.scopeDigest().equals(meta.getString(5))
                        || meta.getLong(6) != ref.rowCount()
                        || meta.next()) {
                    throw new IllegalStateException("image metadata mismatch");
                }
            }
            SyncTestClient.checkImageColumns(st, "", t); // §5.3 check 3
            long count = 0;
            long checksum = 0;
            int cols = t.columnCount() + 1;
            try (ResultSet rs = st.executeQuery("SELECT * FROM \"" + TABLE + "\"")) {
                while (rs.next()) {
                    for (int i = 1; i <= cols; i++) {
                        Object v = rs.getObject(i);
                        checksum += v == null ? 0 : v.hashCode();
                    }
                    count++;
                }
            }
            if (count != ref.rowCount()) {
                throw new IllegalStateException("image has " + count + " rows, descriptor " + ref.rowCount());
            }
            sink += checksum; // keeps the reads observable
        }
        long t1 = System.nanoTime();
        run.readMs = (t1 - t0) / 1e6;

        Path db = Files.createTempFile(workDir, "client-", ".db");
        long t2 = System.nanoTime();
        try (Connection c = clientDb(db, t);
                Statement st = c.createStatement()) {
            st.execute("ATTACH DATABASE '" + run.file.toString().replace("'", "''") + "' AS img");
            SyncTestClient.checkImageColumns(st, "img.", t); // §5.3 check 3
            String pk = quoted(t.primaryKeyColumn().name());
            String cols = columnList(t) + ", \"_syncular_version\"";
            StringBuilder update = new StringBuilder();
            for (ColumnSchema col : t.columns()) {
                if (!col.name().equals(t.primaryKeyColumn().name())) {
                    update.append(quoted(col.name()))
                            .append(" = excluded.")
                            .append(quoted(col.name()))
                            .append(", ");
                }
            }
            update.append("\"_syncular_version\" = excluded.\"_syncular_version\"");
            c.setAutoCommit(false);
            // §5.6 first-page clear of the subscription's scope, in the first transaction
            try (PreparedStatement clear =
                    c.prepareStatement("DELETE FROM main.\"" + TABLE + "\" WHERE \"project_id\" = ?")) {
                clear.setString(1, scope(run.rows));
                clear.executeUpdate();
            }
            long applied = 0;
            try (PreparedStatement last = c.prepareStatement(
                            "SELECT max(" + pk + "), count(*) FROM (SELECT " + pk + " FROM img.\"" + TABLE + "\" WHERE "
                                    + pk + " > ? ORDER BY " + pk + " LIMIT " + APPLY_CHUNK + ")");
                    PreparedStatement first = c.prepareStatement("SELECT max(" + pk + "), count(*) FROM (SELECT " + pk
                            + " FROM img.\"" + TABLE + "\" ORDER BY " + pk + " LIMIT " + APPLY_CHUNK + ")");
                    PreparedStatement copy =
                            c.prepareStatement("INSERT INTO main.\"" + TABLE + "\" (" + cols + ") SELECT "
                                    + cols + " FROM img.\"" + TABLE + "\" WHERE " + pk + " > ? AND " + pk
                                    + " <= ? ORDER BY " + pk
                                    + " ON CONFLICT(" + pk + ") DO UPDATE SET " + update);
                    PreparedStatement copyFirst = c.prepareStatement("INSERT INTO main.\"" + TABLE + "\" (" + cols
                            + ") SELECT " + cols + " FROM img.\"" + TABLE + "\" WHERE " + pk + " <= ? ORDER BY " + pk
                            + " ON CONFLICT(" + pk + ") DO UPDATE SET " + update)) {
                String after = null;
                while (true) {
                    PreparedStatement bound = after == null ? first : last;
                    if (after != null) {
                        last.setString(1, after);
                    }
                    String upTo;
                    int k;
                    try (ResultSet rs = bound.executeQuery()) {
                        rs.next();
                        upTo = rs.getString(1);
                        k = rs.getInt(2);
                    }
                    if (k == 0) {
                        break;
                    }
                    PreparedStatement ins = after == null ? copyFirst : copy;
                    if (after == null) {
                        ins.setString(1, upTo);
                    } else {
                        ins.setString(1, after);
                        ins.setString(2, upTo);
                    }
                    applied += ins.executeUpdate();
                    c.commit();
                    after = upTo;
                }
            }
            c.setAutoCommit(true);
            st.execute("DETACH DATABASE img");
            long count;
            try (ResultSet rs = st.executeQuery("SELECT count(*) FROM main.\"" + TABLE + "\"")) {
                rs.next();
                count = rs.getLong(1);
            }
            if (applied != ref.rowCount() || count != ref.rowCount()) {
                throw new IllegalStateException("applied " + applied + " / " + count + " rows of " + ref.rowCount());
            }
        }
        run.applyMs = (System.nanoTime() - t2) / 1e6;
        Files.deleteIfExists(db);
        System.out.printf(
                Locale.ROOT,
                "image %,d rows, %s: open+check+read %.0f ms, apply to client SQLite %.0f ms%n",
                run.rows,
                run.label,
                run.readMs,
                run.applyMs);
    }

    /** A fresh client database with the table in its client shape (columns + {@code _syncular_version}). */
    private static Connection clientDb(Path file, TableSchema t) throws SQLException {
        Connection c = DriverManager.getConnection("jdbc:sqlite:" + file);
        try (Statement st = c.createStatement()) {
            st.execute("PRAGMA journal_mode=WAL");
            st.execute("PRAGMA synchronous=NORMAL");
            StringBuilder ddl = new StringBuilder("CREATE TABLE \"" + TABLE + "\" (");
            for (ColumnSchema col : t.columns()) {
                ddl.append(quoted(col.name()))
                        .append(' ')
                        .append(
                                switch (col.type()) {
                                    case INTEGER, BOOLEAN -> "INTEGER";
                                    case FLOAT -> "REAL";
                                    case BYTES, CRDT -> "BLOB";
                                    default -> "TEXT";
                                });
                if (col.name().equals(t.primaryKeyColumn().name())) {
                    ddl.append(" PRIMARY KEY");
                }
                if (!col.nullable()) {
                    ddl.append(" NOT NULL");
                }
                ddl.append(", ");
            }
            ddl.append("\"_syncular_version\" INTEGER NOT NULL)");
            st.execute(ddl.toString());
        }
        return c;
    }

    private static String columnList(TableSchema t) {
        StringBuilder b = new StringBuilder();
        for (ColumnSchema col : t.columns()) {
            b.append(b.length() == 0 ? "" : ", ").append(quoted(col.name()));
        }
        return b.toString();
    }

    private static String quoted(String name) {
        return "\"" + name.replace("\"", "\"\"") + "\"";
    }

    // =========================================================================================== rows lane

    private static final class RowsRun {
        int rows;
        int requests;
        int segmentCount;
        long bytes;
        double pullMs;
        double fetchMs;
        double decodeMs;
        double totalMs;
        double applyMs;
        final List<byte[]> segments = new ArrayList<>();
    }

    private static RowsRun rowsBootstrap(int n) {
        Client c = new Client(n, PullHeader.ACCEPT_EXTERNAL_ROWS | PullHeader.ACCEPT_SIGNED_URLS, "rows");
        c.handshake();
        RowsRun run = new RowsRun();
        run.rows = n;
        long got = 0;
        long pullNs = 0;
        long fetchNs = 0;
        long decodeNs = 0;
        long t0 = System.nanoTime();
        for (int round = 0; ; round++) {
            if (round > 10_000) {
                throw new IllegalStateException("rows bootstrap did not finish");
            }
            long a = System.nanoTime();
            Message m = c.pull();
            pullNs += System.nanoTime() - a;
            boolean done = false;
            for (Frame f : m.frames()) {
                if (f instanceof SegmentRef r) {
                    if (r.mediaType() != MediaType.ROWS || r.url() == null) {
                        throw new IllegalStateException("expected a rows SEGMENT_REF with a URL: " + r);
                    }
                    long b = System.nanoTime();
                    byte[] bytes = send(
                                    HttpRequest.newBuilder(URI.create(r.url()))
                                            .timeout(PULL_TIMEOUT)
                                            .GET()
                                            .build(),
                                    HttpResponse.BodyHandlers.ofByteArray(),
                                    "GET presigned rows URL")
                            .body();
                    String hex = HexFormat.of().formatHex(sha256().digest(bytes));
                    if (!r.segmentId().equals("sha256:" + hex)) {
                        throw new IllegalStateException("rows segment content address mismatch");
                    }
                    long d = System.nanoTime();
                    fetchNs += d - b;
                    got += countRows(RowsSegment.decode(bytes));
                    decodeNs += System.nanoTime() - d;
                    run.bytes += bytes.length;
                    run.segmentCount++;
                    run.segments.add(bytes);
                } else if (f instanceof SegmentInline) {
                    throw new IllegalStateException("inline segment without accept bit 0");
                } else if (f instanceof SubEnd e) {
                    done = c.subEnd(e);
                }
            }
            if (done) {
                break;
            }
        }
        run.totalMs = (System.nanoTime() - t0) / 1e6;
        run.pullMs = pullNs / 1e6;
        run.fetchMs = fetchNs / 1e6;
        run.decodeMs = decodeNs / 1e6;
        run.requests = c.requests - 1; // without the handshake
        if (got != n) {
            throw new IllegalStateException("rows bootstrap of " + n + " delivered " + got);
        }
        System.out.printf(
                Locale.ROOT,
                "rows lane %,d rows: %.0f ms (%,.0f rows/s), %d requests, %d segments, %,d bytes%n",
                n,
                run.totalMs,
                n / (run.totalMs / 1000),
                run.requests,
                run.segmentCount,
                run.bytes);
        return run;
    }

    private static long countRows(RowsSegment seg) {
        long k = 0;
        long checksum = 0;
        for (List<SegmentRow> block : seg.blocks()) {
            for (SegmentRow r : block) {
                checksum += r.serverVersion();
                k++;
            }
        }
        sink += checksum;
        return k;
    }

    /** Decodes the stored segments again and upserts every row into a fresh client database, 1,024 per txn. */
    private static void applyRows(RowsRun run) throws SQLException, IOException {
        TableSchema t = schema.table(TABLE);
        Path db = Files.createTempFile(workDir, "client-rows-", ".db");
        String cols = columnList(t) + ", \"_syncular_version\"";
        StringBuilder qs = new StringBuilder();
        StringBuilder update = new StringBuilder();
        for (ColumnSchema col : t.columns()) {
            qs.append("?, ");
            if (!col.name().equals(t.primaryKeyColumn().name())) {
                update.append(quoted(col.name()))
                        .append(" = excluded.")
                        .append(quoted(col.name()))
                        .append(", ");
            }
        }
        qs.append('?');
        update.append("\"_syncular_version\" = excluded.\"_syncular_version\"");
        long t0 = System.nanoTime();
        long applied = 0;
        try (Connection c = clientDb(db, t)) {
            c.setAutoCommit(false);
            try (PreparedStatement ins = c.prepareStatement("INSERT INTO \"" + TABLE + "\" (" + cols + ") VALUES (" + qs
                    + ") ON CONFLICT(" + quoted(t.primaryKeyColumn().name()) + ") DO UPDATE SET " + update)) {
                int inTxn = 0;
                for (byte[] bytes : run.segments) {
                    RowsSegment seg = RowsSegment.decode(bytes);
                    for (List<SegmentRow> block : seg.blocks()) {
                        for (SegmentRow r : block) {
                            Object[] v = r.values();
                            for (int i = 0; i < v.length; i++) {
                                Object x = v[i];
                                ins.setObject(i + 1, x instanceof Boolean b ? (b ? 1 : 0) : x);
                            }
                            ins.setLong(v.length + 1, r.serverVersion());
                            ins.addBatch();
                            if (++inTxn == APPLY_CHUNK) {
                                ins.executeBatch();
                                c.commit();
                                applied += inTxn;
                                inTxn = 0;
                            }
                        }
                    }
                }
                if (inTxn > 0) {
                    ins.executeBatch();
                    c.commit();
                    applied += inTxn;
                }
            }
        }
        run.applyMs = (System.nanoTime() - t0) / 1e6;
        Files.deleteIfExists(db);
        if (applied != run.rows) {
            throw new IllegalStateException("applied " + applied + " rows of " + run.rows);
        }
        System.out.printf(
                Locale.ROOT, "rows lane %,d rows: decode+apply to client SQLite %.0f ms%n", run.rows, run.applyMs);
    }

    // ======================================================================================= sampling

    /** One scrape of {@code /q/metrics}: heap used (all heap pools), old gen used, live after GC, GC pauses. */
    private record Metrics(long heapUsed, long oldUsed, long live, long heapMax, double gcCount, double gcSec) {
        static final Metrics NONE = new Metrics(-1, -1, -1, -1, 0, 0);
    }

    private static final class CpuTimes {
        double server;
        double s3;
        double postgres;
        double bench;
    }

    private static final class Phase {
        final String name;
        final long startNs = System.nanoTime();
        long endNs;
        int samples;
        long peakHeap = -1;
        long peakOld = -1;
        long peakLive = -1;
        long peakRss = -1;
        Metrics first;
        Metrics last;
        CpuTimes cpuStart;
        CpuTimes cpu = new CpuTimes();

        Phase(String name) {
            this.name = name;
        }

        double wallMs() {
            return (endNs - startNs) / 1e6;
        }

        long gcCount() {
            return first == null || last == null ? -1 : (long) (last.gcCount - first.gcCount);
        }

        double gcMs() {
            return first == null || last == null ? -1 : (last.gcSec - first.gcSec) * 1000;
        }

        synchronized void record(long rss, Metrics m) {
            samples++;
            peakRss = Math.max(peakRss, rss);
            if (m != Metrics.NONE) {
                peakHeap = Math.max(peakHeap, m.heapUsed);
                peakOld = Math.max(peakOld, m.oldUsed);
                peakLive = Math.max(peakLive, m.live);
            }
        }
    }

    private static final class Sampler {
        private final long pid;
        private volatile Phase current;
        private final HttpRequest metricsRequest = HttpRequest.newBuilder(URI.create(METRICS_URL))
                .timeout(Duration.ofSeconds(10))
                .GET()
                .build();

        Sampler(long pid) {
            this.pid = pid;
        }

        Phase begin(String name) {
            Phase p = new Phase(name);
            p.cpuStart = cpu();
            Metrics m = scrape();
            p.first = m;
            p.record(rss(), m);
            current = p;
            return p;
        }

        void end(Phase p) {
            Metrics m = scrape();
            p.record(rss(), m);
            p.last = m;
            p.endNs = System.nanoTime();
            CpuTimes now = cpu();
            p.cpu.server = now.server - p.cpuStart.server;
            p.cpu.s3 = now.s3 - p.cpuStart.s3;
            p.cpu.postgres = now.postgres - p.cpuStart.postgres;
            p.cpu.bench = now.bench - p.cpuStart.bench;
            current = null;
        }

        /** Scheduled every {@code bench.sampleMs} (fixed delay, so a slow scrape never piles up). */
        void sample() {
            Phase p = current;
            if (p == null) {
                return;
            }
            long rss = rss();
            Metrics m = scrape();
            p.record(rss, m);
        }

        Metrics scrape() {
            try {
                HttpResponse<String> r = HTTP.send(metricsRequest, HttpResponse.BodyHandlers.ofString());
                if (r.statusCode() != 200) {
                    return Metrics.NONE;
                }
                long heap = 0;
                long old = 0;
                long max = 0;
                long live = -1;
                double gcCount = 0;
                double gcSec = 0;
                for (String line : r.body().split("\n")) {
                    if (line.startsWith("jvm_memory_used_bytes{") && line.contains("area=\"heap\"")) {
                        long v = value(line);
                        heap += v;
                        if (line.contains("Tenured") || line.contains("Old Gen")) {
                            old += v;
                        }
                    } else if (line.startsWith("jvm_memory_max_bytes{") && line.contains("area=\"heap\"")) {
                        long v = value(line);
                        if (v > 0) {
                            max += v;
                        }
                    } else if (line.startsWith("jvm_gc_live_data_size_bytes")) {
                        live = value(line);
                    } else if (line.startsWith("jvm_gc_pause_seconds_count")) {
                        gcCount += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
                    } else if (line.startsWith("jvm_gc_pause_seconds_sum")) {
                        gcSec += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
                    }
                }
                return new Metrics(heap, old, live, max, gcCount, gcSec);
            } catch (IOException e) {
                return Metrics.NONE;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return Metrics.NONE;
            }
        }

        private static long value(String line) {
            return (long) Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
        }

        long rss() {
            return ProcStats.statusBytes(pid, "VmRSS:");
        }

        long hwm() {
            return ProcStats.statusBytes(pid, "VmHWM:");
        }

        CpuTimes cpu() {
            CpuTimes c = new CpuTimes();
            c.server = ProcStats.processCpuSeconds(serverPid);
            c.s3 = ProcStats.processCpuSeconds(s3Pid);
            c.bench = ProcStats.processCpuSeconds(ProcessHandle.current().pid());
            Map<Long, String> postgres = POSTMASTER_PID > 0 ? ProcStats.postgresStats(POSTMASTER_PID) : null;
            if (postgres == null) {
                c.postgres = Double.NaN;
            } else {
                for (Map.Entry<Long, String> e : postgres.entrySet()) {
                    c.postgres += ProcStats.cpuSeconds(e.getValue());
                    if (e.getKey() == POSTMASTER_PID) {
                        // plus the time of exited, reaped backends (cutime/cstime)
                        c.postgres += ProcStats.childCpuSeconds(e.getValue());
                    }
                }
            }
            return c;
        }
    }

    // ============================================================================================ helpers

    private static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    private static String summarize(Message m) {
        StringBuilder b = new StringBuilder();
        for (Frame f : m.frames()) {
            b.append(b.length() == 0 ? "" : ", ")
                    .append(
                            f instanceof SegmentRef r
                                    ? "SegmentRef(" + r.mediaType() + ", " + r.rowCount() + " rows)"
                                    : f.getClass().getSimpleName());
        }
        return b.toString();
    }

    private static String host(String url) {
        URI u = URI.create(url);
        return u.getScheme() + "://" + u.getAuthority() + u.getPath().replaceAll("[0-9a-f]{64}", "<sha256>")
                + " presigned";
    }

    private static String cpuModel() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/cpuinfo"))) {
                if (line.startsWith("model name")) {
                    return line.substring(line.indexOf(':') + 1).trim();
                }
            }
        } catch (IOException e) {
            // fall through
        }
        return "unknown CPU";
    }

    private static String loadAverage() {
        String s = ProcStats.read(Path.of("/proc/loadavg"));
        return s == null ? "?" : String.join(" ", Arrays.copyOf(s.trim().split(" "), 3));
    }

    private static String mb(long bytes) {
        return bytes < 0 ? "n/a" : String.format(Locale.ROOT, "%.0f MB", bytes / 1048576.0);
    }

    private static void deleteTree(Path dir) {
        try (var walk = Files.walk(dir)) {
            walk.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException ignored) {
            // temp files left behind are harmless
        }
    }
}
