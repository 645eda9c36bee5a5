package dev.syncular.server.testsupport;

import java.util.Comparator;
import org.junit.jupiter.api.ClassDescriptor;
import org.junit.jupiter.api.ClassOrderer;
import org.junit.jupiter.api.ClassOrdererContext;

/**
 * Test classes in reverse order of their fully qualified names: the opposite of the default order of classes that share
 * a Quarkus test profile, to check that none depends on a neighbour having run first (issue 46). Quarkus' class orderer
 * still groups the classes by profile and calls this one within the groups:
 * {@code ./mvnw test -Dtest=... -Djunit.quarkus.orderer.secondary-orderer=dev.syncular.server.testsupport.ReverseClassOrder}.
 */
public class ReverseClassOrder implements ClassOrderer {
    @Override
    public void orderClasses(ClassOrdererContext context) {
        Comparator<ClassDescriptor> byName =
                Comparator.comparing(d -> d.getTestClass().getName());
        context.getClassDescriptors().sort(byName.reversed());
    }
}
