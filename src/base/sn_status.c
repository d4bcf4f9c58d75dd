/*
 * sn_status.c - status names, slice comparison and diagnostics, and the small helpers
 * for tests and benchmarks (environment settings, phase timing). No state.
 */
#include "config.h"

#include "sipnab/sn_base.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

const char *sn_status_str(enum sn_status st)
{
	switch (st) {
	case SN_OK:
		return "SN_OK";
	case SN_ETRUNC:
		return "SN_ETRUNC";
	case SN_EPARSE:
		return "SN_EPARSE";
	case SN_ELIMIT:
		return "SN_ELIMIT";
	case SN_ENOTFOUND:
		return "SN_ENOTFOUND";
	case SN_ESTATE:
		return "SN_ESTATE";
	case SN_ESYS:
		return "SN_ESYS";
	}
	return "SN_?";
}

static inline uint8_t lower(uint8_t c)
{
	return (c >= 'A' && c <= 'Z') ? (uint8_t)(c + 32) : c;
}

bool sn_mem_caseeq(const uint8_t *a, const char *b, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (lower(a[i]) != lower((uint8_t)b[i])) {
			return false;
		}
	}
	return true;
}

bool sn_slice_eq(struct sn_slice a, struct sn_slice b)
{
	return a.len == b.len && (a.len == 0 || memcmp(a.ptr, b.ptr, a.len) == 0);
}

bool sn_slice_caseeq(struct sn_slice a, struct sn_slice b)
{
	if (a.len != b.len) {
		return false;
	}
	for (uint32_t i = 0; i < a.len; i++) {
		if (lower(a.ptr[i]) != lower(b.ptr[i])) {
			return false;
		}
	}
	return true;
}

void sn_diag_set(struct sn_diag *diag, int err, const char *fmt, ...)
{
	va_list ap;

	if (!diag) {
		return;
	}
	diag->err = err;
	va_start(ap, fmt);
	vsnprintf(diag->msg, sizeof(diag->msg), fmt, ap);
	va_end(ap);
}

/*
 * x = |v| * 10^dec is computed with one rounding (10^dec is exact), so for x < 2^40 it is
 * within 2^-13 of the exact product. Away from a .5 tie by more than that, rounding x to the
 * nearest integer gives the digits printf's exact decimal rounding gives; near a tie (where
 * printf rounds the exact binary value, half to even) snprintf() decides. The report formats
 * tens of thousands of these; printf's exact conversion costs about 2,000 instructions each.
 */
bool sn_fmt_fixed(double v, int dec, char *buf, size_t len)
{
	static const double pow10[10] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9};
	double x, fl, frac;
	uint64_t q, scale = 1;
	char digits[32];
	size_t n = 0, out = 0;

	if (!isfinite(v)) {
		return false;
	}
	x = fabs(v) * (dec >= 0 && dec <= 9 ? pow10[dec] : 1.0);
	fl = floor(x);
	frac = x - fl;
	if (dec < 0 || dec > 9 || x >= 1099511627776.0 || fabs(frac - 0.5) < 1e-3 || len < 40) {
		snprintf(buf, len, "%.*f", dec, v);
		if (buf[0] == '-') {
			const char *p = buf + 1;

			while (*p == '0' || *p == '.') {
				p++;
			}
			if (!*p) {
				memmove(buf, buf + 1, strlen(buf));
			}
		}
		return true;
	}
	q = (uint64_t)fl + (frac > 0.5 ? 1u : 0u);
	for (int i = 0; i < dec; i++) {
		scale *= 10;
	}
	if (v < 0 && q) {
		buf[out++] = '-';
	}
	/* the integer part, then the decimals with their leading zeros */
	{
		uint64_t ip = q / scale, fp = q % scale;
		char *d = sn_u64_digits(ip, digits + sizeof(digits));

		n = (size_t)(digits + sizeof(digits) - d);
		memcpy(buf + out, d, n);
		out += n;
		if (dec > 0) {
			buf[out++] = '.';
			for (int i = dec - 1; i >= 0; i--) {
				digits[i] = (char)('0' + fp % 10);
				fp /= 10;
			}
			memcpy(buf + out, digits, (size_t)dec);
			out += (size_t)dec;
		}
	}
	buf[out] = '\0';
	return true;
}

uint32_t sn_env_u32(const char *name, uint32_t min, uint32_t dflt)
{
	const char *v = getenv(name);
	long long n = v ? strtoll(v, NULL, 10) : 0;

	return v && n >= (long long)min && n <= (long long)UINT32_MAX ? (uint32_t)n : dflt;
}

static void phase_now(struct sn_phase *p)
{
	struct timespec w, c;

	clock_gettime(CLOCK_MONOTONIC, &w);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c);
	p->wall = (double)w.tv_sec + (double)w.tv_nsec / 1e9;
	p->cpu = (double)c.tv_sec + (double)c.tv_nsec / 1e9;
}

void sn_phase_start(struct sn_phase *p)
{
	phase_now(p);
}

void sn_phase_end(struct sn_phase *p, const char *name)
{
	struct sn_phase now;

	phase_now(&now);
	if (getenv("SIPNAB_TIMING")) {
		double w = now.wall - p->wall, c = now.cpu - p->cpu;

		fprintf(stderr, "sipnab: timing: %-8s %.4f s, %.4f s CPU, %.2f CPUs\n", name, w, c,
			w > 0 ? c / w : 0.0);
	}
	*p = now;
}
