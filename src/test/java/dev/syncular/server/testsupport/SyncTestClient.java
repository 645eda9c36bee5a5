package dev.syncular.server.testsupport;

import dev.syncular.server.cli.ClientState;
import dev.syncular.server.cli.HttpFailure;
import dev.syncular.server.cli.ResponseHandler;
import dev.syncular.server.cli.RowValues;
import dev.syncular.server.cli.ServerConnection;
import dev.syncular.server.cli.Subscription;
import dev.syncular.server.schema.CompiledSchema;
import dev.syncular.server.schema.TableSchema;
import dev.syncular.server.wire.CanonicalJson;
import dev.syncular.server.wire.Change;
import dev.syncular.server.wire.ColumnType;
import dev.syncular.server.wire.CommitFrame;
import dev.syncular.server.wire.CommitStatus;
import dev.syncular.server.wire.Frame;
import dev.syncular.server.wire.MediaType;
import dev.syncular.server.wire.Message;
import dev.syncular.server.wire.MessageDecoder;
import dev.syncular.server.wire.Op;
import dev.syncular.server.wire.OpResult;
import dev.syncular.server.wire.PullHeader;
import dev.syncular.server.wire.PushCommit;
import dev.syncular.server.wire.PushOperation;
import dev.syncular.server.wire.PushResult;
import dev.syncular.server.wire.RespHeader;
import dev.syncular.server.wire.RowCodec;
import dev.syncular.server.wire.RowsSegment;
import dev.syncular.server.wire.SegmentInline;
import dev.syncular.server.wire.SegmentRef;
import dev.syncular.server.wire.SegmentRow;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;

/**
 * A small SSP2 client for tests and benchmarks: an in-memory replica (rows with their server versions) and
 * an outbox of commits on top of the command-line client's core ({@link ClientState}: subscriptions with
 * cursors and resume tokens, the log epoch, request building and the §1.4 response application), synced
 * through a {@link Transport} with the project's own codec.
 */
public final class SyncTestClient {
    /** Moves request bytes to a server and back; failures surface as {@link HttpFailure}. */
    public interface Transport {
        byte[] roundTrip(SyncTestClient client, byte[] request);

        byte[] downloadSegment(SyncTestClient client, String segmentId, String scopesHeader);

        /** §5.4: a descriptor URL is the entire grant — fetched with no sync-server credentials. */
        default byte[] fetchUrl(String url) {
            return new ServerConnection(url, Map.of(), null).fetch(url);
        }
    }

    /** A local row: its server version and full values (declaration order). */
    public record LocalRow(long version, Object[] values) {}

    public final String actorId;
    public final String clientId;
    /** Client id, log epoch, subscriptions and their progress: the CLI's client core. */
    public final ClientState state;

    private final CompiledSchema schema;
    private final Transport transport;
    public int accept = PullHeader.ACCEPT_INLINE_ROWS | PullHeader.ACCEPT_EXTERNAL_ROWS;
    public int limitCommits;
    public int limitSnapshotRows;
    public int maxSnapshotPages;
    /** {@code state.subscriptions}. */
    public final Map<String, Subscription> subscriptions;

    public final Map<String, Map<String, LocalRow>> rows = new TreeMap<>();
    public final List<PushCommit> outbox = new ArrayList<>();
    public final Map<String, PushResult> results = new LinkedHashMap<>();
    public Message lastResponse;
    public int segmentDownloads;
    public int urlFetches;
    /** Every external segment descriptor applied, in order. */
    public final List<SegmentRef> segmentRefs = new ArrayList<>();
    /** Test hook: flip a byte of the next fetched external segment (a corrupting CDN or store). */
    public boolean corruptNextSegment;

    /**
     * A client of {@code actor} under a fresh client id ({@code c-<actor>-<uuid>}), subscribed as {@code s1} to the
     * {@code todos} of list {@code l1}: the realtime tests' usual participant. Not synced yet.
     */
    public static SyncTestClient onListL1(CompiledSchema schema, Transport transport, String actor) {
        SyncTestClient c = new SyncTestClient(schema, transport, actor, "c-" + actor + "-" + UUID.randomUUID());
        c.subscribe("s1", "todos", Map.of("list_id", List.of("l1")));
        return c;
    }

