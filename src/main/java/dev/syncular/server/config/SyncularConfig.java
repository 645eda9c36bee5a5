package dev.syncular.server.config;

import io.quarkus.runtime.configuration.MemorySize;
import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithConverter;
import io.smallrye.config.WithDefault;
import io.smallrye.config.WithName;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Server configuration under {@code syncular.*}.
 *
 * <p>Property names (kebab-case): {@code syncular.mount}, {@code syncular.max-request-bytes},
 * {@code syncular.schema.path}, {@code syncular.schema.window}, {@code syncular.storage.pg-schema},
 * {@code syncular.limits.max-operations-per-request}, {@code syncular.limits.inline-segment-max-bytes},
 * {@code syncular.limits.segment-ttl}, {@code syncular.dev-auth.enabled},
 * {@code syncular.dev-auth.partition}, {@code syncular.dev-auth.allowed-scopes}, {@code syncular.auth.jwt.*}
 * (docs/AUTHENTICATION.md).
 */
@ConfigMapping(prefix = "syncular")
public interface SyncularConfig {

    /** The bundled example schema (classpath resource), used when {@code syncular.schema.path} is unset. */
    String BUNDLED_SCHEMA_RESOURCE = "schema/quickstart.syncular.ir.json";

    /**
     * Path prefix {@code <mount>} of the protocol routes (§1.1), e.g. {@code /api/sync}; unset or
     * {@code /} mounts them at the root ({@code /sync}, {@code /segments/{id}}).
     *
     * <p>Read at start-up: the routes live at the root and {@code http.MountRoute} reroutes requests under the
     * mount to them (outside it, 404). {@code /q/health}, and {@code /q/metrics} on the management port, stay where
     * they are.
     */
    Optional<String> mount();

    /**
     * Cap on a {@code POST <mount>/sync} body, applied to the bytes received and again to the inflated bytes
     * of a {@code Content-Encoding: gzip} body; larger bodies get 413 {@code sync.invalid_request}. Keep it
     * below {@code quarkus.http.limits.max-body-size} (the server-wide backstop, answered without a JSON
     * body).
     */
    @WithDefault("16M")
    MemorySize maxRequestBytes();

    Schema schema();

    Storage storage();

    Limits limits();

    DevAuth devAuth();

    /** Built-in production authentication ({@code syncular.auth.*}). */
    Auth auth();

    Pruning pruning();

    /**
     * The backfill checkpoints this build declares ({@code syncular.checkpoints[i].partition}, {@code .name},
     * {@code .schema-version}): installed by the startup migration; while one is pending only processes that
     * declare it may serve its partition (§2.4).
     */
    Optional<List<Checkpoint>> checkpoints();

    Admin admin();

    /** {@code syncular.realtime.*}: the §8 realtime channel, {@code GET <mount>/realtime}. */
    Realtime realtime();

    /**
     * The conformance host ({@code /__conformance}, docs/CONFORMANCE.md): host-controlled authentication,
     * scopes and clock for Syncular's cross-implementation catalog. Off by default; refused in prod.
     */
    Conformance conformance();

    SignedUrls signedUrls();

    /** {@code syncular.leases.*}: §7.3 auth leases (off by default). */
    Leases leases();

    /** The S3 bucket for segments and/or blobs; the client itself is configured under {@code quarkus.s3.*}. */
    S3 s3();

    Segments segments();

    Blobs blobs();

    /** {@code syncular.policy.*}: application policy — validators and reaction rules (§6.7–§6.9, docs/POLICY.md). */
    Policy policy();

    /** {@code syncular.reactions.*}: delivery of durable reactions (§6.9) to a webhook. */
    Reactions reactions();

    /**
     * {@code syncular.fairness.*}: per-actor and per-partition concurrency limits on sync rounds ({@code POST /sync}
     * and socket rounds alike), per pod. A round past a limit is answered 429 {@code sync.rate_limited} with
     * {@code Retry-After} (in-band on a socket) before the round reads or writes storage (the HTTP body is already
     * read and decoded by then). {@code 0} turns a limit off.
     */
    Fairness fairness();

    /**
     * {@code syncular.tenants.*}: the loudest partitions (tenants) of the last minute — database time, committed
     * bytes, fan-out bytes, refusals — counted per pod, exported as bounded gauges and published to the shared
     * storage for the console's Tenants page.
     */
    Tenants tenants();

    interface Tenants {
        /**
         * How many partitions each figure names: the gauges {@code syncular_tenant_top_*} carry at most this many
         * series each, and each pod publishes its top this-many in every figure.
         */
        @WithDefault("20")
        int topN();

        /**
         * Time between two refreshes of the gauges and publications of this pod's top partitions (scheduler
         * {@code every}); {@code off} stops both on this pod. A pod not heard from for three intervals drops out of
         * the merged view.
         */
        @WithDefault("10s")
        @WithConverter(ScheduleInterval.class)
        Duration publishInterval();
    }

