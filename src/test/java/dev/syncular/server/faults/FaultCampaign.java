package dev.syncular.server.faults;

import static org.junit.jupiter.api.Assertions.fail;

import dev.syncular.server.testsupport.CampaignClient;
import dev.syncular.server.testsupport.FaultSchedule;
import dev.syncular.server.testsupport.HttpTransport;
import dev.syncular.server.testsupport.PodClocks;
import dev.syncular.server.testsupport.RestartableS3;
import dev.syncular.server.testsupport.ScheduleShrinker;
import dev.syncular.server.testsupport.ServerProcess;
import dev.syncular.server.testsupport.SyncTestClient;
import dev.syncular.server.wire.CommitStatus;
import dev.syncular.server.wire.PushResult;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;

/**
 * One seed's fault campaign on a {@link CampaignDeployment} ({@link FaultCampaignIT}, {@link FailoverCampaignIT}):
 * {@value #CLIENTS} simulated clients ({@link CampaignClient}) working against both pods while a {@link FaultSchedule}
 * drawn from the seed injects the pods' and clients' faults and the ones its database can be put through; then
 * quiescence and the invariants (FaultCampaignIT's documentation).
 */
final class FaultCampaign {
    static final int CLIENTS = 8;
    static final Duration READY_BOUND = Duration.ofSeconds(30);
    private static final Duration WAIT = Duration.ofSeconds(120);
    private static final Path SAMPLES = Path.of("target", "it-logs", "campaign-samples.log");
    private static final HttpClient HTTP =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    /** The faults of the pods and the clients, which every campaign injects (the database adds its own). */
    private static final Set<FaultSchedule.Kind> POD_AND_CLIENT_FAULTS = EnumSet.of(
            FaultSchedule.Kind.KILL_POD,
            FaultSchedule.Kind.KILL_LISTEN,
            FaultSchedule.Kind.DROP_RESPONSE,
            FaultSchedule.Kind.CUT_SOCKET);

    final CampaignDeployment d;
    final long seed;
    final String partition;
    final List<CampaignClient> clients = new ArrayList<>();
    final FaultSchedule schedule;
    final CountDownLatch stop = new CountDownLatch(1);
    final AtomicLong attempts = new AtomicLong();
    final Object progress = new Object();
    final List<Throwable> crashes = Collections.synchronizedList(new ArrayList<>());
    final List<String> violations = new ArrayList<>();
    final long began = System.nanoTime();
    long readinessMaxMs;
    long bootMaxMs;
    /** The longest database failover ({@code FAILOVER}, {@code KILL_PRIMARY}) until the new primary took a write. */
    long failoverMaxMs;
    /** Rounds answered 429 from a failover's start until every pod was ready again, summed over the failovers. */
    int rateLimitedInFailovers;

    /** The steps in the order they were drawn, the one under way when the campaign failed included. */
    final List<FaultSchedule.Step> drawn = Collections.synchronizedList(new ArrayList<>());

    /**
     * Seed {@code seed}'s campaign on {@code d}, or the steps of {@code -Dcampaign.replay}; when it fails, the
     * failure names the shortest schedule found that still fails ({@link #shrunk}).
     */
    static void run(CampaignDeployment d, long seed) throws Exception {
        FaultCampaign campaign =
                new FaultCampaign(d, seed, FaultSchedule.parseReplay(System.getProperty("campaign.replay", "")));
        try {
            campaign.run();
        } catch (AssertionError failure) {
            throw shrunk(d, seed, campaign.drawn, failure);
        }
    }

    /**
     * The failure of a campaign that executed {@code steps}, with the shortest schedule of them found that still fails
     * ({@link ScheduleShrinker}: each step alone, then each left out in turn, each candidate replayed as a whole campaign
     * of the same seed on the same deployment) within {@code -Dcampaign.shrinkMinutes} (default 10; 0: no shrinking),
     * and the {@code -Dcampaign.replay} value that replays it.
     */
    static AssertionError shrunk(
            CampaignDeployment d, long seed, List<FaultSchedule.Step> steps, AssertionError failure) {
        double minutes = Double.parseDouble(System.getProperty("campaign.shrinkMinutes", "10"));
        List<FaultSchedule.Step> failed = List.copyOf(steps);
        if (minutes <= 0 || failed.size() <= 1) {
            return failure;
        }
        long deadline = System.nanoTime() + (long) (minutes * 60_000_000_000L);
        AtomicLong replays = new AtomicLong();
        List<FaultSchedule.Step> shortest = ScheduleShrinker.shrink(
                failed,
                candidate -> {
                    replays.incrementAndGet();
                    String replay = FaultSchedule.replayProperty(candidate);
                    try {
                        new FaultCampaign(d, seed, candidate).run();
                        System.out.println("campaign shrink: passes with " + candidate.size() + " step(s) " + replay);
                        return false;
                    } catch (Exception | AssertionError e) {
                        System.out.println("campaign shrink: fails with " + candidate.size() + " step(s) " + replay);
                        return true;
                    }
                },
                () -> System.nanoTime() < deadline);
        StringBuilder sb = new StringBuilder(failure.getMessage())
                .append("\nshortest schedule found that fails (")
                .append(replays)
                .append(" replays, ")
                .append(failed.size())
                .append(" → ")
                .append(shortest.size())
                .append(" steps): reproduce with -Dcampaign.seed=")
                .append(seed)
                .append(" -Dcampaign.replay=")
                .append(FaultSchedule.replayProperty(shortest))
                .append('\n');
        shortest.forEach(step -> sb.append("  ").append(step.describe()).append('\n'));
        return new AssertionError(sb.toString(), failure);
    }

