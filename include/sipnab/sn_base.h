/*
 * sn_base.h - status codes, slices, addresses, allocation and diagnostics shared by every
 * layer of sipnab. Nothing here does I/O or keeps global state.
 */
#ifndef SIPNAB_SN_BASE_H
#define SIPNAB_SN_BASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Result of every function that can fail (STYLE.md §3). New codes go at the end. */
enum sn_status {
	SN_OK = 0,
	SN_ETRUNC,    /* input stops early; call again with more bytes */
	SN_EPARSE,    /* input is malformed; retrying will not help */
	SN_ELIMIT,    /* a configured bound was hit (arena budget, header count) */
	SN_ENOTFOUND, /* lookup miss; not an error for most callers */
	SN_ESTATE,    /* call not valid in the object's current state */
	SN_ESYS,      /* a system call failed; errno kept in struct sn_diag */
};

/**
 * Name of a status code, for messages.
 * @param st the status
 * @return a static string such as "SN_EPARSE"
 */
const char *sn_status_str(enum sn_status st);

/* A view of bytes owned elsewhere; not NUL-terminated. */
struct sn_slice {
	const uint8_t *ptr;
	uint32_t len;
};

#define SN_SLICE_NULL ((struct sn_slice){NULL, 0})

/** Slice from a pointer and a length. */
static inline struct sn_slice sn_slice_make(const void *p, size_t len)
{
	struct sn_slice s = {(const uint8_t *)p, (uint32_t)len};
	return s;
}

/** One past the last byte of @p s; for an empty slice its (possibly NULL) start, without
 * pointer arithmetic on NULL. */
static inline const uint8_t *sn_slice_end(struct sn_slice s)
{
	return s.len ? s.ptr + s.len : s.ptr;
}

/**
 * The decimal digits of @p v written backwards ending just before @p end (no NUL);
 * returns where they start. Up to 20 digits. For the hot formatting paths, without printf.
 */
