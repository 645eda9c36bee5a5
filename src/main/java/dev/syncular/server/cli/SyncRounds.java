package dev.syncular.server.cli;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.syncular.server.schema.CompiledSchema;
import dev.syncular.server.schema.TableSchema;
import dev.syncular.server.wire.CanonicalJson;
import dev.syncular.server.wire.Change;
import dev.syncular.server.wire.CommitFrame;
import dev.syncular.server.wire.DebugJson;
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
import dev.syncular.server.wire.SubscriptionStatus;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

/**
 * The CLI's sync rounds against one server: push, pull and bootstrap. Each response is printed as its §11.1
 * debug JSON, then applied to the {@link ClientState} (referenced segments fetched and verified by content
 * address, as any client must before its cursor moves) and the state file written. With {@code --decode}
 * the rows follow each response: every commit change with its values, every rows segment as §11.1 rule 8, every
 * push conflict with its server row decoded and its conflict columns by name.
 */
final class SyncRounds implements ResponseHandler {
    /** A bootstrap that has not finished after this many rounds is reported instead of followed. */
    private static final int MAX_ROUNDS = 10_000;

    private final CliOptions options;
    private final CompiledSchema schema;
    private final ClientState state;
    private final Path stateFile;
    private final ServerConnection server;
    private final PrintStream out;
    private final PrintStream err;

    SyncRounds(
            CliOptions options,
            CompiledSchema schema,
            ClientState state,
            ServerConnection server,
            PrintStream out,
            PrintStream err) {
        this.options = options;
        this.schema = schema;
        this.state = state;
        this.stateFile = options.state;
        this.server = server;
        this.out = out;
        this.err = err;
    }

    /** One commit of {@code ops}, pushed with a pull of every subscription in the same round (§1.5). */
    void push(PushCommit commit) {
        ensureEpoch(state.subscriptions.values());
        Message response = round(List.of(commit), state.subscriptions.values());
        if (((RespHeader) response.frames().get(0)).resetRequired()) {
            throw new IllegalStateException(
                    "the commit was not pushed: the partition's log epoch changed (§2.1);" + " push it again");
        }
    }

    void pull(Collection<Subscription> subs) {
        ensureEpoch(subs);
        round(List.of(), subs);
    }

    /** {@code watch}: a §8.2 delta applied like a pull response, then the state file written. */
    void applyDelta(Message delta) throws IOException {
        pushing = List.of();
        state.apply(delta, this);
        StateFile.save(stateFile, state);
    }

    /** Restarts {@code subs} and rounds until none of them has a bootstrap in progress. */
    void bootstrap(Collection<Subscription> subs) {
        subs.forEach(Subscription::restart);
        for (int i = 0; i < MAX_ROUNDS; i++) {
            ensureEpoch(subs);
            round(List.of(), subs);
            if (subs.stream()
                    .allMatch(s ->
                            s.bootstrapState == null && (s.cursor >= 0 || s.status == SubscriptionStatus.REVOKED))) {
                return;
            }
        }
        throw new IllegalStateException("the bootstrap did not finish within " + MAX_ROUNDS + " rounds");
    }

    /** A first round only learns the partition's log epoch (§2.1); commits wait for it. */
    private void ensureEpoch(Collection<Subscription> subs) {
        if (state.logEpoch == null) {
            round(List.of(), subs);
        }
    }

    /** The commits of the round in flight, to name a conflict's table and row. */
    private List<PushCommit> pushing = List.of();

    private Message round(List<PushCommit> outbox, Collection<Subscription> subs) {
        pushing = outbox;
        Message request = state.request(
                schema.version(),
                outbox,
                new PullHeader(
                        options.limitCommits, options.limitSnapshotRows, options.maxSnapshotPages, options.accept),
                subs);
        if (options.verbose) {
            err.println(DebugJson.toText(DebugJson.render(request)));
        }
        Message response = MessageDecoder.decodeResponse(server.sync(request.encode()));
        out.println(DebugJson.toText(DebugJson.render(response)));
        RespHeader header = (RespHeader) response.frames().get(0);
        if (header.requiredSchemaVersion() != null) {
            throw new IllegalStateException("the server needs schema version " + header.requiredSchemaVersion()
                    + " or newer; this schema is version " + schema.version());
        }
        state.apply(response, this);
        StateFile.save(stateFile, state);
        return response;
    }