    interface Fairness {
        /** Rounds of one actor (of one partition) in flight on this pod. */
        @WithDefault("8")
        int maxRoundsPerActor();

        /** Rounds of one partition in flight on this pod, every actor together. */
        @WithDefault("64")
        int maxRoundsPerPartition();

        /**
         * Push operations in the rounds of one actor in flight on this pod; a round is always admitted when the
         * actor has none in flight, so a single commit of any size (up to {@code limits.max-operations-per-request})
         * can proceed alone.
         */
        @WithDefault("2000")
        long maxPushOperationsPerActor();

        /**
         * Rounds in flight on this pod, every partition together: past it a round is refused, not queued (each round
         * holds its planned response in memory and waits for a pooled connection).
         */
        @WithDefault("256")
        int maxRounds();

        /**
         * Rounds of one partition in flight on this pod that start or resume a bootstrap (§4.7), every actor together
         * ({@code partition_bootstraps}); {@code 0} = off.
         */
        @WithDefault("16")
        int maxBootstrapsPerPartition();

        /** Rounds in flight on this pod that start or resume a bootstrap, every partition together; {@code 0} = off. */
        @WithDefault("64")
        int maxBootstraps();

        /**
         * Push operations per second of one partition on this pod, every actor together ({@code
         * partition_push_operations}); a round is admitted while the partition's bucket is above zero and takes its
         * whole cost, so one commit of any size proceeds and the debt is repaid before the next. {@code 0} = off.
         */
        @WithDefault("5000")
        int pushOperationsPerSecondPerPartition();

        /** Pushed bytes (row ids and payloads) per second of one partition on this pod; {@code 0} = off. */
        @WithDefault("16M")
        MemorySize pushBytesPerSecondPerPartition();

        /** Push operations per second of one actor of one partition on this pod; {@code 0} = off. */
        @WithDefault("2000")
        int pushOperationsPerSecondPerActor();

        /** Pushed bytes per second of one actor of one partition on this pod; {@code 0} = off. */
        @WithDefault("8M")
        MemorySize pushBytesPerSecondPerActor();

        /** How much of its rate a push bucket holds: a quiet tenant may push this many seconds' worth at once. */
        @WithDefault("2s")
        Duration pushBurst();

        /**
         * Whether the push rates are each pod's ({@code pod}) or the deployment's ({@code deployment}): each pod then
         * admits its share, the rate divided by the live pods the shared storage knows of.
         */
        @WithDefault("deployment")
        PushRateScope pushRateScope();

        /**
         * How long a round refused by a fairness limit is held before its 429 goes out, at most its own wait (taken
         * from the {@code Retry-After} it is told); {@code 0s} answers at once.
         */
        @WithDefault("1s")
        Duration refusalHold();

        /** {@link #pushRateScope()}. */
        enum PushRateScope {
            POD,
            DEPLOYMENT
        }

        /** The {@code Retry-After} of a refusal (rounded up to whole seconds; {@code details.retryAfterMs}). */
        @WithDefault("1s")
        Duration retryAfter();
    }

    /**
     * A signed webhook endpoint: a JSON {@code POST} signed with {@code Syncular-Signature} (HMAC-SHA256 under
     * {@code secret}), every call bounded. One shape for every webhook the server calls — the whole-commit validator
     * ({@code syncular.policy.validator-webhook.*}), the default reaction webhook ({@code syncular.reactions.webhook.*})
     * and the per-type reaction endpoints ({@code syncular.reactions.endpoints.<name>.*}); each use declares its own
     * defaults by overriding the methods. Checked at start-up ({@link SyncularConfigValidator}): a set {@code url} is
     * an absolute http(s) URL and comes with a {@code secret}, the pool and the answer cap are positive, the timeouts
     * more than 0s.
     */
    interface WebhookEndpoint {
        /** The endpoint; unset or blank = this webhook is off. */
        Optional<String> url();

        /** HMAC-SHA256 key of the {@code Syncular-Signature} header (required with a url). */
        Optional<String> secret();

        /** Hard limit of one whole call. */
        Duration timeout();

        /** TCP connect to the endpoint, and the wait for a free pooled connection. */
        Duration connectTimeout();

        /** The longest silence while the answer is awaited or read; then the call is cut. */
        Duration readTimeout();

        /** Connections to the endpoint, at most (calls beyond wait up to {@code connect-timeout}). */
        int poolSize();

        /** The answer's body, at most; a longer one fails the call. */
        MemorySize maxAnswerSize();

        /** Consecutive failures (no answer, 5xx) that open the circuit breaker; {@code 0} = no breaker. */
        int breakerFailures();

