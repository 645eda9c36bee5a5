package dev.syncular.server.docs;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The fenced code blocks of the project's documentation (README.md, docs/*.md, the chart's README) with the
 * {@code doc-test} marker each command block carries: an HTML comment on the line above its fence, invisible on the
 * rendered page, saying who runs the block exactly as written.
 *
 * <ul>
 *   <li>{@code <!-- doc-test: ci -->}: {@code .ci/run} runs each of its commands (its lines, comments left out)
 *       verbatim — the quick start, dev mode;
 *   <li>{@code <!-- doc-test: run <walkthrough> -->}: {@code DocumentedCommandsIT} runs it, in document order with
 *       the walkthrough's other blocks, in one shell session (a reader's terminal: exports and aliases carry over);
 *   <li>{@code <!-- doc-test: run <walkthrough> background until <url> -->} (or {@code until-output <text>}): a
 *       process the reader leaves running in another terminal, a server: started on its own, waited for until the
 *       URL answers 2xx (or its output shows the text), stopped when the walkthrough ends;
 *   <li>{@code <!-- doc-test: run <walkthrough> output -->} on a block after a run block: what that block prints,
 *       compared as JSON;
 *   <li>{@code <!-- doc-test: not run: <reason> -->}: a command this machine cannot run (a Kubernetes cluster, a
 *       Docker engine, a registry, a benchmark that must run alone), with the reason.
 * </ul>
 *
 * A run block whose lines start with {@code $ } is a transcript: each command is run and what follows it up to the
 * next {@code $ } line is the output it must print (compared as JSON when it parses as JSON, else line by line).
 */
record DocBlocks(List<Block> blocks) {

