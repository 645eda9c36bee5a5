/*
 * A wall clock that can be stepped while the process runs: preloaded into a pod of the fault campaign
 * (testsupport.PodClocks, LD_PRELOAD), it adds an offset in nanoseconds to CLOCK_REALTIME readings and to
 * gettimeofday() and time(); CLOCK_MONOTONIC and the other clocks are left alone, as an NTP step leaves them.
 * The offset is the first 8 bytes (a little-endian signed 64-bit integer) of the file named by
 * SYNCULAR_CLOCK_OFFSET_FILE, mapped shared: the test writes a new value and the next reading has it, with no
 * system call per reading (libfaketime, which re-reads its settings under a lock, made a JVM 7 to 10 times slower).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

typedef int (*clock_gettime_fn)(clockid_t, struct timespec *);

static clock_gettime_fn real_clock_gettime;
static volatile int64_t *offset_ns;

static void load(void) {
    real_clock_gettime = (clock_gettime_fn)dlsym(RTLD_NEXT, "clock_gettime");
    const char *path = getenv("SYNCULAR_CLOCK_OFFSET_FILE");
    if (path == NULL) {
        return;
    }
    int fd = open(path, O_RDONLY);
    if (fd < 0) {
        return;
    }
    void *mapped = mmap(NULL, sizeof(int64_t), PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    if (mapped != MAP_FAILED) {
        offset_ns = (volatile int64_t *)mapped;
    }
}

__attribute__((constructor)) static void init(void) {
    load();
}

static void shift(struct timespec *ts) {
    if (offset_ns == NULL) {
        return;
    }
    int64_t ns = (int64_t)ts->tv_nsec + *offset_ns % 1000000000LL;
    int64_t s = (int64_t)ts->tv_sec + *offset_ns / 1000000000LL;
    if (ns < 0) {
        ns += 1000000000LL;
        s -= 1;
    } else if (ns >= 1000000000LL) {
        ns -= 1000000000LL;
        s += 1;
    }
    ts->tv_sec = (time_t)s;
    ts->tv_nsec = (long)ns;
}

int clock_gettime(clockid_t id, struct timespec *ts) {
    if (real_clock_gettime == NULL) {
        load();
    }
    int r = real_clock_gettime(id, ts);
    if (r == 0 && (id == CLOCK_REALTIME || id == CLOCK_REALTIME_COARSE)) {
        shift(ts);
    }
    return r;
}

int gettimeofday(struct timeval *tv, void *tz) {
    (void)tz;
    struct timespec ts;
    int r = clock_gettime(CLOCK_REALTIME, &ts);
    if (r == 0 && tv != NULL) {
        tv->tv_sec = ts.tv_sec;
        tv->tv_usec = ts.tv_nsec / 1000;
    }
    return r;
}

time_t time(time_t *out) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    if (out != NULL) {
        *out = ts.tv_sec;
    }
    return ts.tv_sec;
}