        /** How long an open breaker fails calls at once (no call) before one trial call is let through. */
        Duration breakerOpenFor();

        /** Whether a url is set, i.e. whether this webhook is on. */
        default boolean configured() {
            return url().filter(u -> !u.isBlank()).isPresent();
        }
    }

    interface Policy {
        /**
         * A JSON policy document ({@code validators}, {@code commitValidators}, {@code reactions}; docs/POLICY.md),
         * compiled against the schema at start-up: an unknown table or column stops the boot. Unset: none.
         */
        Optional<String> file();

        /** A whole-commit validator (§6.8) answered by an HTTPS endpoint; unset url = no webhook validator. */
        ValidatorWebhook validatorWebhook();

        /**
         * The §6.8 validator's endpoint. A call runs while the commit holds its partition lock (§6.8 runs the
         * validator inside the partition transaction): one that times out or fails (connection error, 5xx, an
         * answer above {@code max-answer-size}) answers the round {@code sync.internal_error} (retryable), nothing
         * applies; an open breaker answers the same with {@code details.reason = circuit_open}.
         */
        interface ValidatorWebhook extends WebhookEndpoint {
            /**
             * Registered queries whose rows the webhook receives as evidence (SPEC §6.7 / §6.8
             * {@code queryAuthoritative}, run in the push transaction): a JSON array of
             * {@code {name, query, table?, params}} (docs/POLICY.md). Unset: none.
             */
            Optional<String> evidence();

            @Override
            @WithDefault("2s")
            Duration timeout();

            @Override
            @WithDefault("500ms")
            Duration connectTimeout();

            @Override
            @WithDefault("1s")
            Duration readTimeout();

            @Override
            @WithDefault("32")
            int poolSize();

            @Override
            @WithDefault("64K")
            MemorySize maxAnswerSize();

            @Override
            @WithDefault("5")
            int breakerFailures();

            @Override
            @WithDefault("10s")
            Duration breakerOpenFor();
        }
    }

    interface Reactions {
        /**
         * The webhook every reaction is delivered to ({@code syncular.reactions.webhook.*}); unset url = reactions
         * are stored but not delivered. (Until 0.x these were {@code syncular.reactions.webhook-url},
         * {@code webhook-secret}, {@code webhook-timeout}, ...: still read, with a start-up warning,
         * {@link RenamedProperties}.)
         */
        ReactionWebhook webhook();

        /**
         * A reaction endpoint's bounds. No circuit breaker by default: a delivery that fails is rescheduled with
         * backoff and spends one of its attempts (§6.9), which is the breaker; failing calls at once would spend
         * attempts without asking the endpoint.
         */
        interface ReactionWebhook extends WebhookEndpoint {
            /** Hard limit of one delivery call; a timeout is a retryable failure. */
            @Override
            @WithDefault("10s")
            Duration timeout();

            @Override
            @WithDefault("2s")
            Duration connectTimeout();

            @Override
            @WithDefault("10s")
            Duration readTimeout();

            /** Connections to each reaction endpoint, at most. */
            @Override
            @WithDefault("8")
            int poolSize();

            @Override
            @WithDefault("64K")
            MemorySize maxAnswerSize();

            @Override
            @WithDefault("0")
            int breakerFailures();

            @Override
            @WithDefault("10s")
            Duration breakerOpenFor();
        }

        /**
         * Named endpoints for chosen reaction types: a reaction whose type one of them lists goes there instead of
         * {@code webhook.url}. The name ({@code [a-z0-9]+}) only identifies the endpoint in the configuration.
         */
        Map<String, Endpoint> endpoints();

        /**
         * A webhook for the reaction types it lists ({@code url} required); every bound it does not set is the
         * default webhook's ({@code syncular.reactions.webhook.*}).
         */
        interface Endpoint extends WebhookEndpoint {
            /** The reaction types delivered here; a type may be listed by one endpoint only. */
            List<String> types();

            /** HMAC-SHA256 key of its {@code Syncular-Signature} header; unset: {@code webhook.secret}. */
            @Override
            @WithDefault("${syncular.reactions.webhook.secret:}")
            Optional<String> secret();

            @Override
            @WithDefault("${syncular.reactions.webhook.timeout}")
            Duration timeout();

            @Override
            @WithDefault("${syncular.reactions.webhook.connect-timeout}")
            Duration connectTimeout();

            @Override
            @WithDefault("${syncular.reactions.webhook.read-timeout}")
            Duration readTimeout();

            @Override
            @WithDefault("${syncular.reactions.webhook.pool-size}")
            int poolSize();

            @Override
            @WithDefault("${syncular.reactions.webhook.max-answer-size}")
            MemorySize maxAnswerSize();

            @Override
            @WithDefault("${syncular.reactions.webhook.breaker-failures}")
            int breakerFailures();

