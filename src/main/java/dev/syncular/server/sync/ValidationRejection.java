package dev.syncular.server.sync;

import dev.syncular.server.wire.CanonicalJson;
import dev.syncular.server.wire.RecoveryDetails;
import java.util.List;
import java.util.Map;

/**
 * A deliberate host rejection (§6.7, §6.8): a host-defined code, a public message and optional bounded recovery
 * details (§6.3.1). The code may not start with a reserved protocol prefix, and details must have the §6.3.1
 * shape: both are checked here, at construction, so a host bug fails loudly where it is written.
 * {@code opIndex} attributes a whole-commit rejection to one operation (§6.8 {@code CommitValidationRejection});
 * {@code -1} means the operation being validated, or the first one.
 */
public final class ValidationRejection extends RuntimeException {
    private static final List<String> RESERVED = List.of("sync.", "blob.", "operation.", "presence.", "client.");
    private final String code;
    private final String detailsJson;
    private final int opIndex;

    public ValidationRejection(String code, String message) {
        this(-1, code, message, null);
    }

    /** @param details the §6.3.1 members ({@code fieldPaths}, {@code reason}, {@code requiredAction}, {@code references}), or null */
    public ValidationRejection(int opIndex, String code, String message, Map<String, Object> details) {
        super(message == null ? code : message, null, false, false);
        if (code == null || code.isBlank()) {
            throw new IllegalArgumentException("a validation code is required");
        }
        for (String prefix : RESERVED) {
            if (code.startsWith(prefix)) {
                throw new IllegalArgumentException("validation code uses the reserved prefix " + prefix + " (§6.7)");
            }
        }
        if (opIndex < -1) {
            throw new IllegalArgumentException("opIndex must be non-negative");
        }
        this.code = code;
        this.opIndex = opIndex;
        this.detailsJson = details == null || details.isEmpty() ? null : CanonicalJson.write(details);
        if (detailsJson != null) {
            RecoveryDetails.require(detailsJson);
        }
    }

    public String code() {
        return code;
    }

    /** The normalized §6.3.1 details object, or null. */
    public String detailsJson() {
        return detailsJson;
    }

    public int opIndex() {
        return opIndex;
    }
}
