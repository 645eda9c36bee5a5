package dev.syncular.server.console;

import io.quarkus.qute.TemplateData;
import java.util.List;
import java.util.Locale;
import java.util.function.ToDoubleFunction;

/**
 * Small SVG time-series for the overview, drawn on the server (no script, no inline style: the chart is a
 * {@code <polyline>} whose points are attributes): {@value #WIDTH}×{@value #HEIGHT} user units, the newest sample at
 * the right, scaled to the series' maximum.
 */
final class Charts {
    static final int WIDTH = 300;
    static final int HEIGHT = 60;

    private Charts() {}

    /** One chart: its title, the polyline's points, the newest value and the maximum, formatted. */
    @TemplateData
    record Chart(String id, String title, String unit, String points, String latest, String max, int samples) {}

    static <T> Chart chart(String id, String title, String unit, List<T> samples, ToDoubleFunction<T> value) {
        double max = 0;
        for (T s : samples) {
            max = Math.max(max, value.applyAsDouble(s));
        }
        StringBuilder points = new StringBuilder();
        int n = samples.size();
        for (int i = 0; i < n; i++) {
            double x = n == 1 ? WIDTH : (double) i * WIDTH / (n - 1);
            double v = value.applyAsDouble(samples.get(i));
            double y = HEIGHT - (max > 0 ? v / max * (HEIGHT - 4) : 0) - 2;
            if (i > 0) {
                points.append(' ');
            }
            points.append(format("%.1f,%.1f", x, y));
        }
        String latest = n == 0 ? "–" : format("%.2f", value.applyAsDouble(samples.get(n - 1)));
        return new Chart(id, title, unit, points.toString(), latest, format("%.2f", max), n);
    }

    private static String format(String pattern, Object... args) {
        return String.format(Locale.ROOT, pattern, args);
    }
}
