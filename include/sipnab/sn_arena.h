/*
 * sn_arena.h - bump allocator with a byte budget (STYLE.md §4). Objects are never freed one
 * by one; sn_arena_reset() or sn_arena_cleanup() releases everything at once.
 * Thread: an arena belongs to one thread at a time.
 */
#ifndef SIPNAB_SN_ARENA_H
#define SIPNAB_SN_ARENA_H

#include "sipnab/sn_base.h"

struct sn_arena_block;

struct sn_arena {
	struct sn_arena_block *head; /* newest block; owned */
	size_t used;                 /* bytes handed out since init/reset */
	size_t budget;               /* maximum of used; 0 = unbounded */
	size_t block_size;           /* size of new blocks */
	size_t huge_max;             /* the first blocks, as long as they fit in this many bytes
				      * together, are whole huge pages (sn_huge_round()); 0 = none */
	size_t huge_given;           /* bytes of such blocks made */
};

/** Prepare an arena with a byte @p budget (0 = unbounded). */
void sn_arena_init(struct sn_arena *a, size_t budget);
/** Release every block. */
void sn_arena_cleanup(struct sn_arena *a);
/** Forget every allocation but keep the first block for reuse. */
void sn_arena_reset(struct sn_arena *a);
/**
 * Allocate @p n zeroed bytes aligned to 8.
 * @return SN_OK, or SN_ELIMIT when the budget would be exceeded (*out untouched).
 */
enum sn_status sn_arena_alloc(struct sn_arena *a, size_t n, void **out);
/**
 * Copy a borrowed slice into the arena ("promote at the ownership boundary").
 * The copy is NUL-terminated for convenience; the slice length excludes the NUL.
 * @return SN_OK or SN_ELIMIT.
 */
enum sn_status sn_arena_dup(struct sn_arena *a, struct sn_slice in, struct sn_slice *out);

#endif
