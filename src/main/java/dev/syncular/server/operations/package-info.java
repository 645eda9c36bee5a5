/**
 * Remote operations (REMOTE.md): the deployment-time registry of queries loaded from the typegen queries IR
 * document ({@code syncular.operations.queries.path}, {@code queryIrVersion} 4), the operation ids generated
 * clients send ({@code sha256:<hex of the document's bytes>/<name>}), variant selection by activation mask and
 * bind values ({@code QueryBinding}), the §2 partition rewrite ({@code PartitionRewrite}: every planned table
 * occurrence becomes a derived relation bound to the authenticated partition, request values only ever bind
 * parameters), §2.1 authorization ({@code ScopeCoverage} for {@code scoped} queries, {@code QueryAuthorizer} for
 * {@code privileged} ones), execution in one read-only snapshot with the partition's {@code maxCommitSeq}
 * ({@code QueryExecutor}), the §4 tagged value encoding ({@code TaggedValueCodec}) and the §5/§7 request and
 * response shapes ({@code RemoteOperations}), the §6 live query watches ({@code QueryWatches}: one
 * {@code WatchSession} per socket, {@code WatchMessage} shapes, {@code CommitTables} for the tables a notified
 * commit touched, {@code WatchRuns} bounding concurrent runs) and the metrics hook ({@code OperationObserver}).
 *
 * <p>It depends on {@code schema}, {@code errors}, {@code sync} (scope resolution, the request context) and the
 * storage roles {@code storage.RowTables} (the SQL names a statement is rewritten to) and {@code storage.QueryReads}
 * (where a snapshot runs — the primary or a read replica — and the tables of notified commits; the PostgreSQL one is
 * {@code storage.postgres.PostgresQueryReads}, built by {@code boot}). It names no SQL client type. The HTTP binding lives at the
 * edge ({@code http.OperationsResource}), the watch socket and its commit signal in {@code realtime}
 * ({@code OperationWatchEndpoint}, {@code PodOperationWatches}), the meters in {@code observability.OperationMetrics}.
 */
package dev.syncular.server.operations;
