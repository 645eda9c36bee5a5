package dev.syncular.server.config;

import static java.lang.annotation.ElementType.METHOD;
import static java.lang.annotation.ElementType.TYPE_USE;
import static java.lang.annotation.RetentionPolicy.RUNTIME;

import io.quarkus.runtime.configuration.MemorySize;
import jakarta.validation.Constraint;
import jakarta.validation.ConstraintValidator;
import jakarta.validation.ConstraintValidatorContext;
import jakarta.validation.Payload;
import java.lang.annotation.Documented;
import java.lang.annotation.Retention;
import java.lang.annotation.Target;

/** A size ({@link MemorySize}) between {@link #min()} and {@link #max()} bytes, both included. */
@Documented
@Constraint(validatedBy = ByteSize.Check.class)
@Target({METHOD, TYPE_USE})
@Retention(RUNTIME)
public @interface ByteSize {
    long min() default 0;

    long max() default Long.MAX_VALUE;

    String message();

    Class<?>[] groups() default {};

    Class<? extends Payload>[] payload() default {};

    /** The validator of {@link ByteSize}. */
    final class Check implements ConstraintValidator<ByteSize, MemorySize> {
        private long min;
        private long max;

        @Override
        public void initialize(ByteSize bounds) {
            this.min = bounds.min();
            this.max = bounds.max();
        }

        @Override
        public boolean isValid(MemorySize value, ConstraintValidatorContext context) {
            return value == null || value.asLongValue() >= min && value.asLongValue() <= max;
        }
    }
}