            @Override
            @WithDefault("${syncular.reactions.webhook.breaker-open-for}")
            Duration breakerOpenFor();
        }

        /** Time between claim passes of each pod's worker (scheduler {@code every}; {@code off} disables it). */
        @WithDefault("1s")
        @WithConverter(ScheduleInterval.class)
        Duration pollInterval();

        /** How long a claimed reaction stays leased to the worker that claimed it. */
        @WithDefault("30s")
        Duration lease();

        /** Reactions claimed per pass. */
        @WithDefault("20")
        int batchSize();

        /** Retry delay {@code min(max-backoff, initial-backoff × 2^(attempt − 1))}. */
        @WithDefault("1s")
        Duration initialBackoff();

        @WithDefault("5m")
        Duration maxBackoff();

        /** Completed reactions are deleted after this. */
        @WithDefault("30d")
        Duration completedRetention();

        /** Dead-lettered reactions are deleted after this. */
        @WithDefault("90d")
        Duration deadLetterRetention();
    }

    /** Which store backs bytes: {@code embedded} (PostgreSQL, the zero-setup default) or {@code s3}. */
    enum StoreKind {
        EMBEDDED,
        S3
    }

    interface S3 {
        /** Bucket name; required when a store is {@code s3}. */
        Optional<String> bucket();

        /**
         * Namespace inside the bucket, e.g. {@code syncular/} (keys become {@code syncular/seg/sha256/...}); unset =
         * none. (Optional: SmallRye Config treats an empty default as missing.)
         */
        Optional<String> keyPrefix();

        /** TTL of provider-presigned GET/PUT URLs (§5.4: at most 15 minutes). */
        @WithDefault("10m")
        Duration presignTtl();
    }

    /** Bootstrap segment storage (§5): {@code syncular.segments.store=embedded|s3}. */
    interface Segments {
        @WithDefault("embedded")
        StoreKind store();

        /**
         * §5.3 SQLite images: built for clients advertising {@code accept} bit 2 when a table's snapshot
         * exceeds one rows page. {@code false} serves only stored images and the rows lane.
         */
        @WithDefault("true")
        boolean sqliteImages();

        /**
         * Threads of the pod's own pool for §5.3 image builds (reading a whole table into a SQLite file): builds past
         * it queue, and never take the workers of pushes and page encoding.
         */
        @WithDefault("2")
        int imageBuildThreads();

        /**
         * Image builds of one partition running at once on this pod; a further cold bootstrap of the partition is
         * served on the rows lane (§5.2) instead. {@code 0} = no limit.
         */
        @WithDefault("1")
        int imageBuildsPerPartition();

        /**
         * Time between passes forgetting expired segments (§5.1; scheduler {@code every} and first delay, so more than
         * {@code 0s}, no {@code off}).
         */
        @WithDefault("1h")
        Duration sweepInterval();

        /**
         * Memory for the embedded store's cache of recently published or read segment bytes (§5.5 downloads right
         * after their publication are not read back from PostgreSQL). Absent: an eighth of the heap, at most 64 MiB.
         * {@code 0}: off.
         */
        Optional<MemorySize> cache();
    }

    /** File attachments (§5.9): {@code syncular.blobs.*}. */
    interface Blobs {
        @WithDefault("embedded")
        StoreKind store();

        /** §5.9.3 size cap; larger uploads and grants get 413 {@code blob.too_large}. */
        @WithDefault("100M")
        MemorySize maxBytes();

        /** §5.9.2 orphan sweep: blobs unreferenced for longer than this after upload are deleted. */
        @WithDefault("24h")
        Duration orphanGrace();

        /** Time between orphan sweeps (scheduler {@code every}); {@code off} disables the job. */
        @WithDefault("1h")
        @WithConverter(ScheduleInterval.class)
        Duration sweepInterval();
    }

    /**
     * §5.4 native signed segment URLs ({@code syncular.signed-urls.*}), offered to clients that advertise
     * {@code accept} bit 3. Every process serving the same database must share the key.
     */
    interface SignedUrls {
        /**
         * Whether to offer native signed URLs (embedded segment store). {@code false} serves segments only
         * through the authenticated {@code GET <mount>/segments/{id}}.
         */
        @WithDefault("true")
        boolean enabled();

        /**
         * HMAC key (at least 32 bytes of text), the same on every pod. Unset: {@code prod} refuses to start
         * while signed URLs are enabled; {@code dev}/{@code test} derive a fixed development key from the
         * storage schema (public, so forgeable: never for production).
         */
        Optional<String> key();

        /** At most 15 minutes (§5.4): the revocation window of already issued URLs. */
        @WithDefault("10m")
        Duration ttl();

