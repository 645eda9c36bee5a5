package dev.syncular.server.cli;

import dev.syncular.server.wire.PullHeader;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The command line of {@link SyncularCli}: options (anywhere on the line) and the positional words. */
final class CliOptions {
    String url = "http://localhost:8080";
    Path schema;
    Path state = Path.of("syncular-state.json");
    String clientId;
    final Map<String, String> headers = new LinkedHashMap<>();
    int accept = PullHeader.ACCEPT_INLINE_ROWS | PullHeader.ACCEPT_EXTERNAL_ROWS;
    int limitCommits;
    int limitSnapshotRows;
    int maxSnapshotPages;
    boolean decode;
    boolean verbose;
    String scopes;
    String sub;
    Path out;
    String mediaType;
    /** {@code watch}: stop after this many deltas; 0 = until the socket closes or the process is stopped. */
    int count;
    /** §5.10.1 {@code crdtType} names the schema may use besides the built-in {@code yjs-doc} ({@code --crdt-types}). */
    final java.util.Set<String> crdtTypes = new java.util.LinkedHashSet<>();
    final List<String> words = new ArrayList<>();

    static CliOptions parse(String[] args) {
        CliOptions o = new CliOptions();
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (!a.startsWith("-") || a.equals("-")) {
                o.words.add(a);
                continue;
            }
            switch (a) {
                case "--decode" -> o.decode = true;
                case "-v", "--verbose" -> o.verbose = true;
                case "-h", "--help" -> o.words.add(0, "help");
                default -> {
                    if (i + 1 >= args.length) {
                        throw new IllegalArgumentException(a + " needs a value (see --help)");
                    }
                    o.option(a, args[++i]);
                }
            }
        }
        return o;
    }

    private void option(String name, String value) {
        switch (name) {
            case "--url" -> url = value;
            case "--schema" -> schema = Path.of(value);
            case "--state" -> state = Path.of(value);
            case "--client-id" -> clientId = value;
            case "--actor" -> headers.put("x-actor-id", value);
            case "--partition" -> headers.put("x-syncular-partition", value);
            case "--token" -> headers.put("Authorization", "Bearer " + value);
            case "-H", "--header" -> {
                int colon = value.indexOf(':');
                if (colon <= 0) {
                    throw new IllegalArgumentException("a header is 'Name: value', not '" + value + "'");
                }
                headers.put(value.substring(0, colon).trim(), value.substring(colon + 1).trim());
            }
            case "--accept" -> accept = accept(value);
            case "--limit-commits" -> limitCommits = number(name, value);
            case "--limit-snapshot-rows" -> limitSnapshotRows = number(name, value);
            case "--max-snapshot-pages" -> maxSnapshotPages = number(name, value);
            case "--scopes" -> scopes = value;
            case "--sub" -> sub = value;
            case "-o", "--out" -> out = Path.of(value);
            case "--media-type" -> mediaType = value;
            case "--count" -> count = number(name, value);
            case "--crdt-types" -> {
                for (String t : value.split(",")) {
                    if (t.isBlank()) {
                        throw new IllegalArgumentException("--crdt-types takes crdtType names, comma-separated");
                    }
                    crdtTypes.add(t.trim());
                }
            }
            default -> throw new IllegalArgumentException("unknown option " + name + " (see --help)");
        }
    }

    private static int accept(String list) {
        int bits = 0;
        for (String s : list.split(",")) {
            bits |= switch (s.trim()) {
                case "inline" -> PullHeader.ACCEPT_INLINE_ROWS;
                case "external" -> PullHeader.ACCEPT_EXTERNAL_ROWS;
                case "sqlite" -> PullHeader.ACCEPT_SQLITE;
                case "signed-urls" -> PullHeader.ACCEPT_SIGNED_URLS;
                default -> throw new IllegalArgumentException("--accept takes inline, external, sqlite and "
                        + "signed-urls, not '" + s + "'");
            };
        }
        return bits;
    }

    private static int number(String name, String value) {
        try {
            return Integer.parseInt(value);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(name + " takes a number, not '" + value + "'");
        }
    }

    /** The positional word at {@code index}, or a usage error naming it. */
    String word(int index, String what) {
        if (words.size() <= index) {
            throw new IllegalArgumentException("missing " + what + " (see --help)");
        }
        return words.get(index);
    }
}
