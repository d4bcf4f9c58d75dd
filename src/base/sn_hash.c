/*
 * sn_hash.c - the process's hash secret and the keyed byte and string hashes (sn_hash.h).
 *
 * The secret is written by sn_hash_init(), a constructor that runs before main() and so
 * before any thread exists; everything after only reads it.
 */
#include "config.h"

#include "sipnab/sn_hash.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

static uint64_t sn_hash_secret;

/* When getrandom() has nothing (a very early boot): the clock, the pid and where the stack
 * is, mixed; weaker, but never one fixed value. */
static uint64_t sn_hash_fallback(void)
{
	struct timespec ts;
	uint64_t h = UINT64_C(0x243f6a8885a308d3);

	clock_gettime(CLOCK_REALTIME, &ts);
	h = sn_hash_step(h, (uint64_t)ts.tv_sec);
	h = sn_hash_step(h, (uint64_t)ts.tv_nsec);
	h = sn_hash_step(h, (uint64_t)getpid());
	h = sn_hash_step(h, (uint64_t)(uintptr_t)&ts);
	return sn_hash_final(h);
}

__attribute__((constructor)) static void sn_hash_init(void)
{
	const char *env = getenv("SIPNAB_HASH_SEED");
	uint64_t v = 0;

	if (env && *env) {
		char *end;

		errno = 0;
		v = strtoull(env, &end, 0);
		if (errno == 0 && *end == '\0') {
			sn_hash_secret = v;
			return;
		}
		fprintf(stderr, "sipnab: SIPNAB_HASH_SEED='%s' is not a number; the hash key is random\n",
			env);
	}
	if (getrandom(&v, sizeof(v), GRND_NONBLOCK) != (ssize_t)sizeof(v)) {
		v = sn_hash_fallback();
	}
	sn_hash_secret = v;
}

uint64_t sn_hash_key(void)
{
	return sn_hash_secret;
}

uint64_t sn_hash_bytes(uint64_t h, const void *p, size_t n)
{
	const uint8_t *b = p;
	size_t len = n;
	uint64_t w;

	for (; n >= 8; b += 8, n -= 8) {
		memcpy(&w, b, 8);
		h = sn_hash_step(h, w);
	}
	if (n) {
		w = 0;
		memcpy(&w, b, n);
		h = sn_hash_step(h, w);
	}
	return sn_hash_step(h, (uint64_t)len | (UINT64_C(1) << 63));
}

unsigned int sn_str_hash_keyed(uint64_t key, const char *s)
{
	return (unsigned int)sn_hash_final(sn_hash_bytes(key, s, strlen(s)));
}

unsigned int sn_str_hash(const void *key)
{
	return sn_str_hash_keyed(sn_hash_secret, key);
}
