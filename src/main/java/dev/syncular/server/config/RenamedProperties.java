package dev.syncular.server.config;

import io.smallrye.config.ConfigSourceInterceptor;
import io.smallrye.config.ConfigSourceInterceptorContext;
import io.smallrye.config.ConfigSourceInterceptorFactory;
import io.smallrye.config.ConfigValue;
import io.smallrye.config.FallbackConfigSourceInterceptor;
import io.smallrye.config.Priorities;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.OptionalInt;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.jboss.logging.Logger;

/**
 * Properties that were renamed, still read under their old names through SmallRye Config's fallback relocation
 * ({@link FallbackConfigSourceInterceptor}, new name → old name): a lookup of the new name also looks up the old one,
 * and the old one counts only when its source outranks the new name's (the mappings' defaults are the lowest
 * source); the first such use of each old name logs a warning naming the new one. The new name wins when both are
 * set in sources of the same rank, and an old name in the environment outranks a new one in {@code
 * application.properties}, as for any property. A renamed property whose environment variable is unchanged (e.g.
 * {@code SYNCULAR_REACTIONS_WEBHOOK_URL} for both {@code syncular.reactions.webhook-url} and {@code
 * syncular.reactions.webhook.url}) needs no fallback there.
 *
 * <p>A replaced property is listed the same way: {@code syncular.s3.threads}, the pool the synchronous S3 client's
 * calls ran on, bounded the S3 calls in flight per pod; the asynchronous client holds no thread per call, and the
 * bound is now its connection pool's, {@code quarkus.s3.async-client.max-concurrency} (issue 44, hole 5), which
 * the old name still sets, with the warning.
 *
 * <p>Registered in {@code META-INF/services/io.smallrye.config.ConfigSourceInterceptorFactory}, so Quarkus applies
 * it to every configuration lookup, mappings included; property-name iteration reports an old name as its new
 * one, so no mapping misses it or reports it as unknown. Its priority puts it inside SmallRye's expression
 * interceptor (an expression naming a new name, such as a per-type reaction endpoint's inherited defaults, finds
 * the old one) and outside the profile interceptor (a {@code %prod.} old name is found).
 */
public final class RenamedProperties implements ConfigSourceInterceptorFactory {
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

    @Override
    public ConfigSourceInterceptor getInterceptor(ConfigSourceInterceptorContext context) {
        return new Fallback();
    }

    @Override
    public OptionalInt getPriority() {
        return OptionalInt.of(Priorities.LIBRARY + 280);
    }

    /** SmallRye's fallback over {@link #RENAMED}, warning once per old name used and iterating new names only. */
    static final class Fallback extends FallbackConfigSourceInterceptor {
        /** Old names already warned about by this configuration (each build of the configuration warns afresh). */
        private final Set<String> warned = ConcurrentHashMap.newKeySet();

        Fallback() {
            super(RENAMED);
        }

        @Override
        public ConfigValue getValue(ConfigSourceInterceptorContext context, String name) {
            ConfigValue value = super.getValue(context, name);
            String old = RENAMED.get(name);
            if (old == null || value == null) {
                return value;
            }
            // the fallback took the old name's value when the new name has none, or one of a lower-ranked source
            ConfigValue own = context.proceed(name);
            boolean fromOld = own == null || own.getConfigSourceOrdinal() != value.getConfigSourceOrdinal();
            if (fromOld && warned.add(old)) {
                LOG.warnf("%s is deprecated: set %s instead (the old name is still read)", old, name);
            }
            return value;
        }

        @Override
        public Iterator<String> iterateNames(ConfigSourceInterceptorContext context) {
            Set<String> names = new LinkedHashSet<>();
            context.iterateNames().forEachRemaining(n -> names.add(OLD_TO_NEW.getOrDefault(n, n)));
            return names.iterator();
        }
    }

    private static Map<String, String> invert(Map<String, String> map) {
        Map<String, String> out = new ConcurrentHashMap<>();
        map.forEach((k, v) -> out.put(v, k));
        return Map.copyOf(out);
    }
}