        /** Public URL of the segment route, e.g. {@code https://sync.example.com/segments}. */
        Optional<String> baseUrl();
    }

    /**
     * §7.3 auth leases: a {@code LEASE} frame issued and slid on every round the host's scope resolver answered, and
     * lease-authorized rounds while the resolver signals an outage. Off by default: no frame, no lease lookups.
     */
    interface Leases {
        /** Whether to issue leases and serve outages from them. */
        @WithDefault("false")
        boolean enabled();

        /** The lease TTL: {@code expiresAtMs = issuedAtMs + ttl}, slid on every live-authorized round. */
        @WithDefault("24h")
        Duration ttl();

        /**
         * HMAC key sealing the lease records at rest (at least 32 bytes of text), the same on every pod. Unset:
         * {@code prod} refuses to start while leases are enabled; {@code dev}/{@code test} derive a public
         * development key from the storage schema (never for production).
         */
        Optional<String> key();
    }

    interface Conformance {
        @WithDefault("false")
        boolean enabled();
    }

    interface Checkpoint {
        String partition();

        String name();

        int schemaVersion();
    }

    /** The realtime channel (§8): WebSocket at {@code <mount>/realtime}, deltas fanned out across pods. */
    interface Realtime {
        /** Off: upgrades are refused (404 {@code sync.not_found}); commits are still announced for other pods. */
        @WithDefault("true")
        boolean enabled();

        /** Open sockets per pod; one more is refused with 429 {@code sync.websocket_connection_limit}. */
        @WithDefault("10000")
        int maxConnections();

        /** An encoded delta above this size is replaced by a {@code delta-too-large} wake-up (§8.3). */
        @WithDefault("256K")
        MemorySize maxDeltaBytes();

        /**
         * Delta bytes per second one partition fans out to the sockets of this pod (2 s of burst); past it the
         * partition's deltas become {@code catchup_required} wake-ups and its clients pull. {@code 0} = off.
         */
        @WithDefault("32M")
        MemorySize fanoutBytesPerSecondPerPartition();

        /** Deltas sent but not yet acknowledged per connection; one more drops to a wake-up (§8.2). */
        @WithDefault("64")
        int maxUnackedDeltas();

        /** §8.5 heartbeat interval; a socket not heard from (any frame, pong included) for 3 intervals is closed. */
        @WithDefault("30s")
        Duration heartbeatInterval();

        /** Drain on shutdown: how long in-flight socket rounds may take before the remaining sockets close. */
        @WithDefault("10s")
        Duration shutdownGrace();

        /** §8.6 presence; off: {@code presence} events are ignored like any unknown event (§8.1). */
        @WithDefault("true")
        boolean presenceEnabled();

        /** §8.6.2 size cap of a published presence document (serialized JSON); over it: {@code presence.too_large}. */
        @WithDefault("16K")
        MemorySize maxPresenceBytes();

        /**
         * Presence publishes a second one connection may send on (issue 45); past it, and past {@link
         * #presenceBurst}, the newest document per scope key is held and sent when the rate allows. {@code 0}: no cap.
         */
        @WithDefault("10")
        double presenceRate();

        /** Presence publishes one connection may send at once before {@link #presenceRate} applies. */
        @WithDefault("20")
        int presenceBurst();

        /**
         * §8.7 backpressure: bytes a connection may have waiting to be written; a delta past it is replaced by a
         * {@code catchup-required} wake-up, and any message past twice it closes the connection (code 4290).
         */
        @WithDefault("256K")
        MemorySize outboundBufferBytes();

        /**
         * A connection whose outbound buffer has not emptied once this long after a delta was refused for the budget
         * is closed (code 4290).
         */
        @WithDefault("30s")
        Duration outboundStuckTimeout();

        /**
         * Browser authentication of the upgrade (RFC 6750 §2.3): the query parameter of the upgrade URL that may carry
         * the bearer token when the request has no {@code Authorization} header (a browser WebSocket cannot set
         * one). {@code off}: tokens are read from the header only.
         */
        @WithDefault("access_token")
        String tokenQueryParameter();

        /**
         * The cookie that may carry the bearer token of the upgrade when neither the {@code Authorization} header nor
         * the query parameter does. {@code off} (the default): no cookie is read.
         */
        @WithDefault("off")
        String tokenCookie();
    }

    /** The admin API ({@code /admin/*}): enabled only when a bearer token is configured. */
    interface Admin {
        /** The admin API's bearer token and the console's sign-in; at least 32 bytes (checked at start-up). */
        Optional<String> token();

        /**
         * Wrong admin credentials (API token, console sign-in) one source address may present before it must wait,
         * 1 s doubling to 60 s after each further one, with 429 {@code sync.rate_limited} and {@code Retry-After}
         * ({@code http.CredentialAttempts}). {@code 0}: no throttle.
         */
        @WithDefault("5")
        int freeAttempts();