    FaultCampaign(CampaignDeployment d, long seed, List<FaultSchedule.Step> replay) {
        this.d = d;
        this.seed = seed;
        this.partition = "campaign-" + seed + "-" + UUID.randomUUID().toString().substring(0, 8);
        List<Integer> socketClients = new ArrayList<>();
        List<String> urls = List.of("http://127.0.0.1:" + d.ports[0], "http://127.0.0.1:" + d.ports[1]);
        for (int i = 0; i < CLIENTS; i++) {
            boolean socket = i % 3 == 2;
            if (socket) {
                socketClients.add(i);
            }
            clients.add(new CampaignClient(d.schema, i, socket, seed, urls, partition));
        }
        Set<FaultSchedule.Kind> kinds = EnumSet.copyOf(POD_AND_CLIENT_FAULTS);
        kinds.addAll(d.db.faults());
        if (d.s3.isPresent()) {
            kinds.add(FaultSchedule.Kind.STOP_S3);
        }
        if (d.clocks.isPresent()) {
            kinds.add(FaultSchedule.Kind.CLOCK_STEP);
        }
        this.schedule = new FaultSchedule(
                seed, 2, CLIENTS, socketClients, Integer.getInteger("campaign.sparedPod", -1), kinds, replay);
    }

    /** {@code -Dcampaign.seed=N[,M…]}, else {@code defaults}. */
    static Stream<Long> seeds(Long... defaults) {
        String property = System.getProperty("campaign.seed", "");
        if (property.isBlank()) {
            return Stream.of(defaults);
        }
        return Arrays.stream(property.split(",")).map(String::trim).map(Long::parseLong);
    }

    long elapsedMs() {
        return (System.nanoTime() - began) / 1_000_000;
    }

    void run() throws Exception {
        ensureUp();
        readinessMaxMs = 0;
        long[] rssStart = {d.pods.get(0).rssBytes(), d.pods.get(1).rssBytes()};
        sample("start");
        String minutesProperty = schedule.replaying() ? "" : System.getProperty("campaign.minutes", "");
        double minutes = minutesProperty.isBlank() ? 0 : Double.parseDouble(minutesProperty);
        int steps =
                schedule.replaying() ? schedule.planned() : Integer.getInteger("campaign.steps", schedule.planned());
        List<Thread> threads = new ArrayList<>();
        for (CampaignClient c : clients) {
            Thread t = new Thread(() -> work(c), "campaign-client-" + c.index);
            threads.add(t);
            t.start();
        }
        Thread sampler = null;
        if (minutes > 0) {
            sampler = new Thread(this::sampleEvery30s, "campaign-sampler");
            sampler.setDaemon(true);
            sampler.start();
        }
        try {
            long deadline = began + (long) (minutes * 60_000_000_000L);
            for (int i = 0; minutes > 0 ? System.nanoTime() < deadline : i < steps; i++) {
                FaultSchedule.Step step = schedule.next();
                drawn.add(step);
                awaitAttempts(step.gapRounds());
                execute(step);
            }
            awaitAttempts(3L * CLIENTS);
        } catch (Throwable t) {
            stop.countDown();
            for (Thread th : threads) {
                th.join(WAIT.toMillis());
            }
            closeClients();
            throw new AssertionError("the campaign failed: " + t + "\n" + schedule.render() + clientStats(), t);
        }
        stop.countDown();
        for (Thread t : threads) {
            t.join(WAIT.toMillis());
        }
        if (sampler != null) {
            sampler.interrupt();
        }
        if (!crashes.isEmpty()) {
            closeClients();
            AssertionError e = new AssertionError(
                    "a client crashed: " + crashes.get(0) + "\n" + schedule.render() + clientStats(), crashes.get(0));
            crashes.forEach(e::addSuppressed);
            throw e;
        }
        try {
            quiesce();
        } catch (Throwable t) {
            closeClients();
            throw new AssertionError("quiescence failed: " + t + "\n" + schedule.render() + clientStats(), t);
        }
        int commits = checkCommitLog();
        int resent = 0;
        checkRows();
        int deliveries = checkDeliveries();
        for (CampaignClient c : clients) {
            resent += c.resendAcknowledged(c.index % 2, 20);
        }
        int after = checkCommitLog();
        if (after != commits) {
            violations.add("resending acknowledged commits changed the log: " + commits + " → " + after);
        }
        if (d.s3.isPresent() && sum(CampaignClient::segmentsFetched) == 0) {
            violations.add("no bootstrap went through S3: no referenced segment was fetched");
        }
        if (readinessMaxMs > READY_BOUND.toMillis()) {
            violations.add("readiness took " + readinessMaxMs + " ms after a fault (bound " + READY_BOUND + ")");
        }
        for (CampaignClient c : clients) {
            for (String v : c.violations) {
                violations.add("client " + c.index + ": " + v);
            }
        }
        closeClients();
        sample("end");
        long[] rssEnd = {d.pods.get(0).rssBytes(), d.pods.get(1).rssBytes()};
        System.out.println(summary(commits, resent, rssStart, rssEnd) + deliverySummary(deliveries));
        System.out.print(schedule.render());
        if (!violations.isEmpty()) {
            fail(violations.size() + " invariant(s) broken:\n  " + String.join("\n  ", violations) + "\n"
                    + schedule.render() + clientStats());
        }
    }