    public SyncTestClient(CompiledSchema schema, Transport transport, String actorId, String clientId) {
        this.schema = schema;
        this.transport = transport;
        this.actorId = actorId;
        this.clientId = clientId;
        this.state = new ClientState(clientId);
        this.subscriptions = state.subscriptions;
    }

    public SyncTestClient subscribe(String id, String table, Map<String, List<String>> scopes) {
        subscriptions.put(id, new Subscription(id, table, scopes));
        return this;
    }

    public Map<String, LocalRow> table(String name) {
        return rows.computeIfAbsent(name, k -> new TreeMap<>());
    }

    // ------------------------------------------------------------------------------------------- writes

    /** Queues a one-operation commit writing the given columns (a sparse upsert, §2.4). */
    public String upsert(String table, Map<String, Object> values, Long baseVersion) {
        return commit(List.of(upsertOp(table, values, baseVersion)));
    }

    public String delete(String table, String rowId) {
        return commit(List.of(deleteOp(table, rowId)));
    }

    public String commit(List<PushOperation> ops) {
        String id = state.nextCommitId();
        outbox.add(new PushCommit(id, ops));
        return id;
    }

    public PushOperation upsertOp(String table, Map<String, Object> values, Long baseVersion) {
        return RowValues.upsert(schema.table(table), values, baseVersion);
    }

    public static PushOperation deleteOp(String table, String rowId) {
        return new PushOperation(table, rowId, Op.DELETE, null, null);
    }

    // ------------------------------------------------------------------------------------------- rounds

    public Message buildRequest() {
        return state.request(
                schema.version(),
                outbox,
                new PullHeader(limitCommits, limitSnapshotRows, maxSnapshotPages, accept),
                subscriptions.values());
    }

    /** One combined push+pull round (§1.5); returns the decoded response. */
    public Message sync() {
        return exchange(buildRequest());
    }

    /**
     * One round with a request built earlier ({@link #buildRequest}): a captured request, sent while the client
     * went on writing (§8.4 mailbox hosts); the response applies like any other.
     */
    public Message exchange(Message request) {
        byte[] response = transport.roundTrip(this, request.encode());
        Message m = MessageDecoder.decodeResponse(response);
        lastResponse = m;
        apply(m);
        return m;
    }

    /** Rounds until nothing is pending: no outbox, no bootstrap in progress, no commits delivered. */
    public void syncUntilIdle() {
        for (int i = 0; i < 200; i++) {
            Message m = sync();
            boolean busy = !outbox.isEmpty() && state.logEpoch != null && resultsIn(m) == 0;
            boolean progress = false;
            for (Frame f : m.frames()) {
                if (f instanceof CommitFrame || f instanceof SegmentInline || f instanceof SegmentRef) {
                    progress = true;
                }
                if (f instanceof RespHeader h && h.resetRequired()) {
                    progress = true;
                }
            }
            boolean bootstrapping = subscriptions.values().stream().anyMatch(s -> s.bootstrapState != null);
            if (!progress && !bootstrapping && outbox.isEmpty() && !busy) {
                return;
            }
        }
        throw new IllegalStateException("client did not become idle");
    }

    private static int resultsIn(Message m) {
        return (int) m.frames().stream().filter(f -> f instanceof PushResult).count();
    }

    private void apply(Message m) {
        firstPagesSeen.clear();
        state.apply(m, replica);
    }

    /** The subscriptions of the response being applied that already had their first inline segment. */
    private final Set<String> firstPagesSeen = new HashSet<>();

    /**
     * §5.6 first-page clear: on the first page of a fresh bootstrap (the request carried {@code cursor < 0} and no
     * resume token; the progress is taken at {@code SUB_END}, so it still reads as sent) the subscription's local rows
     * go first, so rows removed on the server do not survive a re-bootstrap. The first page is the descriptor
     * without {@code rowCursor}, or the subscription's first inline segment of the response.
     */
    private void clearOnFirstPage(Subscription s, boolean firstPage) {
        if (firstPage && s.cursor < 0 && s.bootstrapState == null) {
            purge(s);
        }
    }

