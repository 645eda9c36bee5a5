package dev.syncular.server.config;

import io.quarkus.runtime.annotations.RegisterForReflection;
import io.smallrye.config.ConfigMapping;
import io.smallrye.config.ConfigMappingInterface;
import io.smallrye.config.ConfigValidationException;
import io.smallrye.config.ConfigValidator;
import jakarta.validation.Constraint;
import jakarta.validation.ConstraintValidator;
import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.Pattern;
import jakarta.validation.constraints.PositiveOrZero;
import java.lang.annotation.Annotation;
import java.lang.reflect.AnnotatedParameterizedType;
import java.lang.reflect.AnnotatedType;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The Jakarta constraints on the {@code syncular.*} mapping methods, checked while SmallRye Config builds each mapping:
 * {@link Min}, {@link Max}, {@link PositiveOrZero} and {@link Pattern}, and every constraint of this server's own
 * ({@link ByteSize}, {@link DurationRange}, {@link SecretKey}: a {@link Constraint} with its validator class). They may
 * sit on a method or, as a type use, on the element of an {@code Optional}, a list or a map; groups and maps of groups
 * are walked. A problem reads {@code <property> <message>}, the property named as in the configuration
 * ({@code syncular.reactions.webhook.pool-size must be 1 or more}). Any other constraint stops the start naming it,
 * so none is silently ignored.
 *
 * <p>Hibernate Validator did this before; it cost about a second of every start of a pod (its metadata of the
 * mappings, built at run time in JVM mode), for the dozen constraints the mappings carry (docs/BENCHMARKS.md,
 * "Start-up").
 */
@RegisterForReflection(targets = {ByteSize.Check.class, DurationRange.Check.class, SecretKey.Check.class})
public final class MappingConstraints implements ConfigValidator {
    @Override
    public void validateMapping(Class<?> mappingClass, String prefix, Object mappingObject) {
        Set<String> problems = new LinkedHashSet<>();
        ConfigMappingInterface type = ConfigMappingInterface.getConfigurationInterface(mappingClass);
        walk(type, type.getNamingStrategy(), prefix, mappingObject, problems);
        if (!problems.isEmpty()) {
            throw new ConfigValidationException(problems.stream()
                    .map(ConfigValidationException.Problem::new)
                    .toArray(ConfigValidationException.Problem[]::new));
        }
    }

    /** The properties of {@code type} and of the interfaces it extends, read from {@code object}. */
    private static void walk(
            ConfigMappingInterface type,
            ConfigMapping.NamingStrategy naming,
            String prefix,
            Object object,
            Set<String> problems) {
        for (ConfigMappingInterface parent : type.getSuperTypes()) {
            walk(parent, naming, prefix, object, problems);
        }
        for (ConfigMappingInterface.Property property : type.getProperties()) {
            if (property.isDefaultMethod() || property.isToStringMethod()) {
                continue;
            }
            Method method = property.getMethod();
            String name = property.isParentPropertyName()
                    ? prefix
                    : prefix + "."
                            + (property.hasPropertyName()
                                    ? property.getPropertyName()
                                    : naming.apply(property.getPropertyName()));
            check(
                    name,
                    method.getAnnotatedReturnType(),
                    method.getAnnotations(),
                    invoke(method, object),
                    naming,
                    problems);
        }
    }

