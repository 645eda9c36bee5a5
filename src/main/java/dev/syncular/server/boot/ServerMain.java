package dev.syncular.server.boot;

import dev.syncular.server.jobs.BackfillCommand;
import dev.syncular.server.jobs.RepartitionLogCommand;
import io.quarkus.runtime.Quarkus;
import io.quarkus.runtime.QuarkusApplication;
import io.quarkus.runtime.annotations.QuarkusMain;
import jakarta.inject.Inject;
import java.util.Arrays;
import java.util.Map;
import org.jboss.logging.Logger;

/**
 * The process entry point. Without arguments it is the server and runs until it is stopped. With a command it
 * runs that command once, after the normal start-up (configuration, storage migration, checkpoint
 * declarations), and exits with its status — so the server's own image is the one-shot job too (the chart's
 * backfill Job): {@code java -jar quarkus-run.jar backfill ...} or {@code ./application backfill ...}.
 *
 * <p>Commands: {@value BackfillCommand#NAME} ({@link BackfillCommand}), {@value RepartitionLogCommand#NAME}
 * ({@link RepartitionLogCommand}). A command opens no listening socket: the
 * HTTP server and the management interface stay off ({@code quarkus.http.host-enabled=false},
 * {@code quarkus.management.host-enabled=false}, unless set explicitly), so it runs beside a server on the same
 * host and ports.
 */
@QuarkusMain
public class ServerMain implements QuarkusApplication {
    private static final Logger LOG = Logger.getLogger(ServerMain.class);

    @Inject
    BackfillCommand backfill;

    @Inject
    RepartitionLogCommand repartitionLog;

    /** The entry point of the packaged app (jar and native executable). */
    public static void main(String... args) {
        commandProperties(args).forEach((k, v) -> {
            if (System.getProperty(k) == null) {
                System.setProperty(k, v);
            }
        });
        Quarkus.run(ServerMain.class, args);
    }

    /** The properties a command run sets before start-up: no HTTP or management listener. Empty for the server. */
    static Map<String, String> commandProperties(String... args) {
        if (args.length == 0) {
            return Map.of();
        }
        return Map.of("quarkus.http.host-enabled", "false", "quarkus.management.host-enabled", "false");
    }

    @Override
    public int run(String... args) {
        if (args.length == 0) {
            Quarkus.waitForExit();
            return 0;
        }
        if (BackfillCommand.NAME.equals(args[0])) {
            return backfill.run(Arrays.asList(args).subList(1, args.length));
        }
        if (RepartitionLogCommand.NAME.equals(args[0])) {
            return repartitionLog.run(Arrays.asList(args).subList(1, args.length));
        }
        LOG.errorf(
                "unknown command \"%s\"; commands: %s, %s (no argument: run the server)",
                args[0], BackfillCommand.NAME, RepartitionLogCommand.NAME);
        return BackfillCommand.EXIT_USAGE;
    }
}
