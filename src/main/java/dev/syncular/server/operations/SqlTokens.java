package dev.syncular.server.operations;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * A lexical pass over a registered statement's positional SQL: words, quoted identifiers ({@code "x"},
 * {@code `x`}, {@code [x]}), string literals, numbers, {@code ?} placeholders and punctuation, with comments and
 * whitespace skipped. Enough to check a relation plan against its SQL, count placeholders and rewrite them; it
 * is not a parser. Offsets are UTF-16 indexes, as the relation plan's.
 */
final class SqlTokens {
    enum Kind {
        WORD,
        QUOTED_IDENTIFIER,
        STRING,
        NUMBER,
        PLACEHOLDER,
        PUNCT
    }

    record Token(Kind kind, int start, int end, String text) {
        /** The identifier's name: a word as written, a quoted identifier without its quotes (doubled quotes undone). */
        String identifier() {
            if (kind == Kind.WORD) {
                return text;
            }
            String inner = text.substring(1, text.length() - 1);
            char q = text.charAt(0);
            return q == '[' ? inner : inner.replace(String.valueOf(q) + q, String.valueOf(q));
        }

        boolean isWord(String w) {
            return kind == Kind.WORD && text.equalsIgnoreCase(w);
        }

        boolean isIdentifier() {
            return kind == Kind.WORD || kind == Kind.QUOTED_IDENTIFIER;
        }

        /** Whether this identifier names {@code table} (a word case-insensitively, a quoted identifier exactly). */
        boolean names(String table) {
            return kind == Kind.WORD
                    ? text.toLowerCase(Locale.ROOT).equals(table.toLowerCase(Locale.ROOT))
                    : kind == Kind.QUOTED_IDENTIFIER && identifier().equals(table);
        }
    }

    /** A statement the pass cannot read (an unterminated literal or comment). */
    static final class Unreadable extends Exception {
        Unreadable(String message) {
            super(message, null, false, false);
        }
    }

    private SqlTokens() {}

    static List<Token> of(String sql) throws Unreadable {
        List<Token> out = new ArrayList<>();
        int i = 0;
        int n = sql.length();
        while (i < n) {
            char c = sql.charAt(i);
            if (Character.isWhitespace(c)) {
                i++;
            } else if (c == '-' && i + 1 < n && sql.charAt(i + 1) == '-') {
                while (i < n && sql.charAt(i) != '\n') {
                    i++;
                }
            } else if (c == '/' && i + 1 < n && sql.charAt(i + 1) == '*') {
                int close = sql.indexOf("*/", i + 2);
                if (close < 0) {
                    throw new Unreadable("unterminated comment");
                }
                i = close + 2;
            } else if (c == '\'' || c == '"' || c == '`') {
                int j = i + 1;
                while (true) {
                    if (j >= n) {
                        throw new Unreadable("unterminated quoted text");
                    }
                    if (sql.charAt(j) == c) {
                        if (j + 1 < n && sql.charAt(j + 1) == c) {
                            j += 2;
                            continue;
                        }
                        break;
                    }
                    j++;
                }
                out.add(new Token(c == '\'' ? Kind.STRING : Kind.QUOTED_IDENTIFIER, i, j + 1, sql.substring(i, j + 1)));
                i = j + 1;
            } else if (c == '[') {
                int close = sql.indexOf(']', i + 1);
                if (close < 0) {
                    throw new Unreadable("unterminated bracketed identifier");
                }
                out.add(new Token(Kind.QUOTED_IDENTIFIER, i, close + 1, sql.substring(i, close + 1)));
                i = close + 1;
            } else if (c == '?') {
                out.add(new Token(Kind.PLACEHOLDER, i, i + 1, "?"));
                i++;
            } else if (Character.isDigit(c) || (c == '.' && i + 1 < n && Character.isDigit(sql.charAt(i + 1)))) {
                int j = i + 1;
                while (j < n
                        && (Character.isLetterOrDigit(sql.charAt(j))
                                || sql.charAt(j) == '.'
                                || ((sql.charAt(j) == '+' || sql.charAt(j) == '-')
                                        && (sql.charAt(j - 1) == 'e' || sql.charAt(j - 1) == 'E')))) {
                    j++;
                }
                out.add(new Token(Kind.NUMBER, i, j, sql.substring(i, j)));
                i = j;
            } else if (Character.isLetter(c) || c == '_') {
                int j = i + 1;
                while (j < n
                        && (Character.isLetterOrDigit(sql.charAt(j)) || sql.charAt(j) == '_' || sql.charAt(j) == '$')) {
                    j++;
                }
                out.add(new Token(Kind.WORD, i, j, sql.substring(i, j)));
                i = j;
            } else {
                out.add(new Token(Kind.PUNCT, i, i + 1, String.valueOf(c)));
                i++;
            }
        }
        return out;
    }
}
