package dev.syncular.server.wire;

import java.math.BigDecimal;
import java.math.MathContext;

/**
 * ECMAScript {@code Number::toString} for doubles: the shortest decimal that round-trips, laid out the
 * way JavaScript does (plain between 1e-7 and 1e21, exponent form outside). This is the "shortest
 * round-trip" number form of §11.2 and the number rendering of the §11.1 debug JSON.
 */
public final class JsNumber {
    private JsNumber() {}

    public static String format(double d) {
        if (Double.isNaN(d) || Double.isInfinite(d)) {
            return "null";
        }
        if (d == 0) {
            return "0";
        }
        if (d == Math.rint(d) && Math.abs(d) < 1e21) {
            long l = (long) d;
            if (l == d) {
                return Long.toString(l);
            }
        }
        String sign = d < 0 ? "-" : "";
        BigDecimal exact = new BigDecimal(Math.abs(d));
        BigDecimal shortest = null;
        for (int p = 1; p <= 17; p++) {
            BigDecimal candidate = exact.round(new MathContext(p));
            if (candidate.doubleValue() == Math.abs(d)) {
                shortest = candidate;
                break;
            }
        }
        if (shortest == null) {
            shortest = exact.round(new MathContext(17));
        }
        shortest = shortest.stripTrailingZeros();
        String digits = shortest.unscaledValue().toString();
        int k = digits.length();
        int n = k - shortest.scale(); // decimal point position: value = 0.digits × 10^n
        StringBuilder sb = new StringBuilder(sign);
        if (k <= n && n <= 21) {
            sb.append(digits);
            for (int i = 0; i < n - k; i++) {
                sb.append('0');
            }
        } else if (0 < n && n <= 21) {
            sb.append(digits, 0, n).append('.').append(digits, n, k);
        } else if (-6 < n && n <= 0) {
            sb.append("0.");
            for (int i = 0; i < -n; i++) {
                sb.append('0');
            }
            sb.append(digits);
        } else {
            sb.append(digits.charAt(0));
            if (k > 1) {
                sb.append('.').append(digits, 1, k);
            }
            int e = n - 1;
            sb.append('e').append(e < 0 ? '-' : '+').append(Math.abs(e));
        }
        return sb.toString();
    }
}
