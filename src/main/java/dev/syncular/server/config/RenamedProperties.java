package dev.syncular.server.config;

import io.smallrye.config.ConfigSourceInterceptor;
import io.smallrye.config.ConfigSourceInterceptorContext;
import io.smallrye.config.ConfigValue;
import io.smallrye.config.Priorities;
import jakarta.annotation.Priority;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.jboss.logging.Logger;

/**
 * Properties that were renamed, still read under their old names: a lookup of the new name that finds nothing
 * falls back to the old one, and the first such use of each old name logs a warning naming the new one. The
 * new name wins when both are set in sources of the same rank; otherwise the higher-ranked source wins, as for
 * any property (an old name in the environment outranks a new one in {@code application.properties}). Names are listed with the property's environment form in mind: a renamed
 * property whose environment variable is unchanged (e.g. {@code SYNCULAR_REACTIONS_WEBHOOK_URL} for both
 * {@code syncular.reactions.webhook-url} and {@code syncular.reactions.webhook.url}) needs no fallback there.
 *
 * <p>A replaced property is listed the same way: {@code syncular.s3.threads}, the pool the synchronous S3 client's
 * calls ran on, bounded the S3 calls in flight per pod; the asynchronous client holds no thread per call, and the
 * bound is now its connection pool's, {@code quarkus.s3.async-client.max-concurrency} (issue 44, hole 5), which
 * the old name still sets, with the warning.
 *
 * <p>Registered in {@code META-INF/services/io.smallrye.config.ConfigSourceInterceptor}, so Quarkus applies it to
 * every configuration lookup, mappings included; property-name iteration reports an old name as its new one, so
 * the mapping neither misses it nor reports it as unknown. Its priority puts it inside SmallRye's expression
 * interceptor (an expression naming a new name, such as a per-type reaction endpoint's inherited defaults, finds
 * the old one) and outside the profile interceptor (a {@code %prod.} old name is found).
 */
@Priority(Priorities.LIBRARY + 280)
public final class RenamedProperties implements ConfigSourceInterceptor {
    private static final Logger LOG = Logger.getLogger(RenamedProperties.class);

    /** New name → old name. */
    public static final Map<String, String> RENAMED = Map.of(
            "syncular.reactions.webhook.url", "syncular.reactions.webhook-url",
            "syncular.reactions.webhook.secret", "syncular.reactions.webhook-secret",
            "syncular.reactions.webhook.timeout", "syncular.reactions.webhook-timeout",
            "syncular.reactions.webhook.connect-timeout", "syncular.reactions.webhook-connect-timeout",
            "syncular.reactions.webhook.read-timeout", "syncular.reactions.webhook-read-timeout",
            "syncular.reactions.webhook.pool-size", "syncular.reactions.webhook-pool-size",
            "syncular.reactions.webhook.max-answer-size", "syncular.reactions.webhook-max-answer-size",
            "quarkus.s3.async-client.max-concurrency", "syncular.s3.threads");

    private static final Map<String, String> OLD_TO_NEW = invert(RENAMED);
    /** Old names already warned about by this configuration (each build of the configuration warns afresh). */
    private final Set<String> warned = ConcurrentHashMap.newKeySet();

    @Override
    public ConfigValue getValue(ConfigSourceInterceptorContext context, String name) {
        ConfigValue value = context.proceed(name);
        String old = RENAMED.get(name);
        if (old == null) {
            return value;
        }
        ConfigValue legacy = context.proceed(old);
        // the old name counts only from a source that outranks the new name's (the mapping's defaults are a source)
        if (legacy == null || value != null && value.getConfigSourceOrdinal() >= legacy.getConfigSourceOrdinal()) {
            return value;
        }
        if (warned.add(old)) {
            LOG.warnf("%s is deprecated: set %s instead (the old name is still read)", old, name);
        }
        return legacy.withName(name);
    }

    @Override
    public Iterator<String> iterateNames(ConfigSourceInterceptorContext context) {
        Set<String> names = new LinkedHashSet<>();
        context.iterateNames().forEachRemaining(n -> names.add(OLD_TO_NEW.getOrDefault(n, n)));
        return names.iterator();
    }

    private static Map<String, String> invert(Map<String, String> map) {
        Map<String, String> out = new ConcurrentHashMap<>();
        map.forEach((k, v) -> out.put(v, k));
        return Map.copyOf(out);
    }
}
