/*
 * sn_arena.c - bump allocator with a byte budget.
 *
 * Blocks are chained newest first. An allocation larger than the block size gets a block of
 * its own. The budget counts bytes handed out (after alignment), not block capacity, so a
 * budget means the same whatever the block size.
 * Ownership: the arena owns its blocks. Thread: one owner at a time.
 */
#include "config.h"

#include "sipnab/sn_arena.h"

#include <stdlib.h>
#include <string.h>

struct sn_arena_block {
	struct sn_arena_block *next; /* older block */
	size_t cap;                  /* bytes in data */
	size_t off;                  /* bytes used */
	size_t populated;            /* data[0, this) faulted in ahead (big blocks) */
	_Alignas(16) uint8_t data[];
};

#define SN_ARENA_DEFAULT_BLOCK 4096

void sn_arena_init(struct sn_arena *a, size_t budget)
{
	a->head = NULL;
	a->used = 0;
	a->budget = budget;
	a->block_size = SN_ARENA_DEFAULT_BLOCK;
	a->huge_max = 0;
	a->huge_given = 0;
}

void sn_arena_cleanup(struct sn_arena *a)
{
	struct sn_arena_block *b = a->head;
	while (b) {
		struct sn_arena_block *next = b->next;
		free(b);
		b = next;
	}
	a->head = NULL;
	a->used = 0;
}

void sn_arena_reset(struct sn_arena *a)
{
	struct sn_arena_block *b = a->head;
	struct sn_arena_block *keep = NULL;

	/* keep the oldest block, which has the default size */
	while (b) {
		struct sn_arena_block *next = b->next;
		if (!next) {
			keep = b;
		} else {
			free(b);
		}
		b = next;
	}
	if (keep) {
		keep->off = 0;
		keep->next = NULL;
	}
	a->head = keep;
	a->used = 0;
}

#define SN_ARENA_POPULATE_STEP (64u * 1024u)

enum sn_status sn_arena_alloc(struct sn_arena *a, size_t n, void **out)
{
	size_t need = (n + 7u) & ~(size_t)7u;
	struct sn_arena_block *b = a->head;

	if (need < n || (a->budget && (need > a->budget || a->used > a->budget - need))) {
		return SN_ELIMIT;
	}
	if (!b || b->cap - b->off < need) {
		struct sn_arena_block *nb;
		size_t cap = need > a->block_size ? need : a->block_size;
		size_t bytes = sizeof(*nb) + cap;
		size_t whole = a->huge_max ? sn_huge_round(bytes, 0) : bytes;

		if (a->huge_max && whole <= a->huge_max - a->huge_given) {
			cap = whole - sizeof(*nb);
			a->huge_given += whole;
			nb = sn_xmalloc_huge(whole);
		} else {
			nb = sn_xmalloc(bytes);
		}

		nb->cap = cap;
		nb->populated = 0;
		nb->off = 0;
		if (b && need > a->block_size) {
			/* oversized block goes behind the current one so its free space stays usable */
			nb->next = b->next;
			b->next = nb;
			nb->off = need;
			a->used += need;
			memset(nb->data, 0, need);
			*out = nb->data;
			return SN_OK;
		}
		nb->next = b;
		a->head = nb;
		b = nb;
	}
	void *p = b->data + b->off;
	b->off += need;
	a->used += need;
	if (b->off > b->populated && b->cap >= SN_ARENA_POPULATE_STEP) {
		/* a big block fills up allocation by allocation: fault its next 64 KiB in one
		 * call instead of a fault per page; a step at a time, so a block an engine
		 * hardly uses stays mostly unallocated */
		size_t upto = SN_MIN(b->cap, b->off + SN_ARENA_POPULATE_STEP);

		sn_mem_populate(b->data + b->populated, upto - b->populated);
		b->populated = upto;
	}
	memset(p, 0, need);
	*out = p;
	return SN_OK;
}

enum sn_status sn_arena_dup(struct sn_arena *a, struct sn_slice in, struct sn_slice *out)
{
	void *p;
	enum sn_status st = sn_arena_alloc(a, (size_t)in.len + 1, &p);
	if (st != SN_OK) {
		return st;
	}
	if (in.len) {
		memcpy(p, in.ptr, in.len);
	}
	((uint8_t *)p)[in.len] = '\0';
	out->ptr = p;
	out->len = in.len;
	return SN_OK;
}
