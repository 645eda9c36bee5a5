package dev.syncular.server.storage;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;

/**
 * An incremental pull read for one subscription (§4.5): the window {@code afterSeq < commitSeq <= upToSeq}
 * of {@code table}, filtered to the effective scopes (§3.2: for every effective variable, the change's
 * stored value is in that variable's value list), oldest first, cut at {@code changeLimit} total changes
 * without splitting a commit.
 *
 * @param table       the subscription's table
 * @param scopes      effective scopes, variable → allowed values (non-empty map, non-empty lists)
 * @param afterSeq    exclusive lower bound (the request cursor)
 * @param upToSeq     inclusive upper bound (normally the partition's maxCommitSeq read before)
 * @param changeLimit the {@code limitCommits} change budget (≥ 1)
 */
public record CommitQuery(String table, Map<String, Set<String>> scopes, long afterSeq, long upToSeq, int changeLimit) {
    public CommitQuery {
        Objects.requireNonNull(table, "table");
        if (scopes == null || scopes.isEmpty()) {
            throw new IllegalArgumentException("effective scopes must not be empty");
        }
        Map<String, Set<String>> copy = new TreeMap<>();
        scopes.forEach((k, v) -> {
            if (v == null || v.isEmpty()) {
                throw new IllegalArgumentException("an effective scope variable has no values");
            }
            copy.put(k, Set.copyOf(v));
        });
        scopes = Collections.unmodifiableMap(new LinkedHashMap<>(copy));
        if (changeLimit < 1) {
            throw new IllegalArgumentException("changeLimit must be >= 1");
        }
    }

    /** True when the stored scopes match every effective variable (§3.2). */
    public boolean matches(Map<String, String> stored) {
        for (Map.Entry<String, Set<String>> e : scopes.entrySet()) {
            String v = stored.get(e.getKey());
            if (v == null || !e.getValue().contains(v)) {
                return false;
            }
        }
        return true;
    }

    /** The effective variables, sorted. */
    public List<String> variables() {
        return List.copyOf(scopes.keySet());
    }
}
