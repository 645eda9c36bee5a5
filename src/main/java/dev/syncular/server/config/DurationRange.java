package dev.syncular.server.config;

import static java.lang.annotation.ElementType.METHOD;
import static java.lang.annotation.ElementType.TYPE_USE;
import static java.lang.annotation.RetentionPolicy.RUNTIME;

import jakarta.validation.Constraint;
import jakarta.validation.ConstraintValidator;
import jakarta.validation.ConstraintValidatorContext;
import jakarta.validation.Payload;
import java.lang.annotation.Documented;
import java.lang.annotation.Retention;
import java.lang.annotation.Target;
import java.time.Duration;

/**
 * A {@link Duration} between {@link #min()} and {@link #max()}, both included, each in ISO-8601 ({@code PT1S},
 * {@code PT15M}; {@code PT0.000000001S} for "more than zero").
 */
@Documented
@Constraint(validatedBy = DurationRange.Check.class)
@Target({METHOD, TYPE_USE})
@Retention(RUNTIME)
public @interface DurationRange {
    /** The shortest duration above zero: {@code min = MORE_THAN_ZERO} refuses {@code 0s} and negative ones. */
    String MORE_THAN_ZERO = "PT0.000000001S";

    String min() default "PT0S";

    /** Unbounded by default. */
    String max() default "";

    String message();

    Class<?>[] groups() default {};

    Class<? extends Payload>[] payload() default {};

    /** The validator of {@link DurationRange}. */
    final class Check implements ConstraintValidator<DurationRange, Duration> {
        private Duration min = Duration.ZERO;
        private Duration max = Duration.ZERO;
        private boolean bounded;

        @Override
        public void initialize(DurationRange range) {
            this.min = Duration.parse(range.min());
            this.bounded = !range.max().isEmpty();
            this.max = bounded ? Duration.parse(range.max()) : Duration.ZERO;
        }

        @Override
        public boolean isValid(Duration value, ConstraintValidatorContext context) {
            return value == null || value.compareTo(min) >= 0 && (!bounded || value.compareTo(max) <= 0);
        }
    }
}
