package dev.syncular.server.operations;

import dev.syncular.server.sync.CandidateReader;
import dev.syncular.server.sync.OperationEvidence;
import dev.syncular.server.sync.RowValidator;
import dev.syncular.server.sync.ValidationRejection;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Alternative;
import java.util.List;
import java.util.Map;

/**
 * A §6.7 row validator on {@code todos} that decides from other rows through {@code queryAuthoritative}, as a team
 * would ship one in its own image: a todo may not be written into a list that holds a note {@code "locked"}
 * ({@code notesInList}, run in the push transaction). A todo titled {@code probe:<query>} instead runs
 * {@code <query>} without params and rejects with {@code app.probe}, its message the rows' first value or the
 * failure's §7 code, so {@link QueryAuthoritativeTest} can read what the validator saw. An {@code @Alternative}
 * enabled only by the profile that test shares with {@code OperationWatchBackpressureTest} (every other test
 * application has no validator).
 */
@Alternative
@ApplicationScoped
public class LockedListValidator implements RowValidator {
    @Override
    public String table() {
        return "todos";
    }

    @Override
    public Uni<Void> validate(String actorId, String partition, OperationEvidence operation) {
        throw new IllegalStateException("the engine calls the four-argument form");
    }

    @Override
    public Uni<Void> validate(String actorId, String partition, OperationEvidence op, CandidateReader read) {
        Map<String, Object> row = op.row() != null ? op.row() : op.stored();
        String title = String.valueOf(row.get("title"));
        if (title.startsWith("probe:")) {
            return read.queryAuthoritative(title.substring("probe:".length()), Map.of())
                    .onItemOrFailure()
                    .transformToUni((rows, failure) -> {
                        String seen;
                        if (failure instanceof OperationException e) {
                            seen = e.code().code;
                        } else if (failure != null) {
                            seen = "unexpected";
                        } else {
                            seen = rows.isEmpty()
                                    ? "no rows"
                                    : rows.get(0)
                                                    .values()
                                                    .iterator()
                                                    .next()
                                                    .getClass()
                                                    .getSimpleName() + ":"
                                            + rows.get(0).values().iterator().next();
                        }
                        return Uni.createFrom().failure(new ValidationRejection("app.probe", seen));
                    });
        }
        return read.queryAuthoritative("notesInList", Map.of("listId", row.get("list_id")))
                .map(notes -> {
                    if (notes.stream().anyMatch(n -> "locked".equals(n.get("body")))) {
                        throw new ValidationRejection("app.list_locked", "the list is locked");
                    }
                    return List.of();
                })
                .replaceWithVoid();
    }
}
