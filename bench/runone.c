/*
 * bench/runone.c - run one command and measure it, for the benchmark scripts (bench/lib.sh).
 *
 * usage: runone OUTFILE COMMAND [ARG...]
 *
 * Runs COMMAND with this process's standard input, output and error, waits for it, and
 * writes one line to OUTFILE:
 *     WALL_S MAXRSS_KIB CPU_S STATUS
 * WALL_S: seconds from just before fork() to just after wait4() returned (CLOCK_MONOTONIC):
 *         the command's whole life, its exec, start-up and exit included, and nothing of the
 *         measuring program's own start-up (a wrapper such as GNU time, timed from outside,
 *         adds its own exec, 2-4 ms on the development VM, to every run);
 * MAXRSS_KIB: the peak resident set size (ru_maxrss) of the command, or of the largest of
 *         the processes it waited for (a shell running two programs);
 * CPU_S:  user + system CPU seconds (ru_utime + ru_stime, to the microsecond) of the command
 *         and of every process it waited for;
 * STATUS: its exit status, or 128 + the signal that ended it.
 * Exits with STATUS; 127 (and no line) when COMMAND cannot be run, 2 on bad usage.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double secs(const struct timespec *t)
{
	return (double)t->tv_sec + (double)t->tv_nsec / 1e9;
}

static double tv(const struct timeval *t)
{
	return (double)t->tv_sec + (double)t->tv_usec / 1e6;
}

int main(int argc, char **argv)
{
	struct timespec t0, t1;
	struct rusage ru;
	int status, code;
	int fail[2];
	pid_t pid;
	FILE *out;
	ssize_t got;
	int err = 0;

	if (argc < 3) {
		fprintf(stderr, "usage: runone OUTFILE COMMAND [ARG...]\n");
		return 2;
	}
	/* a pipe closed on exec tells the parent whether exec failed */
	if (pipe2(fail, O_CLOEXEC) != 0) {
		perror("runone: pipe2");
		return 127;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	pid = fork();
	if (pid < 0) {
		perror("runone: fork");
		return 127;
	}
	if (pid == 0) {
		close(fail[0]);
		execvp(argv[2], argv + 2);
		err = errno;
		(void)!write(fail[1], &err, sizeof(err));
		_exit(127);
	}
	close(fail[1]);
	while (wait4(pid, &status, 0, &ru) < 0) {
		if (errno != EINTR) {
			perror("runone: wait4");
			return 127;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	got = read(fail[0], &err, sizeof(err));
	close(fail[0]);
	if (got == (ssize_t)sizeof(err)) {
		fprintf(stderr, "runone: cannot run %s: %s\n", argv[2], strerror(err));
		return 127;
	}
	code = WIFEXITED(status) ? WEXITSTATUS(status) :
	       WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 127;
	out = fopen(argv[1], "w");
	if (!out) {
		fprintf(stderr, "runone: %s: %s\n", argv[1], strerror(errno));
		return 127;
	}
	fprintf(out, "%.6f %ld %.6f %d\n", secs(&t1) - secs(&t0), ru.ru_maxrss,
		tv(&ru.ru_utime) + tv(&ru.ru_stime), code);
	if (fclose(out) != 0) {
		fprintf(stderr, "runone: %s: %s\n", argv[1], strerror(errno));
		return 127;
	}
	return code;
}
