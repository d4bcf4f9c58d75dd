/*
 * cap_tcp.h - per-connection TCP stream reassembly.
 *
 * Segments are fed in capture order. For each direction of each connection the reassembler
 * keeps the in-order bytes not yet consumed, plus out-of-order segments waiting for a hole to
 * fill; retransmitted and overlapping bytes are dropped (first copy wins). Every time new
 * in-order bytes arrive, the application callback sees all unconsumed bytes of that direction
 * and says how many it consumed (it frames messages; 0 = wait for more).
 *
 * Bounds: a direction buffers at most max_dir_bytes; past it, or when a hole stays open for
 * hole_timeout_ns, the hole is skipped: the callback is told (gap=true) and the bytes before
 * it that were not consumed are discarded. Connections closed by FIN in both directions or
 * RST, evicted when max_conns is reached, or found idle for idle_timeout_ns by their own next
 * segment (timeouts run on a connection's own packets, so the outcome does not depend on the
 * other connections sharing the reassembler) are released.
 * Thread: one owner thread; no locks.
 */
#ifndef SIPNAB_CAP_TCP_H
#define SIPNAB_CAP_TCP_H

#include "sipnab/cap_decode.h"
#include "sipnab/sn_base.h"

/* One direction of a connection, as the application sees it. */
struct cap_tcp_dir {
	uint32_t app_state; /* free for the application; 0 when the direction is new */
	uint32_t app_aux;   /* free for the application */
	void *app_ptr;      /* free for the application; freed with app_free_fn when released */
};

/**
 * Called with the unconsumed in-order bytes of one direction.
 * @param user the pointer given to cap_tcp_new
 * @param dir the direction (its app_* fields are the application's)
 * @param pkt the segment that made the bytes available (addresses and ports of this direction)
 * @param data every unconsumed in-order byte of the direction
 * @param len bytes at @p data
 * @param gap true when bytes were lost just before data (the application should resync)
 * @return how many bytes from the start of data the application consumed (<= len)
 */
typedef size_t cap_tcp_data_fn(void *user, struct cap_tcp_dir *dir, const struct cap_packet *pkt,
			       const uint8_t *data, size_t len, bool gap);
typedef void cap_tcp_app_free_fn(void *app_ptr);

struct cap_tcp_limits {
	uint32_t max_conns;       /* connections tracked at once (default 65536) */
	size_t max_dir_bytes;     /* buffered bytes per direction (default 256 KiB) */
	uint32_t max_ooo_segs;    /* out-of-order segments kept per direction (default 256) */
	int64_t hole_timeout_ns;  /* default 5 s */
	int64_t idle_timeout_ns;  /* default 300 s */
};

struct cap_tcp_stats {
	uint64_t segments;        /* segments with payload fed */
	uint64_t retransmissions; /* segments whose bytes had all been seen */
	uint64_t out_of_order;    /* segments that arrived ahead of a hole */
	uint64_t gaps;            /* holes skipped */
	uint64_t gap_bytes;       /* bytes known lost in skipped holes */
	uint64_t overflow_bytes;  /* unconsumed bytes discarded past max_dir_bytes */
	uint64_t conns;           /* connections created */
	uint64_t evicted;         /* connections dropped by max_conns */
};

struct cap_tcp;

/** New reassembler; @p lim may be NULL for the defaults; @p app_free may be NULL. */
struct cap_tcp *cap_tcp_new(const struct cap_tcp_limits *lim, cap_tcp_data_fn *fn,
			    cap_tcp_app_free_fn *app_free, void *user);

/** Feed one TCP packet (pkt->l4 == CAP_L4_TCP). Calls the callback zero or more times. */
void cap_tcp_segment(struct cap_tcp *t, const struct cap_packet *pkt);

/** Deliver what is still buffered (holes skipped) and release every connection. */
void cap_tcp_flush(struct cap_tcp *t);

const struct cap_tcp_stats *cap_tcp_stats(const struct cap_tcp *t);

void cap_tcp_free(struct cap_tcp *t);

#endif
