package dev.syncular.server.wire;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * {@code PUSH_RESULT_DETAILS} (§6.3.1): bounded recovery metadata for the terminating error records of
 * the immediately preceding rejected {@code PUSH_RESULT}. Shape violations are decode errors.
 */
public record PushResultDetails(String clientCommitId, List<Entry> entries) implements Frame {
    /** One detail entry: an error record's {@code opIndex} and its normalized {@code detailsJson} object. */
    public record Entry(int opIndex, String detailsJson) {}

    @Override
    public int type() {
        return FrameType.PUSH_RESULT_DETAILS;
    }

    static PushResultDetails read(WireReader r) {
        String clientCommitId = r.str();
        int n = r.count(8);
        List<Entry> entries = new ArrayList<>(n);
        Set<Integer> seen = new HashSet<>();
        for (int i = 0; i < n; i++) {
            int opIndex = r.i32();
            String json = r.str();
            if (opIndex < 0 || !seen.add(opIndex)) {
                throw WireException.invalid("details opIndex must be unique and non-negative");
            }
            RecoveryDetails.require(json);
            entries.add(new Entry(opIndex, json));
        }
        r.expectEnd();
        if (n == 0) {
            throw WireException.invalid("details entries must be non-empty");
        }
        return new PushResultDetails(clientCommitId, List.copyOf(entries));
    }

    @Override
    public void writePayload(WireWriter w) {
        w.str(clientCommitId).u32(entries.size());
        for (Entry e : entries) {
            w.i32(e.opIndex()).str(e.detailsJson());
        }
    }
}
