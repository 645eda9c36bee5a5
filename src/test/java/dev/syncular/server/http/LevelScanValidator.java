package dev.syncular.server.http;

import dev.syncular.server.sync.CandidateReader;
import dev.syncular.server.sync.CandidateReader.CandidateRow;
import dev.syncular.server.sync.CommitEvidence;
import dev.syncular.server.sync.CommitValidator;
import dev.syncular.server.sync.OperationEvidence;
import dev.syncular.server.sync.ValidationRejection;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Alternative;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * A §6.8 whole-commit validator that reads the candidate state by a {@code float} scope column, as a team would ship
 * one in its own image: a commit whose first operation writes a {@code readings} row noted {@code scan:<text>} runs
 * {@code scanRows("readings", {level: <text>})} and rejects with {@code app.scan}, its message the row ids it got
 * (comma-separated) or {@code none}, so {@link FloatScopeValuesTest} can read what the validator saw. Every other
 * commit is accepted. An {@code @Alternative} enabled only by that test's profile.
 */
@Alternative
@ApplicationScoped
public class LevelScanValidator implements CommitValidator {
    static final String PROBE = "scan:";

    @Override
    public Uni<Void> validate(CommitEvidence commit, CandidateReader read) {
        OperationEvidence op = commit.operations().get(0);
        Object note = op.row() == null ? null : op.row().get("note");
        if (!(note instanceof String text) || !text.startsWith(PROBE)) {
            return Uni.createFrom().voidItem();
        }
        return read.scanRows("readings", Map.of("level", text.substring(PROBE.length())), null, 100)
                .onItem()
                .transformToUni(rows -> Uni.createFrom()
                        .failure(new ValidationRejection(
                                "app.scan",
                                rows.isEmpty()
                                        ? "none"
                                        : rows.stream().map(CandidateRow::rowId).collect(Collectors.joining(",")))));
    }
}
