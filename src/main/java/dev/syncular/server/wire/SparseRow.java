package dev.syncular.server.wire;

/**
 * A push operation payload (§2.4 sparse rows): which columns the operation writes and their values.
 * {@code values[i]} is meaningful only when {@code present[i]}; a present {@code null} is a NULL write.
 */
public record SparseRow(boolean[] present, Object[] values) {
    public SparseRow {
        if (present.length != values.length) {
            throw new IllegalArgumentException("presence and values differ in length");
        }
    }

    public boolean isPresent(int column) {
        return present[column];
    }

    public Object value(int column) {
        return values[column];
    }

    public int presentCount() {
        int c = 0;
        for (boolean p : present) {
            if (p) {
                c++;
            }
        }
        return c;
    }
}