    /** The replica's side of a response; the progress is the core's ({@link ClientState#apply}). */
    private final ResponseHandler replica = new ResponseHandler() {
        @Override
        public void epochChanged() {
            rows.clear(); // §2.1: a changed epoch discards synced state, keeps the outbox.
        }

        @Override
        public void pushResult(PushResult r) {
            results.put(r.clientCommitId(), r);
            outbox.removeIf(c -> c.clientCommitId().equals(r.clientCommitId()));
        }

        @Override
        public void revoked(Subscription s) {
            purge(s);
        }

        @Override
        public void commit(Subscription s, CommitFrame c) {
            applyCommit(c);
        }

        @Override
        public void inlineSegment(Subscription s, SegmentInline segment) {
            clearOnFirstPage(s, firstPagesSeen.add(s.id));
            applySegment(RowsSegment.decode(segment.payload()));
        }

        @Override
        public void segmentRef(Subscription current, SegmentRef ref, RespHeader header) {
            byte[] bytes;
            if (ref.url() != null) {
                urlFetches++;
                bytes = transport.fetchUrl(ref.url());
            } else {
                segmentDownloads++;
                bytes = transport.downloadSegment(
                        SyncTestClient.this,
                        ref.segmentId(),
                        CanonicalJson.write(CanonicalJson.canonicalScopes(current.scopes)));
            }
            if (corruptNextSegment) {
                corruptNextSegment = false;
                bytes = bytes.clone();
                bytes[bytes.length / 2] ^= 0x5a;
            }
            if (!ref.segmentId().equals("sha256:" + CanonicalJson.sha256Hex(bytes))) {
                // §5.1/§1.4 rule 5: abort the round; nothing of this response is persisted by the caller
                throw new IllegalStateException("segment content address mismatch");
            }
            segmentRefs.add(ref);
            clearOnFirstPage(current, ref.rowCursor() == null && firstPagesSeen.add(current.id));
            if (ref.mediaType() == MediaType.SQLITE) {
                applyImage(ref, bytes, header);
            } else {
                applySegment(RowsSegment.decode(bytes));
            }
        }
    };

    private void applyCommit(CommitFrame c) {
        for (Change ch : c.changes()) {
            String table = c.tables().get(ch.tableIndex());
            if (ch.op() == Op.DELETE) {
                table(table).remove(ch.rowId());
            } else {
                Object[] values = new RowCodec(schema.table(table).rowLayout()).decode(ch.row());
                table(table).put(ch.rowId(), new LocalRow(ch.rowVersion(), values));
            }
        }
    }

    private void applySegment(RowsSegment seg) {
        TableSchema t = schema.table(seg.table());
        if (!seg.columns().columns().equals(t.rowLayout().columns())) {
            throw new IllegalStateException("sync.schema_mismatch");
        }
        for (List<SegmentRow> block : seg.blocks()) {
            for (SegmentRow r : block) {
                String rowId = t.primaryKeyColumn().type().rowIdOf(r.values()[t.primaryKeyIndex()]);
                table(seg.table()).put(rowId, new LocalRow(r.serverVersion(), r.values()));
            }
        }
    }

    /**
     * §5.3: the image's data table (in the database {@code schemaPrefix} names, e.g. {@code "img."} for an
     * ATTACHed one, or {@code ""}) has exactly the schema's columns in declaration order plus
     * {@code _syncular_version}; otherwise {@code sync.schema_mismatch}.
     */
    public static void checkImageColumns(Statement st, String schemaPrefix, TableSchema t) throws SQLException {
        List<String> names = new ArrayList<>();
        try (ResultSet cols = st.executeQuery("PRAGMA " + schemaPrefix + "table_info(\"" + t.name() + "\")")) {
            while (cols.next()) {
                names.add(cols.getString("name"));
            }
        }
        List<String> expected = new ArrayList<>();
        t.columns().forEach(col -> expected.add(col.name()));
        expected.add("_syncular_version");
        if (!names.equals(expected)) {
            throw new IllegalStateException("sync.schema_mismatch: " + names);
        }
    }