static inline char *sn_u64_digits(uint64_t v, char *end)
{
	do {
		*--end = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	return end;
}

/** The system's page size (sysconf(), read once; 4096 if it does not say). */
size_t sn_page_size(void);
/** The transparent huge page size (PMD, from sysfs, read once); 0 where there is none. */
size_t sn_huge_page_size(void);

/**
 * Give the whole pages inside [p, p + n) back to the kernel (MADV_DONTNEED): memory that will
 * not be read again, such as the consumed part of an array about to be freed. They read as
 * zeros if touched again, but even a read faults in a fresh page on some kernels (the
 * development VM's maps no shared zero page): callers must not read them again. The pages at
 * the edges may hold live neighbours and are kept. (src/base/sn_mem.c; tests replace it with
 * one that makes the pages inaccessible.)
 */
void sn_mem_release(void *p, size_t n);

/**
 * Fault in every page that [p, p + n) touches for writing in one system call
 * (MADV_POPULATE_WRITE, Linux 5.14; a no-op elsewhere): for fresh memory about to be filled,
 * instead of one page fault per page. The pages at the edges are taken whole (the contents
 * stay as they are), so ranges faulted in one after the other leave no page out between
 * them. Only an optimisation: nothing depends on it.
 */
void sn_mem_populate(void *p, size_t n);

/**
 * sn_mem_populate() for a range that other threads may be writing while it runs: it never
 * changes the contents (MADV_POPULATE_WRITE only maps pages in; a page already written stays
 * as it is). For fresh memory that one thread faults in while the others fill it
 * (eng_call.c, ready_arrays()). Only an optimisation: nothing depends on it.
 */
void sn_mem_prefault(void *p, size_t n);

/**
 * A number from environment variable @p name (decimal; what follows the digits is ignored),
 * for the settings that tests and benchmarks change: @p dflt when it is unset, not a number,
 * below @p min or above UINT32_MAX.
 */
uint32_t sn_env_u32(const char *name, uint32_t min, uint32_t dflt);

/* A phase of a run timed for SIPNAB_TIMING=1 (benchmarks): its wall and the process's CPU time
 * (all threads) when it began. */
struct sn_phase {
	double wall, cpu;
};

/** Begin timing a phase now. */
void sn_phase_start(struct sn_phase *p);

/**
 * With SIPNAB_TIMING set, print to stderr "sipnab: timing: NAME W s, C s CPU, B CPUs": the
 * phase's wall time, the CPU time of all the process's threads in it, and B = C / W, the CPUs
 * it kept busy on average. Then the next phase begins (sn_phase_start()).
 */
void sn_phase_end(struct sn_phase *p, const char *name);

/** True when @p n bytes at @p a and @p b are equal ignoring ASCII case. */
bool sn_mem_caseeq(const uint8_t *a, const char *b, size_t n);

/** True when the slice equals the NUL-terminated literal @p lit (case-sensitive). Inline, so
 * the literal's length is known where it is called and most mismatches cost one compare. */
static inline bool sn_slice_eq_str(struct sn_slice s, const char *lit)
{
	size_t n = __builtin_strlen(lit);

	return s.len == n && (n == 0 || __builtin_memcmp(s.ptr, lit, n) == 0);
}

/** True when the slice equals @p lit ignoring ASCII case (inline, as sn_slice_eq_str()). */
static inline bool sn_slice_caseeq_str(struct sn_slice s, const char *lit)
{
	size_t n = __builtin_strlen(lit);

	return s.len == n && sn_mem_caseeq(s.ptr, lit, n);
}
/** True when two slices hold the same bytes. */
bool sn_slice_eq(struct sn_slice a, struct sn_slice b);
/** True when two slices are equal ignoring ASCII case. */
bool sn_slice_caseeq(struct sn_slice a, struct sn_slice b);
/**
 * @p v with @p dec decimals (0-9) into @p buf: exactly what snprintf("%.*f") writes, except
 * that a value that rounds to zero never has a minus sign ("-0.000" is "0.000"). Integer
 * arithmetic where that provably gives the same digits, snprintf() otherwise (a value within
 * 1/1000 of a rounding tie, a large one, or a small @p len). False for NaN and infinities.
 */
bool sn_fmt_fixed(double v, int dec, char *buf, size_t len);

/* Detail for SN_ESYS and SN_EPARSE on open/bind/connect style calls. */
struct sn_diag {
	int err;          /* errno, or 0 */
	uint64_t offset;  /* byte offset in the input the message refers to, when known */
	char msg[256];    /* short human-readable reason */
};

/** Fill @p diag (may be NULL) with errno @p err and a printf-style message. */
void sn_diag_set(struct sn_diag *diag, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* A network address: IPv4 (family 4, first 4 bytes used) or IPv6 (family 6). */
struct sn_addr {
	uint8_t family; /* 4 or 6; 0 = unset */
	uint8_t bytes[16];
};

/** Format an address ("192.0.2.1", "2001:db8::1"); @p buf must hold 46 bytes. */
const char *sn_addr_str(const struct sn_addr *a, char *buf, size_t buf_len);
/** Parse a textual IPv4 or IPv6 address. @return SN_OK or SN_EPARSE. */
enum sn_status sn_addr_parse(struct sn_slice text, struct sn_addr *out);
/** Total order over addresses (family first, then bytes); returns <0, 0, >0. */
int sn_addr_cmp(const struct sn_addr *a, const struct sn_addr *b);

/* Allocation that aborts on out-of-memory: no NULL check after these. */
void *sn_xmalloc(size_t n);
void *sn_xcalloc(size_t count, size_t size);
void *sn_xrealloc(void *p, size_t n);
/** sn_xrealloc() for an array filled in order, of which the first @p used bytes are kept.
 *  While @p used is under the limit that sn_xgrow_copy_max() set (none by default), the
 *  array moves to a new block whose pages are faulted in with one call (sn_mem_populate())
 *  instead of a page fault per page copied. */
void *sn_xgrow(void *p, size_t used, size_t n);
/** The limit of sn_xgrow(): the top pad that mallopt(M_TOP_PAD) gave the threads' heaps. */
void sn_xgrow_copy_max(size_t bytes);
/** sn_xmalloc() and sn_xcalloc() for an array that the caller is about to fill whole: its
 *  pages are faulted in with one call (sn_mem_populate()) rather than one fault each.
 *  sn_xgrow(), sn_xmalloc_full() and sn_xcalloc_full() ask for huge pages (MADV_HUGEPAGE)
 *  for the whole huge pages that the block covers (sn_xalloc.c). */
void *sn_xmalloc_full(size_t n);
void *sn_xcalloc_full(size_t count, size_t size);
/** malloc() (NULL on failure: for a reservation that has a fallback) with huge pages asked
 *  for, as sn_xmalloc_full() does, without faulting anything in. */
void *sn_malloc_huge(size_t n);
/** sn_xmalloc() for a big block filled as it goes: one of a huge page or more starts on a huge
 *  page boundary, and its whole huge pages are asked for (freed with free()). */
void *sn_xmalloc_huge(size_t n);
/** @p n rounded up to whole huge pages, for sn_xmalloc_huge(), when it is at least @p min and
 *  huge pages are small (at most 4 MiB: x86-64's 2 MiB, not arm64's 512 MiB with 64 KiB
 *  pages); else @p n. For a block that would otherwise take many fresh small pages. */
size_t sn_huge_round(size_t n, size_t min);
/** sn_huge_round()'s @p min for a block filled at once: from this size on, one fresh huge page
 *  costs less to fault in than the small pages it replaces (sn_xalloc.c). */
#define SN_HUGE_WORTH ((size_t)256 << 10)
/** Zeroed, starting on a cache line and a whole number of lines long: for what one thread
 *  writes often while another thread writes beside it (freed with free()). */
void *sn_xcalloc_lines(size_t count, size_t size);
char *sn_xstrndup(const char *s, size_t n);
/** Heap copy of a slice, NUL-terminated. Ownership: the caller frees it. */
char *sn_slice_dup(struct sn_slice s);

#define SN_CACHE_LINE 64u /* bytes (x86-64, arm64) */

#define SN_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define SN_MIN(a, b)     ((a) < (b) ? (a) : (b))
#define SN_MAX(a, b)     ((a) > (b) ? (a) : (b))

/**
 * For an array of @p cap entries of @p size bytes filled entry by entry, entry @p count about
 * to be written, and entries [0, *populated) already written or faulted in: once count reaches
 * *populated, fault in the next stretch in one call (sn_mem_populate()) instead of a page fault
 * per page. The stretch is as long as what is filled already, at least @p min_step and at most
 * @p max_step entries: an array with few entries commits little, and the unused end of a
 * doubled array stays unallocated. Set *populated to the count whenever the array moves.
 *
 * The stretch ends at the end of the huge page that entry @p count ends in: where the array
 * has huge pages (sn_malloc_huge()), faulting in any part of the next one zeroes all of it,
 * which the array may never reach (c5k's message arrays at --cores 2 took a third huge page
 * each for the 3.8 MB they filled), and its first write there costs the same one fault.
 */
static inline void sn_mem_populate_ahead(void *array, size_t size, uint32_t count, uint32_t cap,
					 uint32_t min_step, uint32_t max_step,
					 uint32_t *populated)
{
	if (count >= *populated) {
		uint32_t upto = SN_MIN(cap, count + SN_MIN(SN_MAX(count, min_step), max_step));
		uintptr_t at = (uintptr_t)array + (uintptr_t)count * size;
		size_t huge = sn_huge_page_size();

		if (huge && upto > count + 1u) {
			uintptr_t huge_end = (at + size + huge - 1) & ~(uintptr_t)(huge - 1);
			uintptr_t upto_at = (uintptr_t)array + (uintptr_t)upto * size;

			if (upto_at > huge_end) {
				/* the entries that end inside it (at least entry count) */
				upto = (uint32_t)((huge_end - (uintptr_t)array) / size);
			}
		}
		sn_mem_populate((void *)at, (size_t)(upto - count) * size);
		*populated = upto;
	}
}

/* Big-endian and little-endian loads from unaligned bytes. */
static inline uint16_t sn_be16(const uint8_t *p)
{
	return (uint16_t)((p[0] << 8) | p[1]);
}
static inline uint32_t sn_be32(const uint8_t *p)
{
	return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}
static inline uint16_t sn_le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | (p[1] << 8));
}
static inline uint32_t sn_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
	       ((uint32_t)p[3] << 24);
}

#endif