    // ----------------------------------------------------------------------------------------- clients

    void work(CampaignClient c) {
        try {
            while (stop.getCount() > 0) {
                boolean ok = c.work();
                synchronized (progress) {
                    attempts.incrementAndGet();
                    progress.notifyAll();
                }
                // think time, or the retry's backoff; the end of the campaign cuts it short
                // (short enough for hundreds of rounds per seed, long enough that a pod boots beside them on 2
                // cores)
                stop.await(ok ? 15 + c.index * 5L : 150 + 25L * c.index, TimeUnit.MILLISECONDS);
            }
        } catch (Throwable t) {
            crashes.add(new AssertionError("client " + c.index + " crashed", t));
            synchronized (progress) {
                progress.notifyAll();
            }
        }
    }

    /** Blocks until the clients made {@code more} further round attempts (a signal from them). */
    void awaitAttempts(long more) throws InterruptedException {
        long target = attempts.get() + more;
        long end = System.nanoTime() + WAIT.toNanos();
        synchronized (progress) {
            while (attempts.get() < target) {
                long left = end - System.nanoTime();
                if (left <= 0 || !crashes.isEmpty()) {
                    throw new AssertionError("the clients stalled at " + attempts.get() + " attempts (wanted " + target
                            + "); crashes " + crashes);
                }
                progress.wait(Math.max(1, left / 1_000_000));
            }
        }
    }

    void closeClients() {
        clients.forEach(CampaignClient::close);
    }

    String clientStats() {
        StringBuilder sb = new StringBuilder("clients:\n");
        for (CampaignClient c : clients) {
            sb.append(String.format(
                    "  #%d %s rounds %d, failed %d %s, acked %d, outbox %d, cached checks %d, drops %d, cuts %d%n",
                    c.index,
                    c.socket ? "socket" : "http  ",
                    c.rounds,
                    c.failedRounds,
                    c.failures,
                    c.acked.size(),
                    c.client.outbox.size(),
                    c.cachedChecks,
                    c.drops,
                    c.cuts));
            c.lastFailure.forEach((k, m) ->
                    sb.append("      last ").append(k).append(": ").append(m).append('\n'));
        }
        return sb.toString();
    }

    // ----------------------------------------------------------------------------------------- faults

    void execute(FaultSchedule.Step step) throws Exception {
        long at = elapsedMs();
        String outcome = switch (step.kind()) {
            case KILL_POD -> killPod(step);
            case RESTART_PG -> restartPostgres(step);
            case KILL_LISTEN -> killListen(step);
            case START_POD_WHILE_PG_DOWN -> startPodWhilePostgresDown(step);
            case DROP_RESPONSE -> {
                // two responses of each client: the retry of a dropped retry is answered cached too
                step.clients().forEach(i -> {
                    clients.get(i).armDrop();
                    clients.get(i).armDrop();
                });
                yield "armed 2 drops each";
            }
            case CUT_SOCKET -> "cut " + clients.get(step.clients().get(0)).cutSockets() + " socket(s)";
            case FAILOVER -> failover();
            case KILL_PRIMARY -> killPrimary(step);
            case PAUSE_REPLAY -> pauseReplay(step);
            case STOP_S3 -> stopS3(step);
            case CLOCK_STEP -> clockStep(step);
        };
        schedule.executed(step, at, elapsedMs() - at, outcome);
        if (step.kind().name().equals(System.getProperty("campaign.seededDefect", ""))) {
            // the harness's own check (-Dcampaign.seededDefect=KIND): a campaign that executes this kind fails, so
            // the shrinking must end at that one step
            violations.add("seeded defect: step #" + step.index() + " " + step.kind() + " executed");
        }
    }

    String killPod(FaultSchedule.Step step) throws Exception {
        int p = step.pod();
        long pid = d.pods.get(p).pid();
        d.pods.get(p).kill();
        awaitAttempts(step.downRounds());
        long t0 = System.nanoTime();
        d.pods.set(p, d.pod(p).start());
        long boot = sinceMs(t0);
        bootMaxMs = Math.max(bootMaxMs, boot);
        return "killed pid " + pid + ", restarted in " + boot + " ms; " + awaitAllReady();
    }

    String restartPostgres(FaultSchedule.Step step) throws Exception {
        d.db.stop();
        d.dbUp = false;
        awaitAttempts(step.downRounds());
        d.db.startAgain();
        d.dbUp = true;
        return "stopped and started again; " + awaitAllReady();
    }