    /**
     * §5.3 client checks and application of a SQLite image: the bytes open as a database, the one metadata row
     * matches the descriptor and this client's schema version, the data table's columns are the schema's in
     * declaration order plus {@code _syncular_version}; rows upsert by primary key with their versions.
     */
    private void applyImage(SegmentRef ref, byte[] bytes, RespHeader header) {
        if (ref.rowCursor() != null || ref.nextRowCursor() != null) {
            throw new IllegalStateException("sync.invalid_request: sqlite descriptor with a row cursor");
        }
        TableSchema t = schema.table(ref.table());
        Path file = null;
        try {
            file = Files.createTempFile("client-image", ".sqlite");
            Files.write(file, bytes);
            try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + file);
                    Statement st = c.createStatement()) {
                try (ResultSet meta = st.executeQuery("SELECT format, \"table\", schemaVersion, asOfCommitSeq,"
                        + " scopeDigest, rowCount FROM _syncular_segment")) {
                    if (!meta.next()
                            || meta.getInt(1) != 1
                            || !ref.table().equals(meta.getString(2))
                            || meta.getInt(3) != schema.version()
                            || meta.getLong(4) != ref.asOfCommitSeq()
                            || !ref.scopeDigest().equals(meta.getString(5))
                            || meta.getLong(6) != ref.rowCount()
                            || meta.next()) {
                        throw new IllegalStateException("sync.invalid_request: image metadata mismatch");
                    }
                }
                checkImageColumns(st, "", t);
                long applied = 0;
                try (ResultSet rs = st.executeQuery("SELECT * FROM \"" + ref.table() + "\"")) {
                    while (rs.next()) {
                        Object[] values = new Object[t.columnCount()];
                        for (int i = 0; i < values.length; i++) {
                            values[i] = imageValue(rs, i + 1, t.columns().get(i).type());
                        }
                        long version = rs.getLong(values.length + 1);
                        String rowId = t.primaryKeyColumn().type().rowIdOf(values[t.primaryKeyIndex()]);
                        table(ref.table()).put(rowId, new LocalRow(version, values));
                        applied++;
                    }
                }
                if (applied != ref.rowCount()) {
                    throw new IllegalStateException("sync.invalid_request: image row count");
                }
            }
        } catch (IOException | SQLException e) {
            throw new IllegalStateException("sync.invalid_request: image does not open", e);
        } finally {
            if (file != null) {
                file.toFile().delete();
            }
        }
    }

    private static Object imageValue(ResultSet rs, int column, ColumnType type) throws SQLException {
        Object raw = rs.getObject(column);
        if (raw == null) {
            return null;
        }
        return switch (type) {
            case STRING, JSON, BLOB_REF -> rs.getString(column);
            case INTEGER -> rs.getLong(column);
            case FLOAT -> rs.getDouble(column);
            case BOOLEAN -> rs.getLong(column) != 0;
            case BYTES, CRDT -> rs.getBytes(column);
        };
    }

    /** §3.3: purge exactly the rows matching the last effective scopes of the revoked subscription. */
    private void purge(Subscription s) {
        TableSchema t = schema.table(s.table);
        table(s.table).values().removeIf(row -> {
            for (Map.Entry<String, List<String>> e : s.scopes.entrySet()) {
                Object v = row.values()[t.columnIndex(t.scopeColumnFor(e.getKey()))];
                if (v == null || !e.getValue().contains(v.toString())) {
                    return false;
                }
            }
            return true;
        });
    }

    public PushResult result(String clientCommitId) {
        return results.get(clientCommitId);
    }

    public static boolean applied(PushResult r) {
        return r != null && (r.status() == CommitStatus.APPLIED || r.status() == CommitStatus.CACHED);
    }

    public static OpResult firstResult(PushResult r) {
        return r.results().get(0);
    }
}
