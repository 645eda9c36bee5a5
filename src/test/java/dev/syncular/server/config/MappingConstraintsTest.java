package dev.syncular.server.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.syncular.server.testsupport.MappedConfig;
import io.smallrye.config.ConfigValidationException;
import jakarta.validation.Constraint;
import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.Pattern;
import jakarta.validation.constraints.PositiveOrZero;
import java.lang.annotation.Annotation;
import java.lang.reflect.AnnotatedParameterizedType;
import java.lang.reflect.AnnotatedType;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** {@link MappingConstraints}: the constraints of every mapping are ones it checks, and it checks them where they sit. */
class MappingConstraintsTest {
    private static final Set<Class<? extends Annotation>> BUILT_IN =
            Set.of(Min.class, Max.class, PositiveOrZero.class, Pattern.class);

    /** A constraint it does not know would stop the start; this finds one before any start does. */
    @Test
    void everyConstraintOnAMappingIsOneItChecksWithAMessageOfItsOwn() {
        List<String> found = new ArrayList<>();
        for (Class<?> mapping : MappedConfig.MAPPINGS) {
            constraints(mapping, found, new ArrayList<>());
        }
        assertTrue(found.size() >= 20, found.toString());
        for (String f : found) {
            assertFalse(f.contains("unsupported") || f.contains("default message"), f);
        }
    }

    @Test
    void aTypeUseConstraintOnAListElementNamesTheElement() {
        ConfigValidationException e = assertThrows(
                ConfigValidationException.class,
                () -> MappedConfig.config(
                        Map.of("syncular.storage.replicas", "postgresql://r1/db,mysql://r2/db"), Map.of()));
        assertEquals(1, e.getProblemCount(), e.getMessage());
        assertTrue(e.getMessage().contains("syncular.storage.replicas[1] each is a reactive URL"), e.getMessage());
        assertFalse(e.getMessage().contains("mysql://"), "the URL may carry a password: " + e.getMessage());
    }

    @Test
    void aRangeOfDurationsHoldsBothBounds() {
        for (String ttl : List.of("500ms", "16m")) {
            ConfigValidationException e = assertThrows(
                    ConfigValidationException.class,
                    () -> MappedConfig.config(Map.of("syncular.s3.presign-ttl", ttl), Map.of()));
            assertTrue(e.getMessage().contains("syncular.s3.presign-ttl must be more than 0s and at most 15m"), ttl);
        }
        MappedConfig.config(Map.of("syncular.s3.presign-ttl", "15m"), Map.of());
        MappedConfig.config(Map.of("syncular.s3.presign-ttl", "1s"), Map.of());
    }

    @Test
    void aFractionalLowerBoundAndAMaximumOfIntegers() {
        ConfigValidationException e = assertThrows(
                ConfigValidationException.class,
                () -> MappedConfig.config(
                        Map.of("syncular.realtime.presence-rate", "-0.5", "syncular.tenants.top-n", "1001"), Map.of()));
        assertEquals(2, e.getProblemCount(), e.getMessage());
        assertTrue(e.getMessage().contains("syncular.realtime.presence-rate must be 0 or more"), e.getMessage());
        assertTrue(e.getMessage().contains("syncular.tenants.top-n must be 1 to 1000"), e.getMessage());
    }

    /** Every constraint annotation on {@code type}'s methods and their type uses, nested groups included. */
    private static void constraints(Class<?> type, List<String> found, List<Class<?>> seen) {
        if (seen.contains(type)) {
            return;
        }
        seen.add(type);
        for (Method m : type.getMethods()) {
            if (m.isDefault() || java.lang.reflect.Modifier.isStatic(m.getModifiers()) || m.getParameterCount() > 0) {
                continue;
            }
            describe(type.getSimpleName() + "." + m.getName(), m.getAnnotations(), found);
            types(type.getSimpleName() + "." + m.getName(), m.getAnnotatedReturnType(), found, seen);
        }
    }

    private static void types(String where, AnnotatedType t, List<String> found, List<Class<?>> seen) {
        describe(where, t.getAnnotations(), found);
        if (t instanceof AnnotatedParameterizedType p) {
            for (AnnotatedType arg : p.getAnnotatedActualTypeArguments()) {
                types(where, arg, found, seen);
            }
        } else if (t.getType() instanceof Class<?> c
                && c.isInterface()
                && c.getName().startsWith("dev.syncular.")) {
            constraints(c, found, seen);
        }
    }

    private static void describe(String where, Annotation[] annotations, List<String> found) {
        for (Annotation a : annotations) {
            Constraint c = a.annotationType().getAnnotation(Constraint.class);
            if (c == null) {
                continue;
            }
            boolean checked = BUILT_IN.contains(a.annotationType()) || c.validatedBy().length == 1;
            String message;
            try {
                message = (String) a.annotationType().getMethod("message").invoke(a);
            } catch (ReflectiveOperationException e) {
                throw new AssertionError(e);
            }
            found.add(where + " @" + a.annotationType().getSimpleName() + (checked ? "" : " unsupported")
                    + (message.startsWith("{") ? " default message" : ""));
        }
    }
}
