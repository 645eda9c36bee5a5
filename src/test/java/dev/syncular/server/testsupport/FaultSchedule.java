package dev.syncular.server.testsupport;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;

/**
 * The faults of a seeded campaign ({@code faults.FaultCampaignIT}, {@code faults.FailoverCampaignIT}, {@code bench/chaos.sh}):
 * a sequence of {@link Step}s drawn from a {@link Random} of the seed, so a seed names one schedule, out of the kinds
 * the campaign's database can be put through ({@link CampaignDatabase#faults()}). A step fires after {@link Step#gapRounds} client
 * round attempts since the previous one (the campaign is driven by counts, not by time); a step that takes something
 * down keeps it down for {@link Step#downRounds} further attempts. The first steps are each
 * kind the campaign can inject once, in a seeded order (a short campaign still meets each fault); later ones are drawn by weight. The steps as
 * executed — when, how long, with what outcome — are kept for the failure message ({@link #render()}).
 */
public final class FaultSchedule {
    /** What a step does. */
    public enum Kind {
        /** {@code kill -9} of a pod, started again (same port) after {@code downRounds} attempts. */
        KILL_POD(3),
        /** PostgreSQL stopped ({@code pg_ctl stop -m fast}), started again after {@code downRounds} attempts. */
        RESTART_PG(2),
        /** The pod's realtime LISTEN backend terminated ({@code pg_terminate_backend}). */
        KILL_LISTEN(2),
        /**
         * A pod killed, PostgreSQL stopped, the pod started while it is down (it may exit at start: then it is started
         * again once PostgreSQL is back, the documented behaviour).
         */
        START_POD_WHILE_PG_DOWN(1),
        /** The next response carrying push results of a few clients is discarded: the retry must be answered cached. */
        DROP_RESPONSE(3),
        /** A WebSocket client's sockets aborted mid-campaign. */
        CUT_SOCKET(2),
        /**
         * A planned failover run by the HA manager ({@code pg_autoctl perform failover}): the primary demoted, its
         * synchronous standby promoted; the pods follow the new primary through their host list.
         */
        FAILOVER(3),
        /**
         * The primary node lost ({@code kill -9} of its keeper and PostgreSQL): the HA manager promotes the synchronous
         * standby by itself; the node is started again after {@code downRounds} attempts and rejoins as the standby.
         */
        KILL_PRIMARY(2),
        /**
         * Replay on the pods' read replica paused ({@code pg_wal_replay_pause()} on the streaming standby), resumed
         * after {@code downRounds} attempts: pull-only rounds find it behind and read the primary, or it leaves
         * rotation past {@code replica-max-lag} and comes back once replay caught up.
         */
        PAUSE_REPLAY(2),
        /**
         * The pods' S3 stand-in (segments) stopped, started again on the same port with the same objects after
         * {@code downRounds} attempts: bootstraps whose segments it holds or must take fail meanwhile and are retried.
         */
        STOP_S3(2),
        /**
         * A pod's wall clock stepped ten minutes ahead or back ({@link PodClocks}: an NTP step), set right again after
         * {@code downRounds} attempts; its monotonic clock runs on.
         */
        CLOCK_STEP(2);

        final int weight;

        Kind(int weight) {
            this.weight = weight;
        }
    }

    /**
     * One step: its kind, the pod it acts on, the clients it arms (drops, cuts), the attempts before it fires and the
     * attempts it keeps something down.
     */
    public record Step(int index, Kind kind, int pod, List<Integer> clients, int gapRounds, int downRounds) {
        public String describe() {
            return "#" + index + " " + kind
                    + switch (kind) {
                        case KILL_POD, KILL_LISTEN, CLOCK_STEP -> " pod " + pod;
                        case START_POD_WHILE_PG_DOWN -> " pod " + pod;
                        case DROP_RESPONSE, CUT_SOCKET -> " clients " + clients;
                        case RESTART_PG, FAILOVER, KILL_PRIMARY, PAUSE_REPLAY, STOP_S3 -> "";
                    }
                    + " after " + gapRounds + " attempts"
                    + (downRounds > 0 ? ", down " + downRounds + " attempts" : "");
        }

        /** The step as a token of {@code -Dcampaign.replay}: {@code index:KIND:pod:clients:gap:down}. */
        public String token() {
            return index + ":" + kind + ":" + pod + ":"
                    + String.join("+", clients.stream().map(String::valueOf).toList()) + ":" + gapRounds + ":"
                    + downRounds;
        }

        /** A step from its {@link #token()}. */
        public static Step parse(String token) {
            String[] f = token.trim().split(":", -1);
            if (f.length != 6) {
                throw new IllegalArgumentException("a step is index:KIND:pod:clients:gap:down, not " + token);
            }
            List<Integer> clients = f[3].isEmpty()
                    ? List.of()
                    : Arrays.stream(f[3].split("\\+")).map(Integer::valueOf).toList();
            return new Step(
                    Integer.parseInt(f[0]),
                    Kind.valueOf(f[1]),
                    Integer.parseInt(f[2]),
                    clients,
                    Integer.parseInt(f[4]),
                    Integer.parseInt(f[5]));
        }
    }

    /** The {@code -Dcampaign.replay} value of {@code steps}. */
    public static String replayProperty(List<Step> steps) {
        return String.join(",", steps.stream().map(Step::token).toList());
    }

    /** The steps of a {@code -Dcampaign.replay} value; empty for an empty value. */
    public static List<Step> parseReplay(String property) {
        return property.isBlank()
                ? List.of()
                : Arrays.stream(property.split(",")).map(Step::parse).toList();
    }