    /**
     * Replay paused on the pods' replica for {@code downRounds} attempts: the rounds during the pause (attempts, failed
     * ones) and the replica's outcomes over the pause ({@code syncular_replica_reads_total} deltas: {@code served}
     * by the replica as of its paused state, {@code behind} or {@code unavailable} read on the primary), then the
     * same after the resume until the replica served again (back in rotation).
     */
    String pauseReplay(FaultSchedule.Step step) throws Exception {
        Map<String, Long> before = d.replicaReads();
        long attempts0 = attempts.get();
        int failed0 = failedRounds();
        d.db.pauseReplay();
        awaitAttempts(step.downRounds());
        Map<String, Long> paused = d.replicaReads();
        long during = attempts.get() - attempts0;
        int failedDuring = failedRounds() - failed0;
        d.db.resumeReplay();
        long t0 = System.nanoTime();
        long deadline = t0 + READY_BOUND.toNanos();
        Map<String, Long> after = paused;
        while (after.getOrDefault("served", 0L) <= paused.getOrDefault("served", 0L)) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError(
                        "the replica served no round within " + READY_BOUND + " of the resume: " + after);
            }
            awaitAttempts(1);
            after = d.replicaReads();
        }
        return "paused for " + during + " attempts (" + failedDuring + " failed), replica reads during the pause "
                + delta(before, paused) + "; resumed, served again after " + sinceMs(t0) + " ms "
                + delta(paused, after) + "; " + awaitAllReady();
    }

    /**
     * Pod {@code step.pod()}'s wall clock stepped ten minutes ahead (an even {@code downRounds}) or back (an odd one)
     * for {@code downRounds} attempts, then set right (an NTP step and its correction: a jump each way): the rounds meanwhile may fail and be
     * retried, none may be answered 500, and the invariants hold after quiescence (commit order, cursors and
     * retries do not read the clock).
     */
    String clockStep(FaultSchedule.Step step) throws Exception {
        PodClocks clocks = d.clocks.orElseThrow();
        Duration offset = Duration.ofMinutes(step.downRounds() % 2 == 0 ? 10 : -10);
        long attempts0 = attempts.get();
        int failed0 = failedRounds();
        int errors0 = sum(c -> c.serverErrors.get());
        clocks.step(step.pod(), offset);
        awaitAttempts(step.downRounds());
        long during = attempts.get() - attempts0;
        int failedDuring = failedRounds() - failed0;
        clocks.step(step.pod(), Duration.ZERO);
        int errors = sum(c -> c.serverErrors.get()) - errors0;
        if (errors > 0) {
            violations.add("step #" + step.index() + " CLOCK_STEP: " + errors + " round(s) answered 5xx");
        }
        return "pod " + step.pod() + " at " + offset + " for " + during + " attempts (" + failedDuring + " failed, "
                + errors + " 5xx); set right; " + awaitAllReady();
    }

    /**
     * The pods' S3 stand-in stopped for {@code downRounds} attempts, then started again on the same port with the
     * same objects: the rounds meanwhile (failed ones: fetching a segment from S3, answered 429, other), none may be
     * answered 500; then the time until a client fetched a segment from S3 again.
     */
    String stopS3(FaultSchedule.Step step) throws Exception {
        RestartableS3 s3 = d.s3.orElseThrow();
        long objects = s3.objects();
        long attempts0 = attempts.get();
        int failed0 = failedRounds();
        int s3Failed0 = sum(c -> c.s3Failures.get());
        int limited0 = rateLimited();
        int errors0 = sum(c -> c.serverErrors.get());
        long fetches0 = sum(CampaignClient::segmentsFetched);
        clients.forEach(c -> c.lastRateLimited = "");
        long t0 = System.nanoTime();
        s3.stop();
        awaitAttempts(step.downRounds());
        long restart = System.nanoTime();
        // the outage lasts until the stand-in answers again: its start (a JVM) is part of it
        s3.startAgain();
        long back = System.nanoTime();
        long objectsBack = s3.objects();
        long during = attempts.get() - attempts0;
        int failedDuring = failedRounds() - failed0;
        int s3Failed = sum(c -> c.s3Failures.get()) - s3Failed0;
        int limited = rateLimited() - limited0;
        int errors = sum(c -> c.serverErrors.get()) - errors0;
        java.util.Set<String> reasons = new java.util.TreeSet<>();
        for (CampaignClient c : clients) {
            java.util.regex.Matcher reason =
                    java.util.regex.Pattern.compile("\"reason\":\"([a-z_]+)\"").matcher(c.lastRateLimited);
            if (reason.find()) {
                reasons.add(reason.group(1));
            }
        }
        long fetches1 = sum(CampaignClient::segmentsFetched);
        long deadline = back + READY_BOUND.toNanos();
        while (sum(CampaignClient::segmentsFetched) <= fetches1) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("no segment fetched within " + READY_BOUND + " of the S3 stand-in's restart");
            }
            awaitAttempts(1);
        }
        if (errors > 0) {
            violations.add(
                    "step #" + step.index() + " STOP_S3: " + errors + " round(s) answered 5xx during the outage");
        }
        return "down " + (back - t0) / 1_000_000 + " ms (" + (back - restart) / 1_000_000 + " ms of it its restart;"
                + " objects " + objects + " before, " + objectsBack + " after), " + during + " attempts meanwhile, "
                + failedDuring
                + " failed (" + s3Failed + " fetching a segment from its presigned URL, " + limited
                + " answered 429, last reasons " + reasons + ", " + errors + " 5xx), " + (fetches1 - fetches0)
                + " segments fetched; a segment fetched " + sinceMs(back) + " ms after it answered again; "
                + awaitAllReady();
    }

    int sum(java.util.function.ToIntFunction<CampaignClient> f) {
        int n = 0;
        for (CampaignClient c : clients) {
            n += f.applyAsInt(c);
        }
        return n;
    }

    static String delta(Map<String, Long> from, Map<String, Long> to) {
        Map<String, Long> out = new TreeMap<>();
        to.forEach((k, v) -> out.put(k, v - from.getOrDefault(k, 0L)));
        return out.toString();
    }

    int failedRounds() {
        int n = 0;
        for (CampaignClient c : clients) {
            n += c.failedRounds;
        }
        return n;
    }

    /**
     * The HA manager's planned failover; the pods follow the new primary through their host list (the old one's
     * connections end with its demotion). Readiness is measured from the new primary's first write.
     */
    String failover() throws Exception {
        return d.db.failover(new Recovery());
    }

    /**
     * The primary node lost: the HA manager promotes the synchronous standby by itself (every acknowledged commit
     * must be on it: invariant 1); the new primary runs alone for {@code downRounds} attempts, then the node is back
     * and rejoins as its standby.
     */
    String killPrimary(FaultSchedule.Step step) throws Exception {
        d.dbUp = false;
        String how = d.db.killPrimary(new Recovery());
        awaitAttempts(step.downRounds());
        long back = System.nanoTime();
        d.db.startAgain();
        d.dbUp = true;
        return how + "; the node rejoined as the standby in " + sinceMs(back) + " ms; " + awaitAllReady();
    }

    /**
     * What a failover step measures once the new primary takes writes (called by the database): the time since the
     * step began (the longest is {@link #failoverMaxMs}), the pods' readiness from there (invariant 5), and the rounds
     * answered 429 from the step's start until every pod was ready.
     */
    final class Recovery implements Callable<String> {
        final long t0 = System.nanoTime();
        final int rateLimitedBefore = rateLimited();

        @Override
        public String call() throws Exception {
            failoverMaxMs = Math.max(failoverMaxMs, sinceMs(t0));
            String ready = awaitAllReady();
            int seen = rateLimited() - rateLimitedBefore;
            rateLimitedInFailovers += seen;
            return ready + " (" + seen + " rounds answered 429 since the step began)";
        }
    }

    int rateLimited() {
        int n = 0;
        for (CampaignClient c : clients) {
            n += c.rateLimited.get();
        }
        return n;
    }

    String killListen(FaultSchedule.Step step) throws Exception {
        int p = step.pod();
        int terminated = d.terminateListen(p);
        String ready = awaitAllReady();
        long t0 = System.nanoTime();
        long deadline = t0 + READY_BOUND.toNanos();
        while (d.listenBackends(p) == 0) {
            if (System.nanoTime() > deadline) {
                violations.add("pod " + p + " did not LISTEN again within " + READY_BOUND + " (" + schedule.seed()
                        + ", step " + step.index() + ")");
                break;
            }
            pause(100);
        }
        return "terminated " + terminated + " LISTEN backend(s); " + ready + "; LISTEN again after " + sinceMs(t0)
                + " ms";
    }

    String startPodWhilePostgresDown(FaultSchedule.Step step) throws Exception {
        int p = step.pod();
        d.pods.get(p).kill();
        d.db.stop();
        d.dbUp = false;
        CompletableFuture<ServerProcess> starting = CompletableFuture.supplyAsync(() -> {
            try {
                return d.pod(p).start();
            } catch (IOException e) {
                throw new IllegalStateException(e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        });
        // until the new pod answers on its port (it booted without its database) or exited
        long deadline = System.nanoTime() + WAIT.toNanos();
        String seen;
        while (true) {
            int status = httpStatus("http://127.0.0.1:" + d.ports[p] + "/q/health/ready");
            if (status > 0) {
                seen = "answered " + status + " while PostgreSQL was down";
                break;
            }
            if (starting.isDone()) {
                seen = "ended its start-up while PostgreSQL was down";
                break;
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("the pod started while PostgreSQL was down neither answered nor exited");
            }
            pause(100);
        }
        awaitAttempts(step.downRounds());
        d.db.startAgain();
        d.dbUp = true;
        long t0 = System.nanoTime();
        String how;
        try {
            d.pods.set(p, starting.get(WAIT.toSeconds(), TimeUnit.SECONDS));
            how = "became ready once PostgreSQL was back";
        } catch (ExecutionException e) {
            // the documented behaviour: a pod may exit when its database is down at start; started again
            String first = String.valueOf(e.getCause().getMessage())
                    .lines()
                    .findFirst()
                    .orElse("");
            how = "exited at start (" + first + "), started again";
            d.pods.set(p, d.pod(p).start());
        }
        long boot = sinceMs(t0);
        bootMaxMs = Math.max(bootMaxMs, boot);
        return "pod " + p + " " + seen + "; " + how + " in " + boot + " ms after PostgreSQL; " + awaitAllReady();
    }

    /** Polls every pod's readiness until each answers 200; the time it took (recorded, bounded by WAIT). */
    String awaitAllReady() throws InterruptedException {
        long t0 = System.nanoTime();
        long deadline = t0 + WAIT.toNanos();
        for (int p = 0; p < 2; p++) {
            ServerProcess pod = d.pods.get(p);
            while (pod.status("/q/health/ready") != 200) {
                if (!pod.alive()) {
                    throw new AssertionError("pod " + p + " died:\n" + tail(pod.log()));
                }
                if (System.nanoTime() > deadline) {
                    throw new AssertionError("pod " + p + " not ready within " + WAIT + ":\n" + tail(pod.log()));
                }
                pause(50);
            }
        }
        long ms = sinceMs(t0);
        readinessMaxMs = Math.max(readinessMaxMs, ms);
        return "all ready after " + ms + " ms";
    }

    /** Both pods up, PostgreSQL up (a failed earlier seed may have left something down). */
    void ensureUp() throws Exception {
        if (!d.dbUp) {
            d.db.startAgain();
            d.dbUp = true;
        }
        for (int p = 0; p < 2; p++) {
            if (!d.pods.get(p).alive()) {
                d.pods.set(p, d.pod(p).start());
            }
        }
        awaitAllReady();
    }

    // ----------------------------------------------------------------------------------------- invariants

    /** Every client's outbox drained, then every client pulled until idle (nothing is pushed any more). */
    void quiesce() throws Exception {
        ensureUp();
        Runnable backoff = () -> pause(200);
        for (CampaignClient c : clients) {
            c.settle(200, backoff);
        }
        for (CampaignClient c : clients) {
            c.settle(200, backoff);
        }
    }

    /** Invariant 1 in SQL; returns the number of commits in the partition's log. */
    int checkCommitLog() throws SQLException {
        Map<String, PushResult> acked = new HashMap<>();
        for (CampaignClient c : clients) {
            acked.putAll(c.acked);
            if (!c.client.outbox.isEmpty()) {
                violations.add("client " + c.index + " still has " + c.client.outbox.size() + " commits queued");
            }
            for (String id : c.queued.keySet()) {
                if (!c.acked.containsKey(id)) {
                    violations.add("commit " + id + " was never acknowledged");
                }
            }
        }
        Map<String, List<Long>> logged = new TreeMap<>();
        Map<String, Integer> stored = new HashMap<>();
        long count;
        long max;
        long partitionMax;
        // §4.6: the scheduled pruning (on in the pods, as in production) removes the commits up to the horizon
        // in a long run; everything after it must be there, dense, exactly once
        long horizon;
        try (Connection db = d.jdbc()) {
            try (PreparedStatement st = db.prepareStatement("SELECT client_commit_id, commit_seq FROM \""
                    + d.storageSchema + "\".sync_commits WHERE partition_id = ?")) {
                st.setString(1, partition);
                try (ResultSet rs = st.executeQuery()) {
                    while (rs.next()) {
                        logged.computeIfAbsent(rs.getString(1), k -> new ArrayList<>())
                                .add(rs.getLong(2));
                    }
                }
            }
            try (PreparedStatement st = db.prepareStatement("SELECT count(*), coalesce(max(commit_seq), 0),"
                    + " (SELECT max_commit_seq FROM \"" + d.storageSchema
                    + "\".sync_partitions WHERE partition_id = ?),"
                    + " (SELECT horizon_seq FROM \"" + d.storageSchema + "\".sync_partitions WHERE partition_id = ?)"
                    + " FROM \"" + d.storageSchema + "\".sync_commits WHERE partition_id = ?")) {
                st.setString(1, partition);
                st.setString(2, partition);
                st.setString(3, partition);
                try (ResultSet rs = st.executeQuery()) {
                    rs.next();
                    count = rs.getLong(1);
                    max = rs.getLong(2);
                    partitionMax = rs.getLong(3);
                    horizon = rs.getLong(4);
                }
            }
            try (PreparedStatement st = db.prepareStatement("SELECT client_commit_id, status FROM \"" + d.storageSchema
                    + "\".sync_push_results WHERE partition_id = ?")) {
                st.setString(1, partition);
                try (ResultSet rs = st.executeQuery()) {
                    while (rs.next()) {
                        stored.put(rs.getString(1), rs.getInt(2));
                    }
                }
            }
        }
        if (count != max - horizon || max != partitionMax) {
            violations.add("commit log not dense: " + count + " commits, max seq " + max + ", partition max "
                    + partitionMax + ", pruned through " + horizon);
        }
        for (Map.Entry<String, PushResult> e : acked.entrySet()) {
            PushResult r = e.getValue();
            List<Long> seqs = logged.getOrDefault(e.getKey(), List.of());
            if (r.status() == CommitStatus.REJECTED) {
                if (!seqs.isEmpty()) {
                    violations.add("rejected " + e.getKey() + " is in the log at " + seqs);
                }
            } else if (!seqs.equals(List.of(r.commitSeq())) && !(seqs.isEmpty() && r.commitSeq() <= horizon)) {
                violations.add("acknowledged " + e.getKey() + " (" + r.status() + " seq " + r.commitSeq()
                        + ") is in the log " + seqs.size() + " time(s): " + seqs);
            }
            if (!stored.containsKey(e.getKey())) {
                violations.add("no idempotency record for acknowledged " + e.getKey());
            }
        }
        for (String id : logged.keySet()) {
            if (!acked.containsKey(id)) {
                violations.add("commit " + id + " is in the log but was never acknowledged to its client");
            }
        }
        if (horizon > 0) {
            System.out.println("campaign: the log was pruned through seq " + horizon + " of " + max);
        }
        return (int) count;
    }

    /**
     * Invariant 6: each client that stayed subscribed to a list applied every commit of the partition's log changing
     * a row of that list after its subscription's bootstrap, exactly once and in order ({@link
     * CampaignClient#checkDeliveries}); the subscriptions checked.
     */
    int checkDeliveries() throws SQLException {
        Map<String, java.util.NavigableSet<Long>> byList = new HashMap<>();
        long horizon;
        try (Connection db = d.jdbc()) {
            for (String list : CampaignClient.LISTS) {
                java.util.NavigableSet<Long> seqs = new java.util.TreeSet<>();
                try (PreparedStatement st = db.prepareStatement("SELECT DISTINCT commit_seq FROM \"" + d.storageSchema
                        + "\".sync_changes WHERE partition_id = ? AND tbl = 'todos'"
                        + " AND scopes -> 'list_id' @> to_jsonb(?::text)")) {
                    st.setString(1, partition);
                    st.setString(2, list);
                    try (ResultSet rs = st.executeQuery()) {
                        while (rs.next()) {
                            seqs.add(rs.getLong(1));
                        }
                    }
                }
                byList.put(list, seqs);
            }
            try (PreparedStatement st = db.prepareStatement("SELECT coalesce(max(horizon_seq), 0) FROM \""
                    + d.storageSchema + "\".sync_partitions WHERE partition_id = ?")) {
                st.setString(1, partition);
                try (ResultSet rs = st.executeQuery()) {
                    rs.next();
                    horizon = rs.getLong(1);
                }
            }
        }
        if (byList.values().stream().allMatch(java.util.Set::isEmpty)) {
            violations.add("no commit of the log changes a list (the scopes query found none)");
        }
        int checked = 0;
        for (CampaignClient c : clients) {
            for (String v : c.checkDeliveries(byList, horizon)) {
                violations.add("client " + c.index + ": " + v);
            }
            checked += c.deliveriesChecked;
        }
        return checked;
    }

    /** Invariant 3: each client's rows are the server's rows of its lists; a fresh bootstrap is all of them. */
    void checkRows() throws SQLException {
        Map<String, String> server = new TreeMap<>();
        try (Connection db = d.jdbc();
                PreparedStatement st = db.prepareStatement(
                        "SELECT _sync_row_id, _sync_server_version, list_id, title, done, position, updated_at_ms"
                                + " FROM \"" + d.storageSchema + "\".sync_rows_todos WHERE _sync_partition = ?")) {
            st.setString(1, partition);
            try (ResultSet rs = st.executeQuery()) {
                while (rs.next()) {
                    server.put(
                            rs.getString(1),
                            rs.getLong(2) + "|" + rs.getString(3) + "|" + rs.getString(4) + "|" + rs.getBoolean(5) + "|"
                                    + rs.getLong(6) + "|" + rs.getLong(7));
                }
            }
        }
        for (CampaignClient c : clients) {
            List<String> lists = c.subscribedLists();
            Map<String, String> expected = new TreeMap<>(server);
            expected.values().removeIf(v -> !lists.contains(v.split("\\|")[1]));
            Map<String, String> local = c.localRows();
            if (!local.equals(expected)) {
                violations.add("client " + c.index + " (lists " + lists + ") differs from the server: "
                        + difference(local, expected));
            }
        }
        SyncTestClient fresh = new SyncTestClient(
                d.schema,
                new HttpTransport("http://127.0.0.1:" + d.ports[(int) (seed % 2)], partition),
                "fresh",
                "fresh-" + partition);
        for (String list : CampaignClient.LISTS) {
            fresh.subscribe("s-" + list, "todos", Map.of("list_id", List.of(list)));
        }
        fresh.syncUntilIdle();
        Map<String, String> bootstrapped = CampaignClient.render(fresh);
        if (!bootstrapped.equals(server)) {
            violations.add("a fresh client's bootstrap differs from the server: " + difference(bootstrapped, server));
        }
    }

    static String difference(Map<String, String> local, Map<String, String> server) {
        List<String> out = new ArrayList<>();
        for (Map.Entry<String, String> e : server.entrySet()) {
            String mine = local.get(e.getKey());
            if (!e.getValue().equals(mine)) {
                out.add(e.getKey() + " server " + e.getValue() + " local " + mine);
            }
        }
        for (String id : local.keySet()) {
            if (!server.containsKey(id)) {
                out.add(id + " only local " + local.get(id));
            }
        }
        return out.size() + " row(s): " + String.join("; ", out.subList(0, Math.min(10, out.size())));
    }

    String deliverySummary(int subscriptions) {
        return String.format(
                "; deliveries: %d subscriptions checked (%d commits applied since their bootstraps, compared with the"
                        + " log), %d bootstraps, %d commits applied incrementally in all",
                subscriptions, sum(c -> c.commitsCompared), sum(c -> c.bootstraps), sum(c -> c.appliedCommits));
    }

    String summary(int commits, int resent, long[] rssStart, long[] rssEnd) {
        int rounds = 0;
        int failed = 0;
        int retried = 0;
        int cached = 0;
        int rejected = 0;
        int drops = 0;
        Map<String, Integer> failures = new TreeMap<>();
        for (CampaignClient c : clients) {
            rounds += c.rounds;
            failed += c.failedRounds;
            retried += c.retriedCommits;
            cached += c.cachedChecks;
            drops += c.drops;
            c.failures.forEach((k, n) -> failures.merge(k, n, Integer::sum));
            rejected += (int) c.acked.values().stream()
                    .filter(r -> r.status() == CommitStatus.REJECTED)
                    .count();
        }
        String failovers = failoverMaxMs == 0
                ? ""
                : String.format(
                        "; failover max %d ms (until the new primary took a write), %d rounds answered 429 from the"
                                + " failovers' start until every pod was ready",
                        failoverMaxMs, rateLimitedInFailovers);
        String s3 = d.s3.isEmpty()
                ? ""
                : String.format(
                        "; segments fetched (S3 store) %d, from presigned URLs %d, objects in its bucket %d, rounds answered 5xx %d",
                        sum(CampaignClient::segmentsFetched),
                        sum(c -> c.client.urlFetches),
                        d.s3.get().objects(),
                        sum(c -> c.serverErrors.get()));
        return String.format(
                        "campaign seed=%d %.1fs faults[%s] commits checked %d in the log + %d rejected, %d resent cached;"
                                + " rounds %d, failed %d %s, retried commits %d, dropped responses %d (retries cached %d);"
                                + " readiness recovery max %d ms, pod boot max %d ms; RSS a %s → %s MiB, b %s → %s MiB",
                        seed,
                        elapsedMs() / 1000.0,
                        schedule.countsByKind(),
                        commits,
                        rejected,
                        resent,
                        rounds,
                        failed,
                        failures,
                        retried,
                        drops,
                        cached,
                        readinessMaxMs,
                        bootMaxMs,
                        mib(rssStart[0]),
                        mib(rssEnd[0]),
                        mib(rssStart[1]),
                        mib(rssEnd[1]))
                + failovers
                + s3;
    }

    // ----------------------------------------------------------------------------------------- sampling

    void sampleEvery30s() {
        try {
            while (!stop.await(30, TimeUnit.SECONDS)) {
                sample("run");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** One line per pod: RSS and open file descriptors, to the output and {@link #SAMPLES}. */
    void sample(String phase) {
        StringBuilder sb = new StringBuilder();
        for (int p = 0; p < 2; p++) {
            ServerProcess pod = d.pods.get(p);
            sb.append(String.format(
                    "campaign-sample seed=%d t=%ds phase=%s pod=%c pid=%d alive=%b rss_mib=%s fds=%d%n",
                    seed,
                    elapsedMs() / 1000,
                    phase,
                    (char) ('a' + p),
                    pod.pid(),
                    pod.alive(),
                    mib(pod.rssBytes()),
                    openFds(pod.pid())));
        }
        System.out.print(sb);
        try {
            Files.createDirectories(SAMPLES.getParent());
            Files.writeString(SAMPLES, sb, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        } catch (IOException e) {
            System.out.println("campaign-sample: could not write " + SAMPLES + ": " + e);
        }
    }

    // ----------------------------------------------------------------------------------------- helpers

    static int httpStatus(String url) {
        try {
            return HTTP.send(
                            HttpRequest.newBuilder(URI.create(url))
                                    .timeout(Duration.ofSeconds(2))
                                    .GET()
                                    .build(),
                            HttpResponse.BodyHandlers.discarding())
                    .statusCode();
        } catch (IOException e) {
            return -1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return -1;
        }
    }

    /** A GET's body, or "" when it does not answer 200. */
    static String httpBody(String url) {
        try {
            HttpResponse<String> r = HTTP.send(
                    HttpRequest.newBuilder(URI.create(url))
                            .timeout(Duration.ofSeconds(2))
                            .GET()
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            return r.statusCode() == 200 ? r.body() : "";
        } catch (IOException e) {
            return "";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "";
        }
    }

    static long openFds(long pid) {
        try (Stream<Path> fds = Files.list(Path.of("/proc/" + pid + "/fd"))) {
            return fds.count();
        } catch (IOException e) {
            return -1;
        }
    }

    /** Signalled by nothing: the pause between two polls of a condition (readiness, a port, a LISTEN backend). */
    private static final CountDownLatch POLL = new CountDownLatch(1);

    static void pause(long ms) {
        try {
            POLL.await(ms, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    static long sinceMs(long t0) {
        return (System.nanoTime() - t0) / 1_000_000;
    }

    static String mib(long bytes) {
        return bytes < 0 ? "-" : Long.toString(bytes >> 20);
    }

    static String tail(String log) {
        return log.length() > 4000 ? log.substring(log.length() - 4000) : log;
    }
}
