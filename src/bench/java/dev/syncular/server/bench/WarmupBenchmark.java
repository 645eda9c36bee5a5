package dev.syncular.server.bench;

import dev.syncular.server.schema.CompiledSchema;
import dev.syncular.server.schema.SchemaLoader;
import dev.syncular.server.testsupport.PushLoad;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * The warm-up of a freshly started server (issue 29, "no warm-up cliff"; not part of the test suite). Run with
 * {@code bench/warmup.sh}, which starts the packaged server and hands over as soon as {@code /q/health/ready}
 * answers. From then, {@code bench.clients} (20) writers push one-row commits to one partition, one round at a
 * time, for {@code bench.seconds} (90). Reported: the first round's latency, push rounds per second of every
 * second, the steady state (the median second of the last third), and the time until throughput reaches 90 % of it
 * (the first second whose 3-second moving average does), from the load's start and from the process start.
 *
 * <p>Usage: {@code WarmupBenchmark <baseUrl> <schemaPath> <readyAfterMs>} ({@code readyAfterMs}: process start to
 * ready, as the script measured it).
 */
public final class WarmupBenchmark {
    private static final int CLIENTS = Integer.getInteger("bench.clients", 20);
    private static final int SECONDS = Integer.getInteger("bench.seconds", 90);

    private WarmupBenchmark() {}

    public static void main(String[] args) throws Exception {
        if (args.length < 3) {
            System.err.println("usage: WarmupBenchmark <baseUrl> <schemaPath> <readyAfterMs>");
            System.exit(2);
        }
        String baseUrl = args[0];
        CompiledSchema schema = SchemaLoader.load(Path.of(args[1]));
        long readyAfterMs = Long.parseLong(args[2]);
        String partition = "bench-warmup-" + UUID.randomUUID();
        try {
            long start = System.nanoTime();
            PushLoad load = new PushLoad(schema, partition, List.of(baseUrl)).start(CLIENTS);
            load.awaitMore(1, Duration.ofMinutes(2));
            long firstMs = (System.nanoTime() - start) / 1_000_000;
            long end = start + Duration.ofSeconds(SECONDS).toNanos();
            while (System.nanoTime() < end) {
                load.awaitMore(1, Duration.ofMinutes(2));
            }
            load.stop();
            List<Long> perSecond = new ArrayList<>();
            for (int s = 0; s < SECONDS; s++) {
                long from = start + Duration.ofSeconds(s).toNanos();
                perSecond.add(
                        load.roundsBetween(from, from + Duration.ofSeconds(1).toNanos() - 1));
            }
            List<Long> tail = new ArrayList<>(perSecond.subList(SECONDS - SECONDS / 3, SECONDS));
            tail.sort(Long::compare);
            long steady = tail.get(tail.size() / 2);
            int reached = -1;
            for (int s = 2; s < SECONDS; s++) {
                double avg = (perSecond.get(s - 2) + perSecond.get(s - 1) + perSecond.get(s)) / 3.0;
                if (avg >= 0.9 * steady) {
                    reached = s + 1; // the end of that second
                    break;
                }
            }
            System.out.printf(
                    "== warm-up: %d clients; first commit applied %,d ms after ready; rounds/s by second: %s%n",
                    CLIENTS, firstMs, perSecond);
            System.out.printf(
                    "== steady state %,d rounds/s (median second of the last %d s); 90 %% of it reached after %s s of"
                            + " load, %s s after the process started (ready after %,d ms); p99 of the last %d s %d ms;"
                            + " failures %s%n",
                    steady,
                    SECONDS / 3,
                    reached < 0 ? "never" : String.valueOf(reached),
                    reached < 0 ? "never" : String.format("%.1f", reached + readyAfterMs / 1000.0),
                    readyAfterMs,
                    SECONDS / 3,
                    load.percentileMs(
                            99,
                            start + Duration.ofSeconds(SECONDS - SECONDS / 3).toNanos(),
                            end),
                    load.failures);
        } catch (Throwable t) {
            t.printStackTrace();
            System.exit(1);
        }
        System.exit(0); // the load's HTTP client threads
    }
}
