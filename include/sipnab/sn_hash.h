/*
 * sn_hash.h - keyed hashing for the tables that hold what a capture names: Call-IDs, tags,
 * transaction keys, RTP flows, SDP endpoints, TCP and SCTP associations, IP fragments.
 *
 * A capture chooses those keys. With a hash anyone can compute, a crafted capture can choose
 * keys that all land in one bucket and turn every lookup into a walk of the whole table:
 * quadratic time, minutes for a file of a few megabytes. So every such hash starts from a
 * per-process secret, sn_hash_key(), and takes in the key's words one at a time through a
 * step whose effect depends on that secret (sn_hash_step()), so that no word can cancel
 * another without it. The unkeyed hashes had collisions anyone could compute: an IPv4
 * destination and an SSRC with the same sum, IPv6 addresses whose halves folded to the same
 * word, words differing in their top bit. This is not a cryptographic MAC (SipHash would be
 * one, at several times the cost on the per-packet path): no collision is known that holds
 * without the secret, but none is proven impossible either.
 *
 * The secret is 64 bits from getrandom(), drawn once by a constructor before main() runs and
 * only read afterwards, by any thread: it is the one process-wide value in src/, and it is
 * immutable for the life of the process. SIPNAB_HASH_SEED=<number> (strtoull base 0) fixes it,
 * for tests and for reproducing a run exactly. Tables never decide what is reported or in
 * which order, so the report is the same for every secret (tests/hash_flood.sh checks it).
 *
 * Not keyed: the host-pair hash that deals packets to worker threads (cap_record_host_hash()):
 * it picks a thread, not a bucket to walk, and a fixed assignment keeps runs comparable.
 */
#ifndef SIPNAB_SN_HASH_H
#define SIPNAB_SN_HASH_H

#include <stddef.h>
#include <stdint.h>

/** The process's hash secret (see the file comment). */
uint64_t sn_hash_key(void);

/**
 * Takes one 64-bit word into the state @p h: the 128-bit product of (h ^ w) and (h ^ a constant),
 * its halves folded together (the "mum" step of wyhash, as Go's maps use with a random seed).
 * Both factors depend on the secret state, so what a word changes in the result depends on the
 * secret too. (A step h = (h ^ w) * odd, h ^= h >> 29, as the unkeyed hashes used, is not
 * enough: flipping bit 63 of a word changes the product in bit 63 only, the same for every
 * state, so the next word could cancel it under any key.)
 */
static inline uint64_t sn_hash_step(uint64_t h, uint64_t w)
{
	uint64_t a = h ^ w;
	uint64_t b = h ^ UINT64_C(0x9e3779b97f4a7c15);
#ifdef __SIZEOF_INT128__
	unsigned __int128 p = (unsigned __int128)a * b;

	return (uint64_t)p ^ (uint64_t)(p >> 64);
#else
	uint64_t al = a & 0xffffffffu, ah = a >> 32, bl = b & 0xffffffffu, bh = b >> 32;
	uint64_t ll = al * bl, lh = al * bh, hl = ah * bl, hh = ah * bh;
	uint64_t mid = (ll >> 32) + (lh & 0xffffffffu) + (hl & 0xffffffffu);
	uint64_t lo = (ll & 0xffffffffu) | (mid << 32);
	uint64_t hi = hh + (lh >> 32) + (hl >> 32) + (mid >> 32);

	return lo ^ hi;
#endif
}

/** Final mix (MurmurHash3's fmix64): every output bit depends on every bit of @p h. */
static inline uint64_t sn_hash_final(uint64_t h)
{
	h ^= h >> 33;
	h *= UINT64_C(0xff51afd7ed558ccd);
	h ^= h >> 33;
	h *= UINT64_C(0xc4ceb9fe1a85ec53);
	h ^= h >> 33;
	return h;
}

/** Takes @p n bytes at @p p into the state @p h, eight at a time, then their count. */
uint64_t sn_hash_bytes(uint64_t h, const void *p, size_t n);

/**
 * Keyed hash of a NUL-terminated string, eight bytes at a time: sn_str_hash() with the secret
 * @p key instead of the process's.
 */
unsigned int sn_str_hash_keyed(uint64_t key, const char *s);

/**
 * Hash of a NUL-terminated string keyed by the process's secret; the type of GLib's GHashFunc,
 * for tables keyed by Call-ID or tag (g_str_hash() takes one byte at a time, unkeyed).
 */
unsigned int sn_str_hash(const void *key);

#endif
