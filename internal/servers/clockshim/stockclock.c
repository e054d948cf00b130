/*
 * stockclock: preloaded into a redis-server (LD_PRELOAD), it moves the server's wall
 * clock by an offset the harness writes, so that a fault can make the clock jump.
 *
 * libfaketime does this in general, but it cannot start under jemalloc, which Debian's
 * redis-server links (libfaketime issue #130): its setup calls dlsym, which allocates,
 * and jemalloc's setup reads the clock. This shim allocates nothing and resolves nothing:
 * it reads the clock with the system call itself.
 *
 * The offset is decimal nanoseconds in the file $STOCKCLOCK_FILE (none or unreadable: 0),
 * read again at most every millisecond of real time. CLOCK_REALTIME and what is built
 * on it (gettimeofday, time) move; the monotonic clocks do not, as with a wall clock
 * that NTP or an operator steps.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static long long offset_ns, read_at_ns;

static int real_clock(clockid_t id, struct timespec *ts) { return (int)syscall(SYS_clock_gettime, id, ts); }

static long long mono_ns(void) {
	struct timespec t;
	real_clock(CLOCK_MONOTONIC, &t);
	return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static long long offset(void) {
	long long now = mono_ns();
	if (__atomic_load_n(&read_at_ns, __ATOMIC_RELAXED) != 0 && now - __atomic_load_n(&read_at_ns, __ATOMIC_RELAXED) < 1000000LL)
		return __atomic_load_n(&offset_ns, __ATOMIC_RELAXED);
	__atomic_store_n(&read_at_ns, now, __ATOMIC_RELAXED);
	const char *path = getenv("STOCKCLOCK_FILE");
	if (path == NULL)
		return 0;
	int fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return __atomic_load_n(&offset_ns, __ATOMIC_RELAXED);
	char buf[32];
	long n = (long)syscall(SYS_read, fd, buf, sizeof buf - 1);
	syscall(SYS_close, fd);
	if (n <= 0)
		return __atomic_load_n(&offset_ns, __ATOMIC_RELAXED);
	long long v = 0, sign = 1;
	int i = 0;
	if (buf[0] == '-') {
		sign = -1;
		i = 1;
	}
	for (; i < n && buf[i] >= '0' && buf[i] <= '9'; i++)
		v = v * 10 + (buf[i] - '0');
	__atomic_store_n(&offset_ns, sign * v, __ATOMIC_RELAXED);
	return sign * v;
}

static void shift(struct timespec *ts) {
	long long ns = (long long)ts->tv_sec * 1000000000LL + ts->tv_nsec + offset();
	ts->tv_sec = ns / 1000000000LL;
	ts->tv_nsec = ns % 1000000000LL;
}

int clock_gettime(clockid_t id, struct timespec *ts) {
	int r = real_clock(id, ts);
	if (r == 0 && (id == CLOCK_REALTIME || id == CLOCK_REALTIME_COARSE))
		shift(ts);
	return r;
}

int gettimeofday(struct timeval *tv, void *tz) {
	(void)tz;
	struct timespec ts;
	if (clock_gettime(CLOCK_REALTIME, &ts) != 0)
		return -1;
	if (tv != NULL) {
		tv->tv_sec = ts.tv_sec;
		tv->tv_usec = ts.tv_nsec / 1000;
	}
	return 0;
}

time_t time(time_t *t) {
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	if (t != NULL)
		*t = ts.tv_sec;
	return ts.tv_sec;
}