    /** The documentation files whose command blocks are checked. */
    static List<Path> documents(Path root) {
        List<Path> docs = new ArrayList<>();
        docs.add(root.resolve("README.md"));
        try (Stream<Path> files = Files.list(root.resolve("docs"))) {
            files.filter(p -> p.toString().endsWith(".md")).sorted().forEach(docs::add);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        docs.add(root.resolve("helm").resolve("syncular-server").resolve("README.md"));
        return docs;
    }

    /** Languages of a command block. */
    static final Set<String> SHELL = Set.of("sh", "bash", "shell", "console");

    private static final Pattern FENCE = Pattern.compile("^(\\s*)```\\s*([\\w-]*)\\s*$");
    private static final Pattern MARKER = Pattern.compile("^\\s*<!--\\s*doc-test:\\s*(.*?)\\s*-->\\s*$");

    /** How a block is run. */
    enum Kind {
        /** No marker. */
        NONE,
        CI,
        NOT_RUN,
        RUN,
        BACKGROUND,
        OUTPUT
    }

    /**
     * One fenced block.
     *
     * @param file        the document, relative to the repository
     * @param line        the line of its opening fence (1-based)
     * @param language    the fence's info string ({@code ""} for none)
     * @param text        its content, the fence's indentation removed
     * @param kind        its marker's kind
     * @param walkthrough the walkthrough a run marker names ({@code ""} otherwise)
     * @param until       a background block's readiness: {@code url <url>} or {@code output <text>} ({@code ""}
     *                    otherwise); a not-run block's reason
     */
    record Block(Path file, int line, String language, String text, Kind kind, String walkthrough, String until) {

        /** A block a reader runs in a shell: a shell language, or lines starting with a prompt. */
        boolean command() {
            return SHELL.contains(language) || (language.isEmpty() && text.startsWith("$ "));
        }

        /** A transcript: prompts, each followed by the output of its command. */
        boolean transcript() {
            return text.startsWith("$ ");
        }

        String where() {
            return file + ":" + line;
        }

        /** The command lines: comments and blank lines left out, continuation lines joined. */
        List<String> commands() {
            List<String> out = new ArrayList<>();
            StringBuilder pending = new StringBuilder();
            for (String raw : text.split("\n", -1)) {
                String line = raw.strip();
                if (pending.isEmpty() && (line.isEmpty() || line.startsWith("#"))) {
                    continue;
                }
                if (line.endsWith("\\")) {
                    pending.append(line, 0, line.length() - 1).append(' ');
                    pending.replace(0, pending.length(), pending.toString().stripTrailing() + " ");
                    continue;
                }
                pending.append(commentless(line));
                out.add(pending.toString().strip());
                pending.setLength(0);
            }
            return out;
        }

        private static String commentless(String line) {
            int hash = line.indexOf("  #");
            return hash < 0 ? line : line.substring(0, hash).strip();
        }
    }

    static DocBlocks read(Path root) {
        List<Block> all = new ArrayList<>();
        for (Path doc : documents(root)) {
            all.addAll(parse(root.relativize(doc), text(doc)));
        }
        return new DocBlocks(List.copyOf(all));
    }

    private static String text(Path doc) {
        try {
            return Files.readString(doc);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static List<Block> parse(Path file, String markdown) {
        String[] lines = markdown.split("\n", -1);
        List<Block> out = new ArrayList<>();
        for (int i = 0; i < lines.length; i++) {
            Matcher open = FENCE.matcher(lines[i]);
            if (!open.matches()) {
                continue;
            }
            String indent = open.group(1);
            String language = open.group(2);
            int start = i;
            StringBuilder text = new StringBuilder();
            for (i++; i < lines.length && !lines[i].strip().equals("```"); i++) {
                String body = lines[i].startsWith(indent) ? lines[i].substring(indent.length()) : lines[i];
                text.append(body).append('\n');
            }
            Matcher m = start > 0 ? MARKER.matcher(lines[start - 1]) : null;
            String marker = m != null && m.matches() ? m.group(1) : "";
            out.add(block(file, start + 1, language, text.toString(), marker));
        }
        return out;
    }

    private static Block block(Path file, int line, String language, String text, String marker) {
        if (marker.isEmpty()) {
            return new Block(file, line, language, text, Kind.NONE, "", "");
        }
        if (marker.equals("ci")) {
            return new Block(file, line, language, text, Kind.CI, "", "");
        }
        if (marker.startsWith("not run:")) {
            return new Block(
                    file,
                    line,
                    language,
                    text,
                    Kind.NOT_RUN,
                    "",
                    marker.substring(8).strip());
        }
        Matcher run = Pattern.compile("run\\s+(\\S+)(?:\\s+(.*))?").matcher(marker);
        if (!run.matches()) {
            throw new IllegalArgumentException(file + ":" + line + ": unknown doc-test marker '" + marker + "'");
        }
        String walkthrough = run.group(1);
        String rest = run.group(2) == null ? "" : run.group(2).strip();
        if (rest.isEmpty()) {
            return new Block(file, line, language, text, Kind.RUN, walkthrough, "");
        }
        if (rest.equals("output")) {
            return new Block(file, line, language, text, Kind.OUTPUT, walkthrough, "");
        }
        Matcher background =
                Pattern.compile("background\\s+until(-output)?\\s+(.+)").matcher(rest);
        if (!background.matches()) {
            throw new IllegalArgumentException(file + ":" + line + ": unknown doc-test marker '" + marker + "'");
        }
        String until = (background.group(1) == null ? "url " : "output ")
                + background.group(2).strip();
        return new Block(file, line, language, text, Kind.BACKGROUND, walkthrough, until);
    }

    /** The run, background and output blocks of {@code walkthrough}, in document order. */
    List<Block> walkthrough(String name) {
        return blocks.stream().filter(b -> b.walkthrough().equals(name)).toList();
    }

    /** The walkthroughs named by run markers, in the order they first appear. */
    List<String> walkthroughs() {
        return blocks.stream()
                .map(Block::walkthrough)
                .filter(w -> !w.isEmpty())
                .distinct()
                .toList();
    }
}
