/**
 * The SSP2 protocol engine, independent of any transport binding. Its files follow the specification's table
 * of contents:
 *
 * <ul>
 *   <li>The round (§1.4–§1.7, §2.4): {@link dev.syncular.server.sync.SyncEngine} orchestrates one round —
 *       enter, admit, plan, verify, release — for every binding (§1.1 {@code POST /sync}, §8.7 socket rounds
 *       call the same {@code handle}); {@link dev.syncular.server.sync.RoundAdmission} (fairness: per-actor and
 *       per-partition concurrency limits every round is admitted against first, {@code sync.rate_limited});
 *       {@code RequestValidation} (§1.7, and what storage can hold, checked
 *       before the round's first read), {@code RoundState} (per-request state: the memoized §3.2 rule 3 scope
 *       resolution, the client schema, the §1.4 response budget), {@code PlannedResponse} (sections held
 *       back for the §4.6 horizon recheck), {@code ServeGateCheck} over {@link dev.syncular.server.sync.ServeGates}
 *       (the §2.4 read-verify-refuse serve gate).</li>
 *   <li>Push (§6, §2.3, §3.4): {@code CommitPush} (commits, idempotent replay, atomicity), {@code PushOperations}
 *       (operations in order, {@link dev.syncular.server.sync.ConflictRules} §6.2, §5.10 CRDT merges through
 *       {@link dev.syncular.server.sync.CrdtMerger}: the {@link dev.syncular.server.sync.CrdtMergerRegistry} of
 *       {@link dev.syncular.server.sync.CrdtTypeMerger}s by {@code crdtType}, §5.10.2; the built-in {@code yjs-doc}
 *       merger is in {@code crdt.yjs}), {@code DeclaredReferences} (§6.11), {@code BlobPresence}
 *       (§5.9.6 / §6.6), {@code UniqueKeyRejection} (a declared unique index's refusal as §10.2
 *       {@code sync.constraint_violation}, §6.4).</li>
 *   <li>Application policy on the push path (§6.7–§6.9): the seams {@link dev.syncular.server.sync.RowValidator},
 *       {@link dev.syncular.server.sync.CommitValidator} and {@link dev.syncular.server.sync.ReactionPlanner}
 *       gathered in {@link dev.syncular.server.sync.WritePolicy}; what they see,
 *       {@link dev.syncular.server.sync.OperationEvidence}, {@link dev.syncular.server.sync.CommitEvidence} and the
 *       candidate-state {@link dev.syncular.server.sync.CandidateReader} ({@code TransactionCandidates}); how they
 *       reject, {@link dev.syncular.server.sync.ValidationRejection}; {@code RowValidation} and {@code CommitPolicy}
 *       run them in the pinned order.</li>
 *   <li>Pull (§4): {@code Pull} (§4.5 incremental commits, §3.3 revocation, §4.6 expiry), {@code Bootstrap} and
 *       {@code BootstrapResume} (§4.7), {@code RowsLane} and {@code RowsPageEncoder} (§5.2), {@code ImageLane}
 *       (§5.3), {@code SegmentDelivery} (§5.4, §5.5, §5.7).</li>
 *   <li>Client records (§4.5, §8.1): {@code ClientRecords}; realtime deltas (§8.1 registrations, §8.2):
 *       {@link dev.syncular.server.sync.RealtimeDelta}, reusing {@code Pull}'s change filtering.</li>
 *   <li>Scopes (§3.1–§3.4): {@link dev.syncular.server.sync.EffectiveScopes} and the host's
 *       {@link dev.syncular.server.sync.ScopeResolver}; §9 older-client rows: {@code ClientRows}.</li>
 *   <li>Auth leases (§7.3): {@link dev.syncular.server.sync.AuthLeases} (issuance and sliding refresh on a
 *       live-authorized round, the outage enforcement seam with {@code sync.auth_lease_required} /
 *       {@code sync.auth_lease_revoked}, revocation) over the storage's
 *       {@link dev.syncular.server.storage.AuthLeaseStore}; the host signals an outage with
 *       {@link dev.syncular.server.sync.ScopeResolverOutage}. An idempotency record the storage cannot read
 *       ({@code sync.storage.idempotency_record_unreadable}) is answered with the §6.3 retryable
 *       {@code sync.idempotency_cache_miss} (the conformance host's fault decorates its instances' storage).</li>
 *   <li>Blobs (§5.9): {@link dev.syncular.server.sync.BlobService}, the upload / download / sweep logic of the
 *       blob routes.</li>
 *   <li>Operations: {@link dev.syncular.server.sync.SyncObserver}, what the engine tells metrics and the admin
 *       event tail (rounds and commits with their partition, pulled rows, segment bytes, SQLite images,
 *       serve-gate refusals) without
 *       depending on them; the edge implements it. {@link dev.syncular.server.sync.Tracing}, the spans of rounds,
 *       pushes, pulls, segment builds and downloads (OpenTelemetry's API; {@code Tracing.OFF} without tracing),
 *       also used by the webhooks, remote operations and the realtime fan-out.</li>
 * </ul>
 *
 * <p>May depend on {@code wire}, {@code schema}, {@code errors}, {@code storage}, {@code segments} and
 * {@code blobs} (the stores) — never on {@code http}, {@code ops}, {@code auth}, {@code config} or
 * {@code conformance}, which depend on it. Only the engine's API is public; its parts are package-private.
 *
 * <p>Configuration (issue 46: each feature maps its own {@code syncular.*} group): {@code FairnessConfig} ({@code syncular.fairness.*}, the round admission limits and push rates) and {@code LeasesConfig} ({@code syncular.leases.*}, §7.3, with its one cross-field check {@code problems}).
 */
package dev.syncular.server.sync;