    /** {@code --decode}: each conflict (§6.3) with its server row decoded and its conflict columns by name. */
    @Override
    public void pushResult(PushResult result) {
        if (!options.decode) {
            return;
        }
        PushCommit commit = pushing.stream()
                .filter(c -> c.clientCommitId().equals(result.clientCommitId()))
                .findFirst()
                .orElse(null);
        for (OpResult r : result.results()) {
            if (r instanceof OpResult.Conflict c
                    && commit != null
                    && c.opIndex() < commit.operations().size()) {
                ObjectNode o = decodedConflict(
                        schema, result.clientCommitId(), commit.operations().get(c.opIndex()), c);
                if (o != null) {
                    out.println(DebugJson.toText(o));
                }
            }
        }
    }

    /**
     * {@code {"conflict":{clientCommitId, opIndex, table, rowId, code, serverVersion, serverRow:{column:value},
     * conflictColumns:[names]}}}, or {@code null} when the schema does not know the operation's table.
     */
    static ObjectNode decodedConflict(
            CompiledSchema schema, String clientCommitId, PushOperation op, OpResult.Conflict c) {
        TableSchema t = schema.table(op.table());
        if (t == null) {
            return null;
        }
        ObjectNode x = JsonNodeFactory.instance.objectNode();
        x.put("clientCommitId", clientCommitId);
        x.put("opIndex", c.opIndex());
        x.put("table", t.name());
        x.put("rowId", op.rowId());
        x.put("code", c.code());
        x.put("serverVersion", c.serverVersion());
        if (c.serverRow() != null && c.serverRow().length > 0) {
            x.set("serverRow", RowValues.render(t, new RowCodec(t.rowLayout()).decode(c.serverRow())));
        } else {
            x.putNull("serverRow");
        }
        ArrayNode columns = x.putArray("conflictColumns");
        byte[] bits = c.conflictColumns() == null ? new byte[0] : c.conflictColumns();
        for (int i = 0; i < t.columnCount() && (i >>> 3) < bits.length; i++) {
            if ((bits[i >>> 3] & (1 << (i & 7))) != 0) {
                columns.add(t.column(i).name());
            }
        }
        ObjectNode wrapped = JsonNodeFactory.instance.objectNode();
        wrapped.set("conflict", x);
        return wrapped;
    }

    @Override
    public void commit(Subscription subscription, CommitFrame commit) {
        if (!options.decode) {
            return;
        }
        for (Change ch : commit.changes()) {
            String table = commit.tables().get(ch.tableIndex());
            ObjectNode o = JsonNodeFactory.instance.objectNode();
            o.put("commitSeq", commit.commitSeq());
            o.put("table", table);
            o.put("rowId", ch.rowId());
            o.put("op", ch.op().wireName);
            if (ch.rowVersion() != null) {
                o.put("rowVersion", ch.rowVersion());
            }
            TableSchema t = schema.table(table);
            if (ch.op() == Op.UPSERT && t != null) {
                o.set("values", RowValues.render(t, new RowCodec(t.rowLayout()).decode(ch.row())));
            }
            out.println(DebugJson.toText(o));
        }
    }

    @Override
    public void inlineSegment(Subscription subscription, SegmentInline segment) {
        if (options.decode) {
            out.println(DebugJson.toText(DebugJson.render(RowsSegment.decode(segment.payload()))));
        }
    }

    @Override
    public void segmentRef(Subscription subscription, SegmentRef ref, RespHeader header) {
        byte[] bytes = ref.url() != null
                ? server.fetch(ref.url())
                : server.segment(
                        ref.segmentId(), CanonicalJson.write(CanonicalJson.canonicalScopes(subscription.scopes)));
        if (!ref.segmentId().equals("sha256:" + CanonicalJson.sha256Hex(bytes))) {
            throw new IllegalStateException("segment " + ref.segmentId() + " does not match its content address"
                    + " (§5.1); this round is not applied");
        }
        if (!options.decode) {
            return;
        }
        if (ref.mediaType() == MediaType.ROWS) {
            out.println(DebugJson.toText(DebugJson.render(RowsSegment.decode(bytes))));
        } else {
            err.println("segment " + ref.segmentId() + " is a SQLite image (§5.3): save it with `segment "
                    + ref.segmentId() + " --sub " + subscription.id + " --out <file>`");
        }
    }

    /** The subscriptions named in {@code ids}, every one when there are none. */
    static List<Subscription> named(ClientState state, List<String> ids) {
        if (ids.isEmpty()) {
            if (state.subscriptions.isEmpty()) {
                throw new IllegalArgumentException(
                        "no subscriptions: add one with `subscribe <id> <table>" + " <variable>=<value>`");
            }
            return new ArrayList<>(state.subscriptions.values());
        }
        List<Subscription> subs = new ArrayList<>();
        for (String id : ids) {
            Subscription s = state.subscriptions.get(id);
            if (s == null) {
                throw new IllegalArgumentException("no subscription '" + id + "' in the state file");
            }
            subs.add(s);
        }
        return subs;
    }
}
