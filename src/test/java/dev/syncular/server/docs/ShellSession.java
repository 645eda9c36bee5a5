package dev.syncular.server.docs;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * One {@code bash} a walkthrough's blocks run in, one after the other, as in a reader's terminal: what a block
 * exports, the aliases and functions it defines, carry over to the next. Aliases are expanded (as in an interactive
 * shell) and a failing command is reported by an {@code ERR} trap, whatever the block does next.
 */
final class ShellSession implements AutoCloseable {
    /** Marks a command that failed, in a block's output. */
    static final String FAILED = "__DOC_TEST_FAILED__";

    private static final String DONE = "__DOC_TEST_DONE__";

    private final Process bash;
    private final Writer in;
    private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();
    private final Path scratch;
    private int blocks;

    /** What a block printed (stdout and stderr, in order) and the status of its last command. */
    record Result(String output, int status) {
        boolean failed() {
            return output.contains(FAILED);
        }

        /** The output without the trap's failure lines. */
        String printed() {
            return output.lines().filter(l -> !l.startsWith(FAILED)).reduce("", (a, b) -> a + b + "\n");
        }
    }

    ShellSession(Path workingDirectory, Map<String, String> environment, Path scratch) throws IOException {
        this.scratch = Files.createDirectories(scratch);
        ProcessBuilder pb = new ProcessBuilder("bash", "--noprofile", "--norc")
                .directory(workingDirectory.toFile())
                .redirectErrorStream(true);
        pb.environment().putAll(environment);
        bash = pb.start();
        in = new java.io.OutputStreamWriter(bash.getOutputStream(), StandardCharsets.UTF_8);
        Thread reader = new Thread(
                () -> {
                    try (BufferedReader out =
                            new BufferedReader(new InputStreamReader(bash.getInputStream(), StandardCharsets.UTF_8))) {
                        for (String line = out.readLine(); line != null; line = out.readLine()) {
                            lines.add(line);
                        }
                    } catch (IOException e) {
                        lines.add(DONE + " 255");
                    }
                },
                "doc-test-shell");
        reader.setDaemon(true);
        reader.start();
        send("shopt -s expand_aliases\nset -o pipefail\n" + "trap 'echo \"" + FAILED
                + " exit $? of: $BASH_COMMAND\" >&2' ERR\n");
    }

    /** Runs {@code script} as the session's next input, with no stdin; waits at most {@code deadline}. */
    Result run(String script, Duration deadline) throws IOException, InterruptedException {
        int n = ++blocks;
        Path file = scratch.resolve("block-" + n + ".sh");
        Path out = scratch.resolve("block-" + n + ".out");
        Files.writeString(file, script);
        send("source '" + file + "' >'" + out + "' 2>&1 </dev/null; echo \"" + DONE + " $?\"\n");
        long until = System.nanoTime() + deadline.toNanos();
        while (true) {
            long left = until - System.nanoTime();
            String line = left > 0 ? lines.poll(left, TimeUnit.NANOSECONDS) : null;
            if (line == null) {
                throw new AssertionError("no end within " + deadline + "; output so far:\n" + read(out));
            }
            if (line.startsWith(DONE)) {
                return new Result(
                        read(out),
                        Integer.parseInt(line.substring(DONE.length()).strip()));
            }
        }
    }

    private static String read(Path out) throws IOException {
        return Files.exists(out) ? Files.readString(out) : "";
    }

    private void send(String text) throws IOException {
        in.write(text);
        in.flush();
    }

    @Override
    public void close() {
        try {
            in.close();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } finally {
            try {
                if (!bash.waitFor(10, TimeUnit.SECONDS)) {
                    bash.destroyForcibly();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                bash.destroyForcibly();
            }
        }
    }
}