        /** Size of this pod's in-memory ring of operational events ({@code GET <mount>/admin/events}). */
        @WithDefault("1000")
        int eventBuffer();

        /** The operator console at {@code <mount>/console}, served whenever {@link #token()} is set. */
        Console console();
    }

    /** {@code syncular.admin.console.*}: the operator console's sessions. */
    interface Console {
        /** How long a console sign-in lasts (fixed at sign-in; the session cookie and its stored row expire). */
        @WithDefault("30m")
        Duration sessionTtl();

        /**
         * Whether the session cookie carries {@code Secure} (sent over HTTPS only; browsers also keep it on
         * {@code http://localhost}). Turn off only for a console reached over plain HTTP on a trusted network.
         */
        @WithDefault("true")
        boolean secureCookie();

        /**
         * The role that signs a JWT in to the console (JWT authentication configured, {@code syncular.auth.jwt.*}):
         * a token that passes the server's JWT checks and whose {@link #roleClaim()} holds this value. Unset: the
         * console takes the admin token only.
         */
        Optional<String> role();

        /**
         * The claim holding the roles of a console JWT: a string or an array of strings; a dotted path walks nested
         * objects ({@code realm_access.roles}).
         */
        @WithDefault("roles")
        String roleClaim();
    }

    /**
     * {@code syncular.embedded-postgres.*}: owned by {@link EmbeddedPostgresConfigSourceFactory} (the dev/test
     * database), which reads them as plain properties; declared here only so this mapping accepts them.
     */
    EmbeddedPostgres embeddedPostgres();

    /** The normalized mount prefix: empty for the root, else {@code /segment[/segment...]} without a trailing slash. */
    default String mountPrefix() {
        return normalizeMount(mount().orElse(""));
    }

    static String normalizeMount(String raw) {
        String m = raw.trim();
        while (m.endsWith("/")) {
            m = m.substring(0, m.length() - 1);
        }
        if (m.isEmpty()) {
            return "";
        }
        return m.startsWith("/") ? m : "/" + m;
    }

    interface EmbeddedPostgres {
        Optional<String> url();

        Optional<String> enabled();

        Optional<String> port();

        Optional<String> dataDir();

        Optional<String> binDir();
    }

    interface Schema {
        /** File system path of the schema IR JSON (§2.4); unset = the bundled quickstart schema. */
        Optional<String> path();

        /**
         * The §9 schema window: file paths of the older schema IR documents still served beside the current one
         * ({@code path}), in any order, e.g. {@code /etc/syncular/schema/v1.syncular.ir.json}. A client on one of
         * their versions keeps syncing through its own codec; every other version gets the schema floor naming the
         * oldest. Checked at start-up against the current schema (§9 rules: existing tables, columns, codecs,
         * primary keys, references and scope patterns identical, appended columns nullable, versions distinct and
         * older than the current one, each listed in the current schema's {@code schemaVersions} history when it
         * has one). Unset: only the current version is served.
         */
        Optional<List<String>> window();
    }

    interface Storage {
        /** The storage namespace when {@code syncular.storage.pg-schema} is unset: a schema of its own. */
        String DEFAULT_PG_SCHEMA = "syncular";
        /** Where the tables went by default before 0.2.0. */
        String LEGACY_PG_SCHEMA = "public";

        /**
         * {@code syncular.storage.pg-schema}: PostgreSQL schema (namespace) holding the sync tables, created when
         * absent; unset: {@value #DEFAULT_PG_SCHEMA} ({@link #pgSchema()}).
         */
        @WithName("pg-schema")
        Optional<String> pgSchemaSetting();

        /** The storage namespace in use: the setting, else {@value #DEFAULT_PG_SCHEMA}. */
        default String pgSchema() {
            return pgSchemaSetting().map(String::trim).filter(v -> !v.isEmpty()).orElse(DEFAULT_PG_SCHEMA);
        }

        /**
         * Partition transactions (pushes) that may wait in this process's queue of one partition; one more is
         * answered 429 {@code sync.rate_limited} with {@code Retry-After} at once.
         */
        @WithDefault("1000")
        int maxQueuedPushesPerPartition();

        /**
         * {@code lock_timeout} of every push transaction ({@code SET LOCAL}); {@code 0} = none. A push that waits
         * longer for a lock (the partition row behind another pod's push, a schema upgrade's table lock) is
         * rolled back and answered 429 {@code sync.rate_limited}.
         */
        @WithDefault("10s")
        Duration lockTimeout();

        /**
         * {@code statement_timeout} of every statement on a pooled connection (the session default, and
         * {@code SET LOCAL} in every push transaction); {@code 0} = none. A statement cut off is answered like a
         * lock timeout (429 {@code sync.rate_limited}), so a runaway read never holds a connection for longer.
         */
        @WithDefault("30s")
        Duration statementTimeout();

