package dev.syncular.server.wire;

import java.math.BigInteger;

/**
 * ECMAScript {@code Number::toString(x)} (radix 10) for doubles: the text a float column's value has as a §3.1
 * scope value (what the JavaScript and Rust clients compare against the allowed scopes, §3.2/§3.4), the numbers
 * of the §11.1 debug JSON and the §11.2 canonical JSON, and the numbers Yjs writes in its JSON content (§5.10).
 *
 * <p>The digits are the shortest decimal {@code s × 10^q} that reads back as {@code x} under round-half-even
 * (fewest digits {@code k}); among several of that length the one closest to {@code x}, and of two equally
 * close the even {@code s} — the recommended refinement of the ECMAScript algorithm, which V8 implements. They
 * are found exactly, over the rounding interval of {@code x} (Java 17's {@code Double.toString} is not always
 * shortest: it prints 5e-324 as {@code 4.9E-324}, 1e23 as {@code 9.999999999999999E22}, 8.41e21 as
 * {@code 8.409999999999999E21}). The layout then follows ECMAScript: plain digits up to 21 integer digits,
 * {@code 0.000001} down to {@code 1e-7} where exponent form starts, {@code 1e+21} above; {@code -0} prints
 * {@code 0}.
 */
public final class JsNumber {
    /** Exactly representable integers print as such: every one below 2^53 is its own shortest form. */
    private static final double EXACT_INTEGERS = 0x1p53;

    /** The largest n with 10^n a double; {@link #POW10_DOUBLE} holds 10^0..10^n exactly. */
    private static final int MAX_EXACT_POW10 = 22;

    private static final double[] POW10_DOUBLE = new double[MAX_EXACT_POW10 + 1];

    /** Below this, t = x / 10^q leaves one integer as the only possible candidate (see {@link #shortest}). */
    private static final double FAST_LIMIT = 0x1p50;

    private static final int POW10_CACHE = 400;
    private static final BigInteger[] POW10 = new BigInteger[POW10_CACHE];

    static {
        POW10_DOUBLE[0] = 1;
        for (int i = 1; i <= MAX_EXACT_POW10; i++) {
            POW10_DOUBLE[i] = POW10_DOUBLE[i - 1] * 10;
        }
        POW10[0] = BigInteger.ONE;
        for (int i = 1; i < POW10_CACHE; i++) {
            POW10[i] = POW10[i - 1].multiply(BigInteger.TEN);
        }
    }

    private JsNumber() {}

    /**
     * {@code Number::toString(x)}: what {@code String(x)} gives in JavaScript — {@code NaN}, {@code Infinity}
     * and {@code -Infinity} included.
     */
    public static String text(double x) {
        if (Double.isNaN(x)) {
            return "NaN";
        }
        if (Double.isInfinite(x)) {
            return x > 0 ? "Infinity" : "-Infinity";
        }
        if (x == 0) {
            return "0"; // -0 too
        }
        if (x == Math.rint(x) && Math.abs(x) < EXACT_INTEGERS) {
            return Long.toString((long) x);
        }
        return layout(x < 0, shortest(Math.abs(x)));
    }

    /**
     * The number as {@code JSON.stringify} writes it: {@link #text} for a finite value, {@code null} for NaN
     * and the infinities (JSON has no form for them, §11.1 rule 10).
     */
    public static String json(double x) {
        return Double.isFinite(x) ? text(x) : "null";
    }

    /** Shortest digits (no trailing zero) and exponent {@code q}: {@code x = digits × 10^q} once read. */
    private record Decimal(String digits, int q) {}

    /** The shortest decimal of a finite {@code x > 0} (see the class comment for the choice among several). */
    private static Decimal shortest(double x) {
        // The largest q with a candidate s × 10^q in the rounding interval gives the fewest digits; a candidate
        // exists at 17 significant digits, and existence is monotone in q (a multiple of 10^q is one of
        // 10^(q-1)). floor(log10(x)) may be one off next to a power of ten: start one above.
        int lead = (int) Math.floor(Math.log10(x));
        int top = lead + 2; // the highest q not known to hold no candidate
        // Fast path, exact in doubles: while t = x / 10^q < 2^50 and 10^|q| is a double (|q| <= 22), the rounding
        // interval of x spans less than 1/4 in units of 10^q and rint(t) is within 5/8 of t, so rint(t) is the
        // only integer that can be a candidate — and s × 10^q for s < 2^53 is one correctly rounded operation,
        // exactly what reading the decimal gives. (A subnormal x has t < 1 at every q >= -22: no candidate.)
        for (int q = top; q >= -MAX_EXACT_POW10 && q <= MAX_EXACT_POW10; q--) {
            double t = q <= 0 ? x * POW10_DOUBLE[-q] : x / POW10_DOUBLE[q];
            if (t >= FAST_LIMIT) {
                break;
            }
            long s = (long) Math.rint(t);
            if (s >= 1 && (q <= 0 ? s / POW10_DOUBLE[-q] : s * POW10_DOUBLE[q]) == x) {
                return strip(BigInteger.valueOf(s), q);
            }
            top = q - 1;
        }
        return exact(x, lead - 17, top);
    }

