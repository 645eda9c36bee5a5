package dev.syncular.server.observability;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Every gauge of the server holds its state strongly. Micrometer's default is a weak reference: a gauge whose state
 * the collector cleared is dropped from {@code /q/metrics}, so a dashboard metric vanished in some test orders
 * ({@code syncular_checkpoints_pending}, {@code syncular_pruning_horizon_lag_commits}, with the suite in two JVMs).
 */
class GaugeReferencesTest {
    @Test
    void everyGaugeBuilderChainHoldsItsStateStrongly() throws IOException {
        List<String> weak = new ArrayList<>();
        try (Stream<Path> files = Files.walk(Path.of("src/main/java"))) {
            for (Path f : (Iterable<Path>) files.filter(p -> p.toString().endsWith(".java"))::iterator) {
                String src = Files.readString(f, StandardCharsets.UTF_8);
                int at = src.indexOf("Gauge.builder(");
                while (at >= 0) {
                    String chain = src.substring(at, src.indexOf(';', at));
                    if (!chain.contains(".strongReference(true)")) {
                        weak.add(f + ": " + chain.lines().findFirst().orElse("").trim());
                    }
                    at = src.indexOf("Gauge.builder(", at + 1);
                }
            }
        }
        assertTrue(weak.isEmpty(), "gauges holding their state weakly: " + weak);
    }
}