        /**
         * Requests that may wait for a connection of the pool (beyond {@code quarkus.datasource.reactive.max-size}
         * in use); one more is answered 429 {@code sync.rate_limited} at once.
         */
        @WithDefault("1000")
        int poolMaxWaiters();

        /** How long a request waits for a pooled connection before it is answered 429 {@code sync.rate_limited}. */
        @WithDefault("10s")
        Duration poolWaitTimeout();

        /**
         * Hot standbys of the database that pull-only rounds may read from (docs/SCALING.md, "Reads from replicas"):
         * reactive URLs {@code postgresql://host:port/db}, with the datasource's user and password unless the URL
         * gives its own. Absent or empty: every read on the primary. Env {@code SYNCULAR_STORAGE_REPLICAS}
         * (comma-separated).
         */
        Optional<List<String>> replicas();

        /** Replay lag past which a replica leaves rotation (it comes back by itself once within it). */
        @WithDefault("5s")
        Duration replicaMaxLag();

        /** Time between two checks of every replica's replay lag. */
        @WithDefault("1s")
        Duration replicaCheckInterval();

        /** Connections of each replica's pool. */
        @WithDefault("20")
        int replicaPoolMaxSize();

        /**
         * Memory for this pod's newest commits, kept whole after their push committed so the pulls that follow them
         * (§4.5 log windows this pod committed entirely) are answered without reading the log; estimated bytes,
         * over every partition, least recently pushed partition dropped first. {@code 0}: every window read from
         * the log.
         */
        @WithDefault("8M")
        MemorySize recentCommits();

        /**
         * How long a scheduled job's claim (a lease row in {@code sync_jobs}) holds without renewal: the running pod
         * renews it every third of this, and a pod that died mid-run leaves the job to the others after it.
         */
        @WithDefault("60s")
        Duration jobLease();
    }

    /** §4.6 scheduled pruning of the commit log ({@code syncular.pruning.*}). */
    interface Pruning {
        @WithDefault("true")
        boolean enabled();

        /**
         * Time between pruning passes (the scheduler's {@code every} and first delay, so more than {@code 0s}, no
         * {@code off}: {@code enabled=false} turns pruning off).
         */
        @WithDefault("1h")
        Duration interval();

        /** Clients whose cursor record moved within this window hold the horizon back. */
        @WithDefault("14d")
        Duration activeWindow();

        /** The newest commits always retained. */
        @WithDefault("1000")
        int keepNewestCommits();

        /**
         * Push results (§2.3 idempotency records) older than this are deleted. A client that replays a commit
         * after its result was deleted gets it applied as a new commit (§2.3 allows pruning); a client that
         * received the result never replays it (§7.2.1 journals it with the outbox removal).
         */
        @WithDefault("30d")
        Duration pushResultRetention();

        /** Commit sequences deleted per pruning transaction (each its own short transaction). */
        @WithDefault("2000")
        int batchCommits();

        /** Push results deleted per pruning statement. */
        @WithDefault("1000")
        int batchPushResults();
    }

    interface Limits {
        /** §6.1 operation cap across all commits of a request. */
        @WithDefault("500")
        int maxOperationsPerRequest();

        /** §5.7 rows segments smaller than this many bytes are inlined into the response. */
        @WithDefault("256K")
        MemorySize inlineSegmentMaxBytes();

        /** §5.1 segment lifetime. */
        @WithDefault("24h")
        Duration segmentTtl();

        /** {@code SUBSCRIPTION} frames per request; more fail the request with 400 {@code sync.invalid_request}. */
        @WithDefault("256")
        int maxSubscriptionsPerRequest();

        /**
         * §1.4 response budget of one sync round: once the planned response holds this many bytes, bootstraps stop
         * at the next page and later subscriptions end early with their resume token or cursor.
         */
        @WithDefault("8M")
        MemorySize maxResponseBytes();

        /**
         * One pushed row's encoded payload at most: a larger row is rejected at push time with
         * {@code sync.constraint_violation} ({@code details.reason} {@code row_too_large}).
         */
        @WithDefault("2M")
        MemorySize maxRowBytes();

        /**
         * One pushed value at most (text counted as UTF-8): a row with a larger one is rejected at push time with
         * {@code sync.constraint_violation} ({@code value_too_large}, the column in {@code details.fieldPaths}).
         */
        @WithDefault("1M")
        MemorySize maxValueBytes();

        /**
         * The pod-wide budget for bytes buffered on behalf of clients ({@code memory.BufferBudget}): request bodies
         * of the HTTP routes and of socket rounds (§8.7) as they arrive, plus the inflated bytes of gzip bodies
         * (§1.3). A request that finds it spent is answered 429 {@code sync.rate_limited} with {@code Retry-After}
         * before its body is read. Unset = a quarter of the JVM's maximum heap.
         */
        Optional<MemorySize> bufferBudget();

