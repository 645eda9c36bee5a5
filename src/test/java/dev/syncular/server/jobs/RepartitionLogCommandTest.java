package dev.syncular.server.jobs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The {@code repartition-log} command's arguments: defaults, each option, and bad input answered with the usage and
 * exit status {@value RepartitionLogCommand#EXIT_USAGE} before the storage is touched.
 */
class RepartitionLogCommandTest {

    @Test
    void optionsHaveDefaultsAndTakeTheirValues() {
        assertEquals(new RepartitionLogCommand.Options(16, 5000), RepartitionLogCommand.Options.parse(List.of()));
        assertEquals(
                new RepartitionLogCommand.Options(4, 10),
                RepartitionLogCommand.Options.parse(List.of("--batch-rows", "10", "--partitions", "4")));
    }

    @Test
    void badArgumentsAreRefused() {
        for (List<String> bad : List.of(
                List.of("--partitions"),
                List.of("--partitions", "0"),
                List.of("--partitions", "257"),
                List.of("--batch-rows", "0"),
                List.of("--partitions", "many"),
                List.of("--leaves", "4"))) {
            assertThrows(IllegalArgumentException.class, () -> RepartitionLogCommand.Options.parse(bad), bad::toString);
            // the storage is never reached: no storage at all here
            assertEquals(RepartitionLogCommand.EXIT_USAGE, new RepartitionLogCommand(null).run(bad), bad.toString());
        }
    }
}