    /**
     * The constraints on {@code value} ({@code declared}, the method's, and the type use's), then those inside it: an
     * optional's content, a list's or a map's elements, a group's properties.
     */
    private static void check(
            String name,
            AnnotatedType type,
            Annotation[] declared,
            Object value,
            ConfigMapping.NamingStrategy naming,
            Set<String> problems) {
        Object checked = value instanceof Optional<?> o ? o.orElse(null) : value;
        for (Annotation[] annotations : new Annotation[][] {declared, type.getAnnotations()}) {
            for (Annotation a : annotations) {
                if (!holds(a, checked)) {
                    problems.add(name + " " + message(a));
                }
            }
        }
        if (value instanceof Optional<?> o) {
            if (o.isPresent()) {
                check(name, argument(type, 0), new Annotation[0], o.get(), naming, problems);
            }
        } else if (value instanceof Map<?, ?> map) {
            for (Map.Entry<?, ?> e : map.entrySet()) {
                check(name + "." + e.getKey(), argument(type, 1), new Annotation[0], e.getValue(), naming, problems);
            }
        } else if (value instanceof Collection<?> list) {
            int i = 0;
            for (Object element : list) {
                check(name + "[" + i++ + "]", argument(type, 0), new Annotation[0], element, naming, problems);
            }
        } else if (value != null && isGroup(type.getType())) {
            walk(ConfigMappingInterface.getConfigurationInterface(raw(type.getType())), naming, name, value, problems);
        }
    }

    /** Whether {@code value} meets constraint {@code a}; {@code true} for an annotation that is no constraint. */
    private static boolean holds(Annotation a, Object value) {
        if (value == null) {
            return true; // Jakarta Validation: an absent value meets every constraint but @NotNull, never used here
        }
        if (a instanceof Min min) {
            return ((Number) value).longValue() >= min.value();
        }
        if (a instanceof Max max) {
            return ((Number) value).longValue() <= max.value();
        }
        if (a instanceof PositiveOrZero) {
            return ((Number) value).doubleValue() >= 0;
        }
        if (a instanceof Pattern pattern) {
            return java.util.regex.Pattern.compile(pattern.regexp())
                    .matcher(value.toString())
                    .matches();
        }
        Constraint constraint = a.annotationType().getAnnotation(Constraint.class);
        if (constraint == null) {
            return true;
        }
        if (constraint.validatedBy().length != 1) {
            throw new IllegalStateException(
                    "configuration constraint @" + a.annotationType().getName()
                            + " is not checked by dev.syncular.server.config.MappingConstraints");
        }
        return validator(constraint.validatedBy()[0], a).isValid(value, null);
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private static ConstraintValidator<Annotation, Object> validator(Class<?> type, Annotation a) {
        try {
            ConstraintValidator v =
                    (ConstraintValidator) type.getDeclaredConstructor().newInstance();
            v.initialize(a);
            return v;
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("cannot create the validator " + type.getName(), e);
        }
    }

    /** The constraint's own message (every constraint of the mappings has one). */
    private static String message(Annotation a) {
        try {
            return (String) a.annotationType().getMethod("message").invoke(a);
        } catch (ReflectiveOperationException e) {
            return "is not valid (@" + a.annotationType().getSimpleName() + ")";
        }
    }

    private static Object invoke(Method method, Object object) {
        try {
            method.trySetAccessible();
            return method.invoke(object);
        } catch (InvocationTargetException e) {
            throw new IllegalStateException("cannot read " + method, e.getCause());
        } catch (IllegalAccessException e) {
            throw new IllegalStateException("cannot read " + method, e);
        }
    }

    /** Type argument {@code index} of a parameterized type, with its type-use annotations. */
    private static AnnotatedType argument(AnnotatedType type, int index) {
        if (type instanceof AnnotatedParameterizedType p && p.getAnnotatedActualTypeArguments().length > index) {
            return p.getAnnotatedActualTypeArguments()[index];
        }
        throw new IllegalStateException("configuration property of unexpected type " + type.getType());
    }

    /** A nested configuration group: an interface of this server's. */
    private static boolean isGroup(Type type) {
        Class<?> raw = raw(type);
        return raw.isInterface() && raw.getName().startsWith("dev.syncular.");
    }

    private static Class<?> raw(Type type) {
        if (type instanceof ParameterizedType p) {
            return (Class<?>) p.getRawType();
        }
        return type instanceof Class<?> c ? c : Object.class;
    }
}
