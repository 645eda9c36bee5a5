package dev.syncular.server.bench;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

/** The benchmarks' readings of {@code /proc} (Linux): CPU seconds, memory fields, PostgreSQL's processes. */
final class ProcStats {
    private static final long CLK_TCK = 100; // USER_HZ on Linux

    private ProcStats() {}

    /** A whole {@code /proc} file, or {@code null} when the process went away. */
    static String read(Path p) {
        try {
            return Files.readString(p);
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    /** The fields of a {@code stat} line after {@code "pid (comm) "}: state = 0 … utime = 11, stime = 12. */
    static String[] fields(String stat) {
        return stat.substring(stat.lastIndexOf(')') + 2).split(" ");
    }

    /** utime + stime of a {@code stat} line in seconds; 0 for {@code null}. */
    static double cpuSeconds(String stat) {
        if (stat == null) {
            return 0;
        }
        String[] f = fields(stat);
        return (Long.parseLong(f[11]) + Long.parseLong(f[12])) / (double) CLK_TCK;
    }

    /** utime + stime of process {@code pid} in seconds; 0 when it went away. */
    static double processCpuSeconds(long pid) {
        return cpuSeconds(read(Path.of("/proc/" + pid + "/stat")));
    }

    /** cutime + cstime (exited, reaped children) of a {@code stat} line in seconds. */
    static double childCpuSeconds(String stat) {
        String[] f = fields(stat);
        return (Long.parseLong(f[13]) + Long.parseLong(f[14])) / (double) CLK_TCK;
    }

    /** A clock-tick field of a {@code stat} line in seconds. */
    static double ticks(String field) {
        return Long.parseLong(field) / (double) CLK_TCK;
    }

    /** A {@code kB} field of {@code /proc/<pid>/status} (e.g. {@code "VmRSS:"}) in bytes; -1 when unreadable. */
    static long statusBytes(long pid, String name) {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/" + pid + "/status"))) {
                if (line.startsWith(name)) {
                    return Long.parseLong(line.substring(name.length()).trim().split("\\s+")[0]) * 1024;
                }
            }
        } catch (IOException | RuntimeException e) {
            return -1;
        }
        return -1;
    }

    /**
     * The {@code stat} lines of the postmaster {@code postmasterPid} and its children (the backends), by pid;
     * empty for an unknown postmaster ({@code <= 0}), {@code null} when {@code /proc} cannot be listed.
     */
    static Map<Long, String> postgresStats(long postmasterPid) {
        Map<Long, String> out = new LinkedHashMap<>();
        if (postmasterPid <= 0) {
            return out;
        }
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(
                Path.of("/proc"), p -> p.getFileName().toString().chars().allMatch(Character::isDigit))) {
            for (Path p : ds) {
                String stat = read(p.resolve("stat"));
                if (stat == null) {
                    continue;
                }
                long pid = Long.parseLong(p.getFileName().toString());
                if (pid == postmasterPid || Long.parseLong(fields(stat)[1]) == postmasterPid) {
                    out.put(pid, stat);
                }
            }
        } catch (IOException e) {
            return null;
        }
        return out;
    }

    /** The soft and hard limits of open files of process {@code pid} ({@code /proc/<pid>/limits}), e.g. {@code 20000/20000}. */
    static String fileLimit(long pid) {
        String limits = read(Path.of("/proc/" + pid + "/limits"));
        if (limits != null) {
            for (String line : limits.split("\n")) {
                if (line.startsWith("Max open files")) {
                    String[] f =
                            line.substring("Max open files".length()).trim().split("\\s+");
                    return f[0] + "/" + f[1];
                }
            }
        }
        return "unknown";
    }
}