    /**
     * Exact search with integer arithmetic for the largest q in {@code [bottom, top]} holding a candidate; one
     * holds at {@code bottom} (17 or more significant digits).
     */
    private static Decimal exact(double x, int bottom, int top) {
        long bits = Double.doubleToRawLongBits(x);
        int biased = (int) (bits >>> 52) & 0x7ff;
        long fraction = bits & ((1L << 52) - 1);
        long m = biased == 0 ? fraction : fraction | (1L << 52);
        int e = biased == 0 ? -1074 : biased - 1075; // x = m × 2^e
        // With u = 2^(e-2): x = 4m·u; the doubles next to x sit 4u above and 4u below, or 2u below when x is
        // the smallest mantissa of its binade. The midpoints to them bound what reads back as x; a midpoint
        // itself reads back as x iff m is even (round-half-even).
        long lowGap = fraction == 0 && biased > 1 ? 1 : 2;
        BigInteger mid = BigInteger.valueOf(4 * m);
        BigInteger low = BigInteger.valueOf(4 * m - lowGap);
        BigInteger high = BigInteger.valueOf(4 * m + 2);
        boolean inclusive = (m & 1) == 0;
        int a = e - 2;
        BigInteger[] best = null;
        int lo = bottom; // holds a candidate
        int hi = top + 1; // holds none
        while (hi - lo > 1) {
            // the answer is usually at the top (16 or 17 digits after the fast path): look there first
            int q = hi - lo <= 4 ? hi - 1 : (lo + hi) >> 1; // q may be negative: an arithmetic shift
            BigInteger[] c = candidate(mid, low, high, inclusive, a, q);
            if (c != null) {
                lo = q;
                best = c;
            } else {
                hi = q;
            }
        }
        if (best == null) {
            best = candidate(mid, low, high, inclusive, a, lo);
        }
        return strip(best[0], lo);
    }

    /**
     * The multiple {@code s × 10^q} within the rounding interval closest to x (ties to even {@code s}), or
     * null when the interval holds none. Interval and x are {@code N × 2^a} for the integers given.
     */
    private static BigInteger[] candidate(
            BigInteger mid, BigInteger low, BigInteger high, boolean inclusive, int a, int q) {
        // N × 2^a / 10^q = N × num / den
        BigInteger num = BigInteger.ONE;
        BigInteger den = BigInteger.ONE;
        if (a >= 0) {
            num = num.shiftLeft(a);
        } else {
            den = den.shiftLeft(-a);
        }
        if (q >= 0) {
            den = den.multiply(pow10(q));
        } else {
            num = num.multiply(pow10(-q));
        }
        BigInteger[] lowQr = low.multiply(num).divideAndRemainder(den);
        BigInteger sLow = lowQr[0];
        if (lowQr[1].signum() != 0 || !inclusive) {
            sLow = sLow.add(BigInteger.ONE); // ceil, or past an excluded bound
        }
        BigInteger[] highQr = high.multiply(num).divideAndRemainder(den);
        BigInteger sHigh = highQr[0];
        if (highQr[1].signum() == 0 && !inclusive) {
            sHigh = sHigh.subtract(BigInteger.ONE);
        }
        if (sLow.compareTo(sHigh) > 0) {
            return null;
        }
        BigInteger[] midQr = mid.multiply(num).divideAndRemainder(den);
        BigInteger down = midQr[0];
        BigInteger up = down.add(BigInteger.ONE);
        int half = midQr[1].shiftLeft(1).compareTo(den);
        boolean preferDown = half < 0 || (half == 0 && !down.testBit(0));
        if (midQr[1].signum() == 0) {
            return new BigInteger[] {down}; // x itself is a multiple of 10^q
        }
        BigInteger first = preferDown ? down : up;
        BigInteger second = preferDown ? up : down;
        // An integer in [sLow, sHigh], an interval around x/10^q, means floor or ceil of x/10^q is in it.
        return new BigInteger[] {within(first, sLow, sHigh) ? first : second};
    }

    private static boolean within(BigInteger s, BigInteger lo, BigInteger hi) {
        return s.compareTo(lo) >= 0 && s.compareTo(hi) <= 0;
    }

    private static BigInteger pow10(int n) {
        return n < POW10_CACHE ? POW10[n] : BigInteger.TEN.pow(n);
    }

    private static Decimal strip(BigInteger s, int q) {
        String digits = s.toString();
        int k = digits.length();
        while (k > 1 && digits.charAt(k - 1) == '0') {
            k--;
        }
        return new Decimal(digits.substring(0, k), q + digits.length() - k);
    }

    /** ECMAScript Number::toString steps 6–10 over the digits of s and n = k + q (x = 0.digits × 10^n). */
    private static String layout(boolean negative, Decimal d) {
        String digits = d.digits();
        int k = digits.length();
        int n = k + d.q();
        StringBuilder sb = new StringBuilder(k + 8);
        if (negative) {
            sb.append('-');
        }
        if (k <= n && n <= 21) {
            sb.append(digits);
            sb.append("0".repeat(n - k));
        } else if (0 < n && n <= 21) {
            sb.append(digits, 0, n).append('.').append(digits, n, k);
        } else if (-6 < n && n <= 0) {
            sb.append("0.").append("0".repeat(-n)).append(digits);
        } else {
            sb.append(digits.charAt(0));
            if (k > 1) {
                sb.append('.').append(digits, 1, k);
            }
            int exponent = n - 1;
            sb.append('e').append(exponent < 0 ? '-' : '+').append(Math.abs(exponent));
        }
        return sb.toString();
    }
}