        /**
         * A request body that brings no byte for this long, or whose average rate since its head falls below
         * {@link #bodyMinRate} once this long has passed, is cut off with 408 {@code sync.invalid_request}.
         */
        @WithDefault("10s")
        Duration bodyTimeout();

        /** Minimum average arrival rate of a request body, in bytes per second; {@code 0} = only the idle cut. */
        @WithDefault("8K")
        MemorySize bodyMinRate();
    }

    /**
     * The built-in development authentication ({@code auth.DevHeaderAuthenticator} +
     * {@code auth.ConfiguredScopeResolver}). It trusts the {@code x-actor-id} header — never expose it.
     */
    interface DevAuth {
        /**
         * Whether the dev pair may serve requests. Defaults to {@code true}; the prod profile sets
         * {@code false} (application.properties), and a prod server whose active authenticator is still the
         * dev one refuses to start unless this is set to {@code true} explicitly.
         */
        @WithDefault("true")
        boolean enabled();

        /** Partition used when the request carries no {@code x-syncular-partition} header. */
        @WithDefault("default")
        String partition();

        /**
         * Allowed scopes of every actor (§3.2), as a JSON object of variable → array of values, e.g.
         * {@code {"list_id":["l1","l2"]}}; {@code "*"} allows any value. Unset = {@code ["*"]} for every
         * scope variable the schema declares.
         */
        Optional<String> allowedScopes();
    }

    interface Auth {
        Jwt jwt();
    }

    /**
     * JWT bearer authentication ({@code auth.JwtAuthenticator}), active as soon as one key source is set:
     * {@code jwks-url}, {@code public-key} or {@code public-key-location}. It then replaces the development
     * authentication. See docs/AUTHENTICATION.md.
     */
    interface Jwt {
        /** URL of the issuer's JSON Web Key Set, e.g. {@code https://idp.example.com/.well-known/jwks.json}. */
        Optional<String> jwksUrl();

        /** The verification key itself: a PEM public key ({@code -----BEGIN PUBLIC KEY-----...}), or a JWK/JWKS. */
        Optional<String> publicKey();

        /** A file (path, {@code file:} or {@code classpath:} URL) holding a PEM public key or a JWK/JWKS. */
        Optional<String> publicKeyLocation();

        /** Required {@code iss} value; unset = the issuer is not checked. */
        Optional<String> issuer();

        /** Accepted {@code aud} values (the token must name at least one); unset = the audience is not checked. */
        Optional<List<String>> audience();

        /** Tolerance applied to {@code exp}, {@code nbf} and {@code iat} (a token is valid until {@code exp} + skew). */
        @WithDefault("30s")
        Duration clockSkew();

        /** Accepted signature algorithms ({@code RS256}, {@code RS384}, {@code RS512}, {@code PS256}, {@code ES256}, ...). */
        @WithDefault("RS256")
        List<String> signatureAlgorithms();

        /** How often the JWKS is re-fetched in the background (keys are fetched at start-up, then cached). */
        @WithDefault("60m")
        Duration jwksRefreshInterval();

        /**
         * Least time between two fetches caused by tokens naming an unknown {@code kid} (one per interval, shared by
         * every request waiting for it); also the retry delay after a failed fetch.
         */
        @WithDefault("30s")
        Duration jwksMinRefetchInterval();

        /** Bound on one JWKS fetch: connecting, the answer's headers and its whole body. */
        @WithDefault("5s")
        Duration jwksFetchTimeout();

        /** Cap on the size of a JWKS answer; a larger one fails the fetch (the last good key set stays). */
        @WithDefault("256K")
        MemorySize jwksMaxBytes();

        /** Claim holding the actor id (a string). */
        @WithDefault("sub")
        String actorClaim();

        /** Claim holding the partition (a string); unset = every token gets {@code partition}. */
        Optional<String> partitionClaim();

        /** The partition when {@code partition-claim} is unset. */
        @WithDefault("default")
        String partition();

        /** Claim holding the allowed scopes as a JSON object of scope variable → array of values. */
        @WithDefault("syncular_scopes")
        String scopesClaim();

        /**
         * Scope variables read from individual claims: {@code syncular.auth.jwt.scope-claims.<variable>=<claim>};
         * the claim is a string or an array of strings. Merged with {@code scopes-claim}.
         */
        Map<String, String> scopeClaims();

        /** Whether a key source is configured, i.e. whether JWT authentication is active. */
        default boolean configured() {
            return jwksUrl().isPresent()
                    || publicKey().isPresent()
                    || publicKeyLocation().isPresent();
        }
    }
}
