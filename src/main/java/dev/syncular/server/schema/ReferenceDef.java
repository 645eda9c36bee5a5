package dev.syncular.server.schema;

import java.util.Objects;

/**
 * One declared reference (§6.11): {@code column REFERENCES parentTable(parent primary key)} with its
 * {@code ON DELETE} action. The referenced column is always the parent table's primary key.
 */
public record ReferenceDef(String column, String parentTable, OnDelete onDelete) {

    public ReferenceDef {
        Objects.requireNonNull(column, "column");
        Objects.requireNonNull(parentTable, "parentTable");
        Objects.requireNonNull(onDelete, "onDelete");
    }

    /** The {@code ON DELETE} actions §6.11 allows; an absent clause means {@link #RESTRICT}. */
    public enum OnDelete {
        RESTRICT("RESTRICT"),
        CASCADE("CASCADE"),
        SET_NULL("SET NULL");

        /** The schema-IR spelling. */
        public final String irName;

        OnDelete(String irName) {
            this.irName = irName;
        }

        /** The action for its schema-IR spelling, or {@code null} when not one of the three. */
        public static OnDelete ofIrName(String name) {
            for (OnDelete d : values()) {
                if (d.irName.equals(name)) {
                    return d;
                }
            }
            return null;
        }
    }
}
