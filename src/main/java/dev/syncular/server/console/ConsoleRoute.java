package dev.syncular.server.console;

import jakarta.ws.rs.NameBinding;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Binds the console's filters ({@link ConsoleHeaders}, {@link EventStreamGate}) to the console's pages only: bound
 * to every route, they ran (each behind the REST layer's filter handler and its request-scope check) on every sync
 * round.
 */
@NameBinding
@Retention(RetentionPolicy.RUNTIME)
@Target({ElementType.TYPE, ElementType.METHOD})
public @interface ConsoleRoute {}
