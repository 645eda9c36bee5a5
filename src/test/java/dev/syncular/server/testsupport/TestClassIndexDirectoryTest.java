package dev.syncular.server.testsupport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.quarkus.test.common.PathTestHelper;
import io.quarkus.test.common.TestClassIndexer;
import java.nio.file.Files;
import java.nio.file.Path;
import org.jboss.jandex.DotName;
import org.jboss.jandex.Index;
import org.junit.jupiter.api.Test;

/**
 * The two surefire JVMs share {@code target/test-classes}; Quarkus keeps its test-class index in a file there that
 * one JVM deleted while the other listed the directory (a discovery error in CI). A directory holds the file's name
 * so that nothing appears or vanishes there; this test pins the Quarkus behaviour the workaround relies on (see
 * {@code src/test/resources/test-classes.idx/README.txt}).
 */
class TestClassIndexDirectoryTest {

    private final Path testClasses = PathTestHelper.getTestClassesLocation(TestClassIndexDirectoryTest.class);
    private final Path indexPath = testClasses.resolve("test-classes.idx");

    @Test
    void theIndexNameIsTakenByANonEmptyDirectory() throws Exception {
        assertTrue(Files.isDirectory(indexPath), indexPath + " is a directory");
        assertTrue(Files.exists(indexPath.resolve("README.txt")), "the directory is not empty");
    }

    @Test
    void writingTheIndexLeavesTheDirectoryAndReadingItIndexesTheClassesAfresh() {
        Index index = TestClassIndexer.indexTestClasses(TestClassIndexDirectoryTest.class);
        TestClassIndexer.writeIndex(index, TestClassIndexDirectoryTest.class);
        assertTrue(Files.isDirectory(indexPath), "writing the index left the directory in place");

        Index read = TestClassIndexer.readIndex(TestClassIndexDirectoryTest.class);
        assertEquals(
                TestClassIndexDirectoryTest.class.getName(),
                read.getClassByName(DotName.createSimple(TestClassIndexDirectoryTest.class))
                        .name()
                        .toString());
    }

    @Test
    void removingTheIndexFailsInAWayQuarkusIgnoresAndKeepsTheDirectory() {
        // QuarkusTestExtension's shutdown catches any Exception from removeIndex.
        assertThrows(
                IllegalStateException.class, () -> TestClassIndexer.removeIndex(TestClassIndexDirectoryTest.class));
        assertTrue(Files.isDirectory(indexPath), "the directory is still there");
    }
}
