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
import java.nio.charset.StandardCharsets;

/**
 * An HMAC key the server signs or seals with (the admin token, signed segment URLs §5.4, auth lease records §7.3):
 * unset or blank, or at least {@value #MIN_BYTES} bytes of UTF-8 text. The message never shows the key.
 */
@Documented
@Constraint(validatedBy = SecretKey.Check.class)
@Target({METHOD, TYPE_USE})
@Retention(RUNTIME)
public @interface SecretKey {
    /** The shortest key of an HMAC the server signs with. */
    int MIN_BYTES = 32;

    String message() default "must have at least " + MIN_BYTES + " bytes";

    Class<?>[] groups() default {};

    Class<? extends Payload>[] payload() default {};

    /** The validator of {@link SecretKey}. */
    final class Check implements ConstraintValidator<SecretKey, String> {
        /** Whether {@code key} is acceptable: blank (unset) or long enough. */
        public static boolean acceptable(String key) {
            return key == null || key.isBlank() || key.getBytes(StandardCharsets.UTF_8).length >= MIN_BYTES;
        }

        @Override
        public boolean isValid(String value, ConstraintValidatorContext context) {
            return acceptable(value);
        }
    }
}
