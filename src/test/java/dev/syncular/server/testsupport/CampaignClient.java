package dev.syncular.server.testsupport;

import dev.syncular.server.cli.HttpFailure;
import dev.syncular.server.cli.Subscription;
import dev.syncular.server.schema.CompiledSchema;
import dev.syncular.server.wire.CommitFrame;
import dev.syncular.server.wire.CommitStatus;
import dev.syncular.server.wire.ErrorFrame;
import dev.syncular.server.wire.Frame;
import dev.syncular.server.wire.Message;
import dev.syncular.server.wire.MessageDecoder;
import dev.syncular.server.wire.Op;
import dev.syncular.server.wire.PullHeader;
import dev.syncular.server.wire.PushCommit;
import dev.syncular.server.wire.PushOperation;
import dev.syncular.server.wire.PushResult;
import dev.syncular.server.wire.RespHeader;
import dev.syncular.server.wire.SegmentInline;
import dev.syncular.server.wire.SegmentRef;
import dev.syncular.server.wire.SubEnd;
import dev.syncular.server.wire.SubStart;
import dev.syncular.server.wire.SubscriptionStatus;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * A simulated client of the fault campaign ({@code faults.FaultCampaignIT}): a {@link SyncTestClient} doing random work
 * drawn from its own {@link Random} — new rows, edits and deletes with base versions (conflicting edits on a few shared
 * rows), offline outboxes of several commits synced at once, subscriptions added and removed — each round sent to a
 * random pod over HTTP or over the realtime socket (§8.7). A failed round (refused connection, 5xx, 429, a cut
 * socket, an in-band {@code ERROR}, a response the campaign discards) leaves the outbox as it was: the next round
 * retries the same commits (§2.3, §7.2).
 *
 * <p>It checks as it goes: one result per commit; a commit whose result was discarded is answered {@code cached} with
 * the same commit sequence number (or rejected again) on its retry; no subscription cursor ever goes back. What it
 * finds is in {@link #violations}.
 */
public final class CampaignClient {
    /** The lists (scope {@code list:{list_id}}) the clients write to and subscribe to. */
    public static final List<String> LISTS = List.of("l0", "l1", "l2", "l3");

    private static final int SHARED_ROWS_PER_LIST = 3;
    private static final int SOCKET_CHUNK = 1 << 14;

    /** A round that failed on the client's side of the wire (a cut socket, a discarded or in-band failed response). */
    public static final class RoundFailed extends RuntimeException {
        public final String kind;

        RoundFailed(String kind) {
            this(kind, kind);
        }

        RoundFailed(String kind, String message) {
            super(message, null, false, false);
            this.kind = kind;
        }
    }

    public final int index;
    public final boolean socket;
    public final SyncTestClient client;
    private final CompiledSchema schema;
    private final Random random;
    private final List<String> pods;
    private final String partition;
    private final HttpTransport[] http;
    private final AtomicReferenceArray<RealtimeSocket> sockets;
    private int target;
    private int rowCounter;
    private int subGeneration;
    private boolean retryPending;
    private final AtomicInteger dropsArmed = new AtomicInteger();

    /** Every result received, by client commit id (the acknowledged commits). */
    public final Map<String, PushResult> acked = new LinkedHashMap<>();
    /** Every commit queued, by client commit id. */
    public final Map<String, PushCommit> queued = new LinkedHashMap<>();
    /** Results of responses the client discarded, waiting for the retry's answer. */
    private final Map<String, PushResult> discarded = new HashMap<>();
    /** Commits that were in the outbox of a failed round. */
    private final Set<String> inFailedRound = new HashSet<>();

    private final Map<String, Long> lastCursor = new HashMap<>();
    /** Broken invariants found while working. */
    public final List<String> violations = new ArrayList<>();
    /** Failed rounds by kind ({@code io}, {@code http503}, {@code ws-cut}, {@code dropped}, {@code inband:<code>}…). */
    public final Map<String, Integer> failures = new TreeMap<>();
    /** The last failure of each kind, in words (the failure message). */
    public final Map<String, String> lastFailure = new TreeMap<>();

    /** Rounds answered 429 {@code sync.rate_limited} (HTTP or in-band), readable while the client works. */
    public final AtomicInteger rateLimited = new AtomicInteger();
    /** The last 429 (or in-band {@code sync.rate_limited}) this client was answered, as it read. */
    public volatile String lastRateLimited = "";
    /** Rounds answered 5xx, or with an in-band {@code sync.internal_error}. */
    public final AtomicInteger serverErrors = new AtomicInteger();
    /** Referenced segments fetched: from their URL (§5.4) or through the server. */
    public int segmentsFetched() {
        return client.urlFetches + client.segmentDownloads;
    }

    /** Rounds failed fetching a segment from its URL (an S3 store's presigned URL): {@code s3-io}, {@code s3-http…}. */
    public final AtomicInteger s3Failures = new AtomicInteger();

    public int rounds;
    public int failedRounds;
    public int retriedCommits;
    public int cachedChecks;
    public int drops;
    public int cuts;
    public int resets;

    public CampaignClient(
            CompiledSchema schema, int index, boolean socket, long seed, List<String> pods, String partition) {
        this.schema = schema;
        this.index = index;
        this.socket = socket;
        this.random = new Random(seed * 1_000_003L + index);
        this.pods = List.copyOf(pods);
        this.partition = partition;
        this.http = new HttpTransport[pods.size()];
        for (int i = 0; i < pods.size(); i++) {
            http[i] = new HttpTransport(pods.get(i), partition);
        }
        this.sockets = new AtomicReferenceArray<>(pods.size());
        this.client = new SyncTestClient(
                schema, new Routed(), "actor-" + index, "campaign-" + partition + "-c" + index + "-" + seed);
        // §5.4: even clients take a referenced segment's URL when one is offered (an S3 store's presigned URL, the
        // embedded store's signed one), odd ones download it through the server (GET /segments/{id})
        if (index % 2 == 0) {
            client.accept |= PullHeader.ACCEPT_SIGNED_URLS;
        }
        List<String> lists = new ArrayList<>(LISTS);
        int n = 1 + random.nextInt(2);
        for (int i = 0; i < n; i++) {
            subscribe(lists.remove(random.nextInt(lists.size())));
        }
    }

    // --------------------------------------------------------------------------------------------- the work

    /**
     * One step of work: unless a failed round waits for its retry, queue one commit (or, offline, several; or none: a
     * pull-only round) and maybe change a subscription; then one round to a random pod. Returns whether the round went through.
     */
    public boolean work() {
        if (!retryPending) {
            int r = random.nextInt(100);
            if (r < 8) {
                toggleSubscription();
            }
            // a third of the rounds only pull (a reader catching up): the rounds a pod may send to its read replica
            int r2 = random.nextInt(30);
            int commits = r2 < 10 ? 0 : r2 < 14 ? 2 + random.nextInt(4) : 1;
            for (int i = 0; i < commits; i++) {
                queueRandomCommit();
            }
        }
        return round(random.nextInt(pods.size()));
    }

    /** Arms the campaign's fault: the next response carrying push results is discarded after it arrived. */
    public void armDrop() {
        dropsArmed.incrementAndGet();
    }

    public void disarm() {
        dropsArmed.set(0);
    }

    /** Aborts the client's open sockets (a cut connection); how many were open. */
    public int cutSockets() {
        int n = 0;
        for (int i = 0; i < sockets.length(); i++) {
            RealtimeSocket s = sockets.get(i);
            // an aborted socket's listener is not told (java.net.http.WebSocket#abort): forgotten here, so the next
            // round on that pod connects anew
            if (s != null && sockets.compareAndSet(i, s, null) && usable(s)) {
                s.ws.abort();
                n++;
            }
        }
        cuts += n;
        return n;
    }

    private void subscribe(String list) {
        client.subscribe("s-" + list + "-" + (subGeneration++), "todos", Map.of("list_id", List.of(list)));
    }

    private void toggleSubscription() {
        List<String> subscribed = subscribedLists();
        if (subscribed.size() > 1 && random.nextBoolean()) {
            String list = subscribed.get(random.nextInt(subscribed.size()));
            client.subscriptions.values().removeIf(s -> listOf(s).equals(list));
            // a client drops the rows of a subscription it removed (no other subscription covers the list)
            client.table("todos").values().removeIf(row -> list.equals(row.values()[1]));
        } else {
            List<String> free = new ArrayList<>(LISTS);
            free.removeAll(subscribed);
            if (!free.isEmpty()) {
                subscribe(free.get(random.nextInt(free.size())));
            }
        }
    }

    private void queueRandomCommit() {
        int r = random.nextInt(100);
        List<PushOperation> ops = new ArrayList<>();
        List<String> local = new ArrayList<>(client.table("todos").keySet());
        if (r < 30 || (r >= 60 && r < 90 && local.isEmpty())) {
            ops.add(upsert(ownRow(), null));
        } else if (r < 60) {
            String list = LISTS.get(random.nextInt(LISTS.size()));
            String id = list + "-s" + random.nextInt(SHARED_ROWS_PER_LIST);
            SyncTestClient.LocalRow known = client.table("todos").get(id);
            ops.add(upsert(id, known == null ? null : known.version()));
        } else if (r < 78) {
            String id = local.get(random.nextInt(local.size()));
            ops.add(upsert(id, client.table("todos").get(id).version()));
        } else if (r < 90) {
            String id = local.get(random.nextInt(local.size()));
            ops.add(new PushOperation(
                    "todos", id, Op.DELETE, client.table("todos").get(id).version(), null));
        } else {
            // two operations in one commit: a shared row (maybe conflicting) and a new row of the client's own
            String list = LISTS.get(random.nextInt(LISTS.size()));
            String id = list + "-s" + random.nextInt(SHARED_ROWS_PER_LIST);
            SyncTestClient.LocalRow known = client.table("todos").get(id);
            ops.add(upsert(id, known == null ? null : known.version()));
            ops.add(upsert(ownRow(), null));
        }
        String commitId = client.commit(ops);
        queued.put(commitId, client.outbox.get(client.outbox.size() - 1));
    }

    private String ownRow() {
        return LISTS.get(random.nextInt(LISTS.size())) + "-r" + index + "x" + (rowCounter++);
    }

    private PushOperation upsert(String id, Long baseVersion) {
        Map<String, Object> row = new LinkedHashMap<>();
        row.put("id", id);
        row.put("list_id", id.substring(0, id.indexOf('-')));
        row.put("title", "t" + index + "-" + random.nextInt(1000));
        row.put("done", random.nextBoolean());
        row.put("position", (long) random.nextInt(100));
        row.put("updated_at_ms", (long) rowCounter);
        return client.upsertOp("todos", row, baseVersion);
    }

    // --------------------------------------------------------------------------------------------- rounds

    /** One round to pod {@code pod}; a failure leaves the outbox for the retry. Returns whether it went through. */
    public boolean round(int pod) {
        target = pod;
        Map<String, Long> cursors = new HashMap<>();
        client.subscriptions.values().forEach(sub -> cursors.put(sub.id, sub.cursor));
        String epoch = client.state.logEpoch;
        client.lastResponse = null;
        try {
            client.sync();
            rounds++;
            retryPending = false;
            checkCursors();
            return true;
        } catch (HttpFailure e) {
            failed("http" + e.status, e.getMessage());
        } catch (UncheckedIOException e) {
            failed("io", e.getMessage());
        } catch (RoundFailed e) {
            failed(e.kind, e.getMessage());
        } finally {
            recordDeliveries(cursors, epoch);
            harvest();
        }
        return false;
    }

    /**
     * What a subscription was delivered since its last bootstrap (invariant 6): the bootstrap's end, {@code base}
     * (its {@code SUB_END} cursor: everything up to it is in the bootstrap), and the seqs of the commits applied
     * after it, in the order applied. A reset (§4.6) or a changed log epoch (§2.1) starts it over: {@code base} −1
     * until the new bootstrap ends.
     */
    static final class Delivery {
        long base = -1;
        final List<Long> applied = new ArrayList<>();

        void restart() {
            base = -1;
            applied.clear();
        }
    }

    /** Per subscription id; kept for removed subscriptions too (their ids are never reused). */
    private final Map<String, Delivery> deliveries = new HashMap<>();

    /** Bootstraps completed, commits applied incrementally (counted for the summary). */
    public int bootstraps;

    public int appliedCommits;

    /**
     * Invariant 6, as the round applies: reads the round's response the way {@link
     * dev.syncular.server.cli.ClientState#apply} applied it — a subscription's section counts once its {@code SUB_END}
     * was applied (the subscription's cursor and bootstrap state are that {@code SUB_END}'s now; a round that failed
     * part-way applied the sections before the failure only) — and checks each commit applied incrementally comes
     * after every one applied before (no commit twice, none out of order).
     */
    private void recordDeliveries(Map<String, Long> cursorsBefore, String epochBefore) {
        Message m = client.lastResponse;
        if (m == null) {
            return;
        }
        RespHeader header = (RespHeader) m.frames().get(0);
        if (header.requiredSchemaVersion() != null) {
            return;
        }
        if (header.resetRequired()) {
            if (epochBefore != null && !epochBefore.equals(header.logEpoch())) {
                deliveries.values().forEach(Delivery::restart);
            }
            return;
        }
        String current = null;
        SubscriptionStatus status = null;
        List<Long> seqs = new ArrayList<>();
        for (Frame f : m.frames()) {
            if (f instanceof SubStart start) {
                current = start.id();
                status = start.status();
                seqs.clear();
            } else if (f instanceof CommitFrame c) {
                seqs.add(c.commitSeq());
            } else if (f instanceof SubEnd end && current != null) {
                Subscription sub = client.subscriptions.get(current);
                Delivery d = deliveries.computeIfAbsent(current, k -> new Delivery());
                if (status == SubscriptionStatus.RESET) {
                    d.restart();
                } else if (sub != null
                        && status == SubscriptionStatus.ACTIVE
                        && sub.cursor == end.nextCursor()
                        && java.util.Objects.equals(sub.bootstrapState, end.bootstrapState())) {
                    long before = cursorsBefore.getOrDefault(current, -1L);
                    if (before < 0 || d.base < 0) {
                        // a bootstrap (its pages, maybe commits of its catch-up): complete once no state is left
                        if (end.bootstrapState() == null && end.nextCursor() >= 0) {
                            d.base = end.nextCursor();
                            d.applied.clear();
                            bootstraps++;
                        }
                    } else {
                        for (long seq : seqs) {
                            long last = d.applied.isEmpty() ? d.base : d.applied.get(d.applied.size() - 1);
                            if (seq <= last) {
                                violations.add("subscription " + current + " applied commit " + seq + " after "
                                        + (d.applied.isEmpty() ? "its bootstrap through " : "commit ") + last
                                        + " (twice or out of order)");
                            }
                            d.applied.add(seq);
                            appliedCommits++;
                        }
                    }
                }
                current = null;
            }
        }
    }

    /**
     * A round to alternate pods until this client's outbox is empty and a round brought nothing new (no commit, no
     * segment, no bootstrap in progress): quiescence. Fails after {@code maxRounds}.
     */
    public void settle(int maxRounds, Runnable betweenFailures) {
        disarm();
        for (int i = 0; i < maxRounds; i++) {
            if (!round(i % pods.size())) {
                betweenFailures.run();
                continue;
            }
            if (client.outbox.isEmpty() && !progressed(client.lastResponse)) {
                return;
            }
        }
        throw new AssertionError("client " + index + " did not become idle in " + maxRounds + " rounds; outbox "
                + client.outbox.size() + ", failures " + failures);
    }

    private static boolean progressed(Message m) {
        for (Frame f : m.frames()) {
            if (f instanceof CommitFrame || f instanceof SegmentInline || f instanceof SegmentRef) {
                return true;
            }
            if (f instanceof RespHeader h && h.resetRequired()) {
                return true;
            }
        }
        return false;
    }

    private void failed(String kind, String message) {
        failedRounds++;
        if (kind.matches("http5\\d\\d") || kind.equals("inband:sync.internal_error")) {
            serverErrors.incrementAndGet();
        }
        if (kind.startsWith("s3-")) {
            s3Failures.incrementAndGet();
        }
        if (kind.equals("http429") || kind.equals("inband:sync.rate_limited")) {
            lastRateLimited = message;
            rateLimited.incrementAndGet();
        }
        failures.merge(kind, 1, Integer::sum);
        lastFailure.put(kind, message == null || message.length() <= 300 ? message : message.substring(0, 300));
        retryPending = true;
        for (PushCommit c : client.outbox) {
            inFailedRound.add(c.clientCommitId());
        }
    }

    /** Takes the results the last round delivered (even one that failed part-way) into {@link #acked}. */
    private void harvest() {
        for (Map.Entry<String, PushResult> e : client.results.entrySet()) {
            String id = e.getKey();
            PushResult r = e.getValue();
            if (acked.containsKey(id)) {
                violations.add("two results for " + id + ": " + acked.get(id) + " then " + r);
                continue;
            }
            PushResult before = discarded.remove(id);
            if (before != null) {
                cachedChecks++;
                boolean same = before.status() == CommitStatus.REJECTED
                        ? r.status() == CommitStatus.REJECTED
                        : r.status() == CommitStatus.CACHED
                                && before.commitSeq().equals(r.commitSeq());
                if (!same) {
                    violations.add("retry of " + id + " after a discarded " + before.status() + " (seq "
                            + before.commitSeq() + ") answered " + r.status() + " (seq " + r.commitSeq() + ")");
                }
            }
            if (inFailedRound.remove(id)) {
                retriedCommits++;
            }
            acked.put(id, r);
        }
        client.results.clear();
    }

    /** §1.4: a subscription's cursor moves forward only (a reset or a changed epoch would restart it: counted). */
    private void checkCursors() {
        for (Subscription s : client.subscriptions.values()) {
            if (s.status == SubscriptionStatus.RESET) {
                resets++;
                lastCursor.remove(s.id);
                continue;
            }
            Long last = lastCursor.get(s.id);
            if (last != null && s.cursor < last) {
                violations.add("cursor of " + s.id + " went back from " + last + " to " + s.cursor + " (round " + rounds
                        + ", status " + s.status + ")");
            }
            lastCursor.merge(s.id, s.cursor, Math::max);
        }
    }

    // --------------------------------------------------------------------------------------------- checks

    /**
     * Invariant 6 after quiescence: every subscription this client holds now and whose bootstrap ended applied,
     * after that bootstrap and up to its cursor, exactly the commits of the partition's log that change a row of its
     * list ({@code commitsByList}: list → seqs, from SQL), each once, in order; commits at or below {@code horizon}
     * (pruned, §4.6) are not asked for. Returns the violations; counts the subscriptions checked in
     * {@link #deliveriesChecked}.
     */
    public List<String> checkDeliveries(Map<String, java.util.NavigableSet<Long>> commitsByList, long horizon) {
        List<String> out = new ArrayList<>();
        for (Subscription sub : client.subscriptions.values()) {
            Delivery d = deliveries.get(sub.id);
            if (d == null || d.base < 0 || sub.status != SubscriptionStatus.ACTIVE) {
                continue;
            }
            deliveriesChecked++;
            commitsCompared += d.applied.size();
            long from = Math.max(d.base, horizon);
            List<Long> expected = from >= sub.cursor
                    ? new ArrayList<>()
                    : new ArrayList<>(commitsByList
                            .getOrDefault(listOf(sub), new java.util.TreeSet<>())
                            .subSet(from, false, sub.cursor, true));
            List<Long> applied = new ArrayList<>(d.applied);
            applied.removeIf(seq -> seq <= horizon);
            if (!applied.equals(expected)) {
                List<Long> missing = new ArrayList<>(expected);
                missing.removeAll(applied);
                List<Long> extra = new ArrayList<>(applied);
                extra.removeAll(expected);
                out.add("subscription " + sub.id + " (list " + listOf(sub) + ", bootstrap through " + d.base
                        + ", cursor " + sub.cursor + ") applied " + applied.size() + " commits, the log has "
                        + expected.size() + ": missing " + head(missing) + ", not of its list " + head(extra));
            }
        }
        return out;
    }

    public int deliveriesChecked;
    /** The commits the checked subscriptions applied since their bootstraps (all compared with the log). */
    public int commitsCompared;

    private static List<Long> head(List<Long> seqs) {
        return seqs.subList(0, Math.min(10, seqs.size()));
    }

    public List<String> subscribedLists() {
        List<String> lists = new ArrayList<>();
        for (Subscription s : client.subscriptions.values()) {
            lists.add(listOf(s));
        }
        return lists;
    }

    private static String listOf(Subscription s) {
        return s.scopes.get("list_id").get(0);
    }

    /** The local rows as {@code id → version|title|done|position|updated_at_ms}. */
    public Map<String, String> localRows() {
        return render(client);
    }

    /** {@code client}'s {@code todos} as {@code id → version|list|title|done|position|updated_at_ms}. */
    public static Map<String, String> render(SyncTestClient client) {
        Map<String, String> out = new TreeMap<>();
        client.table("todos").forEach((id, row) -> {
            Object[] v = row.values();
            out.put(id, row.version() + "|" + v[1] + "|" + v[2] + "|" + v[3] + "|" + v[4] + "|" + v[5]);
        });
        return out;
    }

    /**
     * §2.3 once more at the end: up to {@code max} acknowledged commits sent again (the same ids and operations) to
     * pod {@code pod}; each must be answered as before — {@code cached} with its commit sequence number, or rejected
     * again — and nothing applied. Returns how many were checked; mismatches go to {@link #violations}.
     */
    public int resendAcknowledged(int pod, int max) {
        List<PushCommit> commits = new ArrayList<>();
        List<String> ids = new ArrayList<>(acked.keySet());
        for (int i = 0; i < ids.size() && commits.size() < max; i++) {
            String id = ids.get(random.nextInt(ids.size()));
            PushCommit c = queued.get(id);
            if (c != null && !commits.contains(c)) {
                commits.add(c);
            }
        }
        if (commits.isEmpty()) {
            return 0;
        }
        Message request =
                client.state.request(schema.version(), commits, new PullHeader(0, 0, 0, client.accept), List.of());
        Message response = MessageDecoder.decodeResponse(http[pod].roundTrip(client, request.encode()));
        int checked = 0;
        for (Frame f : response.frames()) {
            if (f instanceof PushResult r) {
                PushResult first = acked.get(r.clientCommitId());
                boolean same = first.status() == CommitStatus.REJECTED
                        ? r.status() == CommitStatus.REJECTED
                        : r.status() == CommitStatus.CACHED && first.commitSeq().equals(r.commitSeq());
                if (!same) {
                    violations.add("resent " + r.clientCommitId() + " (first " + first.status() + " seq "
                            + first.commitSeq() + ") answered " + r.status() + " seq " + r.commitSeq());
                }
                checked++;
            } else if (f instanceof ErrorFrame e) {
                violations.add("resending acknowledged commits failed in-band: " + e);
            }
        }
        if (checked != commits.size()) {
            violations.add("resent " + commits.size() + " commits, " + checked + " results");
        }
        return checked;
    }

    private static boolean usable(RealtimeSocket s) {
        return !s.closed.isDone() && !s.ws.isOutputClosed() && !s.ws.isInputClosed();
    }

    /** Closes the client's sockets. */
    public void close() {
        for (int i = 0; i < sockets.length(); i++) {
            RealtimeSocket s = sockets.get(i);
            if (s != null) {
                s.ws.abort();
            }
        }
    }

    // --------------------------------------------------------------------------------------------- transport

    /** Each round to {@link #target}, over HTTP or the realtime socket; the response inspected before it applies. */
    private final class Routed implements SyncTestClient.Transport {
        @Override
        public byte[] roundTrip(SyncTestClient c, byte[] request) {
            byte[] response = socket ? overSocket(request) : http[target].roundTrip(c, request);
            Message m = MessageDecoder.decodeResponse(response);
            List<PushResult> results = new ArrayList<>();
            ErrorFrame error = null;
            for (Frame f : m.frames()) {
                if (f instanceof PushResult r) {
                    results.add(r);
                } else if (f instanceof ErrorFrame e) {
                    error = e;
                }
            }
            if (error != null) {
                discard(results);
                throw new RoundFailed("inband:" + error.code(), error.toString());
            }
            if (!results.isEmpty() && dropsArmed.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
                drops++;
                discard(results);
                throw new RoundFailed("dropped");
            }
            return response;
        }

        private void discard(List<PushResult> results) {
            for (PushResult r : results) {
                PushResult before = discarded.putIfAbsent(r.clientCommitId(), r);
                if (before != null) {
                    cachedChecks++; // a retry of a discarded response, discarded again: compared here
                }
                if (before != null
                        && before.status() != CommitStatus.REJECTED
                        && !(r.status() == CommitStatus.CACHED
                                && before.commitSeq().equals(r.commitSeq()))) {
                    violations.add("discarded twice with different answers: " + before + " then " + r);
                }
            }
        }

        private byte[] overSocket(byte[] request) {
            RealtimeSocket s = sockets.get(target);
            if (s == null || !usable(s)) {
                try {
                    s = RealtimeSocket.connect(pods.get(target) + "/", partition, client.actorId, client.clientId);
                } catch (RuntimeException e) {
                    throw new RoundFailed("ws-connect", String.valueOf(e));
                }
                sockets.set(target, s);
            }
            try {
                byte[] response = s.round(request, SOCKET_CHUNK);
                s.texts.clear();
                s.deltasBesideRounds.clear();
                return response;
            } catch (AssertionError | RuntimeException e) {
                s.ws.abort();
                sockets.compareAndSet(target, s, null);
                throw new RoundFailed("ws-cut", String.valueOf(e));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new RoundFailed("interrupted");
            }
        }

        /** §5.4: a segment's URL (the S3 store's presigned one) fetched without the server's credentials. */
        @Override
        public byte[] fetchUrl(String url) {
            try {
                return SyncTestClient.Transport.super.fetchUrl(url);
            } catch (HttpFailure e) {
                throw new RoundFailed("s3-http" + e.status, e.getMessage());
            } catch (UncheckedIOException e) {
                throw new RoundFailed("s3-io", e.getMessage());
            }
        }

        @Override
        public byte[] downloadSegment(SyncTestClient c, String segmentId, String scopesHeader) {
            return http[target].downloadSegment(c, segmentId, scopesHeader);
        }
    }
}
