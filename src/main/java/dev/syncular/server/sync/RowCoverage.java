package dev.syncular.server.sync;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * For operators (the admin row view): whether the subscriptions registered in a client record (§8.1) cover one
 * stored row, and for each that does not, the scope that did not match. A subscription covers a row when for every
 * requested scope variable (§3.2: AND across variables, OR within one) the row's stored value (§3.1) is among the
 * values that reach the client — its effective scopes (requested ∩ allowed, §3.2 rule 4) as the last round that
 * registered it recorded them, or, for a record without them, its requested scopes (basis {@code requested}).
 */
public final class RowCoverage {
    /** The coverage was computed from the recorded effective scopes (requested ∩ allowed). */
    public static final String BASIS_EFFECTIVE = "effective";
    /** The record holds no effective scopes (written before they were recorded): requested scopes only. */
    public static final String BASIS_REQUESTED = "requested";

    /** The subscription does not request the row's value of {@code scopeKey}. */
    public static final String NOT_REQUESTED = "scope_not_requested";
    /** The subscription requests the row's value of {@code scopeKey} but the actor's allowed scopes do not grant it. */
    public static final String NOT_ALLOWED = "scope_not_allowed";
    /** The scope resolver answered nothing in the round that registered the subscription (§3.2: every pull revoked). */
    public static final String UNRESOLVED = "scopes_unresolved";

    private RowCoverage() {}

    /**
     * One registered subscription on the row's table against the row.
     *
     * @param subscriptionId the registered id
     * @param basis          {@link #BASIS_EFFECTIVE} or {@link #BASIS_REQUESTED}
     * @param reason         {@code null} when it covers the row, else {@link #NOT_REQUESTED}, {@link #NOT_ALLOWED}
     *                       or {@link #UNRESOLVED}
     * @param scopeKey       the scope variable that did not match ({@code null} when covering or unresolved)
     * @param rowValue       the row's stored value of {@code scopeKey} ({@code null} when it stores none)
     * @param values         the values of {@code scopeKey} that did reach the client (requested, or granted)
     */
    public record Subscription(
            String subscriptionId, String basis, String reason, String scopeKey, String rowValue, List<String> values) {
        public boolean covers() {
            return reason == null;
        }
    }

    /** The registered subscriptions of {@code subscriptionsJson} on {@code table}, each checked against the row. */
    public static List<Subscription> of(String subscriptionsJson, String table, Map<String, String> rowScopes) {
        List<Subscription> out = new ArrayList<>();
        for (ClientRecords.Registered r : ClientRecords.registered(subscriptionsJson)) {
            if (r.table().equals(table)) {
                out.add(check(r, rowScopes));
            }
        }
        return out;
    }

    private static Subscription check(ClientRecords.Registered r, Map<String, String> rowScopes) {
        if (!r.resolved()) {
            return new Subscription(r.id(), BASIS_EFFECTIVE, UNRESOLVED, null, null, List.of());
        }
        String basis = r.effective() != null ? BASIS_EFFECTIVE : BASIS_REQUESTED;
        for (Map.Entry<String, List<String>> e : r.scopes().entrySet()) {
            String value = rowScopes.get(e.getKey());
            if (value == null || !e.getValue().contains(value)) {
                return new Subscription(r.id(), basis, NOT_REQUESTED, e.getKey(), value, e.getValue());
            }
            if (r.effective() != null) {
                List<String> granted = r.effective().getOrDefault(e.getKey(), List.of());
                if (!granted.contains(value)) {
                    return new Subscription(r.id(), basis, NOT_ALLOWED, e.getKey(), value, granted);
                }
            }
        }
        return new Subscription(r.id(), basis, null, null, null, List.of());
    }
}