    /** A step as executed: its start since the campaign began, its duration, what happened. */
    public record Executed(Step step, long atMs, long tookMs, String outcome) {
        @Override
        public String toString() {
            return String.format("  t=%6.1fs %-60s %6d ms  %s", atMs / 1000.0, step.describe(), tookMs, outcome);
        }
    }

    private final long seed;
    private final int sparedPod;
    private final Random random;
    private final int pods;
    private final int clients;
    private final List<Integer> socketClients;
    private final List<Kind> firstRound;
    /** The steps to replay instead of drawing ({@link #replaying()}); empty: drawn from the seed. */
    private final List<Step> replay;

    private final List<Executed> executed = Collections.synchronizedList(new ArrayList<>());
    private final Map<Kind, Integer> counts = new EnumMap<>(Kind.class);
    private int drawn;

    /**
     * @param socketClients the indexes of the clients on the realtime socket (targets of {@link Kind#CUT_SOCKET};
     *     none: the kind is not drawn)
     * @param sparedPod a pod never killed ({@link Kind#KILL_POD}, {@link Kind#START_POD_WHILE_PG_DOWN} go to the next
     *     pod instead), so a long run samples one process's memory and descriptors from start to end; -1 for none
     * @param kinds the kinds the campaign can inject (its database's faults and the pods' and clients' own)
     * @param replay steps to execute as they are, in order, instead of drawing ({@code -Dcampaign.replay}, the
     *     shortest failing schedule a failure printed); empty to draw from the seed
     */
    public FaultSchedule(
            long seed,
            int pods,
            int clients,
            List<Integer> socketClients,
            int sparedPod,
            Set<Kind> kinds,
            List<Step> replay) {
        this.replay = List.copyOf(replay);
        this.sparedPod = sparedPod;
        this.seed = seed;
        this.random = new Random(seed * 0x9E3779B97F4A7C15L + 17);
        this.pods = pods;
        this.clients = clients;
        this.socketClients = List.copyOf(socketClients);
        // in declaration order before the shuffle: a seed's schedule stays the one it was before kinds were added
        List<Kind> all = new ArrayList<>(Arrays.asList(Kind.values()));
        all.retainAll(kinds);
        if (socketClients.isEmpty()) {
            all.remove(Kind.CUT_SOCKET);
        }
        Collections.shuffle(all, random);
        this.firstRound = all;
    }

    /** How many kinds the schedule draws from: its first steps are each of them once. */
    public int kinds() {
        return firstRound.size();
    }

    public long seed() {
        return seed;
    }

    /** Whether the schedule replays given steps rather than drawing them. */
    public boolean replaying() {
        return !replay.isEmpty();
    }

    /** The steps of a short campaign: the replayed ones, or each kind once. */
    public int planned() {
        return replaying() ? replay.size() : kinds();
    }

    /** The next step of the schedule (the same sequence for the same seed and shape). */
    public synchronized Step next() {
        if (replaying()) {
            return replay.get(drawn++ % replay.size());
        }
        int index = drawn++;
        Kind kind = index < firstRound.size() ? firstRound.get(index) : weighted();
        int gap = 10 + random.nextInt(40);
        int down = switch (kind) {
            case KILL_POD, RESTART_PG, START_POD_WHILE_PG_DOWN, KILL_PRIMARY, PAUSE_REPLAY, STOP_S3, CLOCK_STEP ->
                5 + random.nextInt(30);
            default -> 0;
        };
        int pod = random.nextInt(pods);
        if (pod == sparedPod && (kind == Kind.KILL_POD || kind == Kind.START_POD_WHILE_PG_DOWN)) {
            pod = (pod + 1) % pods;
        }
        List<Integer> targets = new ArrayList<>();
        if (kind == Kind.DROP_RESPONSE) {
            int n = 1 + random.nextInt(3);
            while (targets.size() < Math.min(n, clients)) {
                int c = random.nextInt(clients);
                if (!targets.contains(c)) {
                    targets.add(c);
                }
            }
        } else if (kind == Kind.CUT_SOCKET) {
            targets.add(socketClients.get(random.nextInt(socketClients.size())));
        }
        return new Step(index, kind, pod, List.copyOf(targets), gap, down);
    }

    private Kind weighted() {
        int total = 0;
        for (Kind k : firstRound) {
            total += k.weight;
        }
        int r = random.nextInt(total);
        for (Kind k : firstRound) {
            r -= k.weight;
            if (r < 0) {
                return k;
            }
        }
        throw new IllegalStateException();
    }

    /** Records an executed step. */
    public void executed(Step step, long atMs, long tookMs, String outcome) {
        executed.add(new Executed(step, atMs, tookMs, outcome));
        synchronized (counts) {
            counts.merge(step.kind(), 1, Integer::sum);
        }
    }

    public List<Executed> executed() {
        synchronized (executed) {
            return List.copyOf(executed);
        }
    }

    /** Faults injected by kind, e.g. {@code KILL_POD=2 RESTART_PG=1}. */
    public String countsByKind() {
        synchronized (counts) {
            StringBuilder sb = new StringBuilder();
            counts.forEach((k, n) ->
                    sb.append(sb.length() == 0 ? "" : " ").append(k).append('=').append(n));
            return sb.toString();
        }
    }

    /** The seed and the executed schedule, to reproduce a failure with {@code -Dcampaign.seed}. */
    public String render() {
        StringBuilder sb = new StringBuilder("campaign seed ")
                .append(seed)
                .append(" (reproduce: -Dcampaign.seed=")
                .append(seed)
                .append(replaying() ? " -Dcampaign.replay=" + replayProperty(replay) : "")
                .append("), executed fault schedule:\n");
        for (Executed e : executed()) {
            sb.append(e).append('\n');
        }
        return sb.toString();
    }
}
