/*
 * cap_reader.c - capture file input: pcap and pcapng, plain or gzip-compressed, from a path
 * or from standard input.
 *
 * The whole input is made addressable as one byte range first:
 *   - a regular uncompressed file is mapped read-only (MAP_PRIVATE, MADV_SEQUENTIAL,
 *     MADV_HUGEPAGE) and the records point into the mapping (zero-copy);
 *   - standard input, pipes and other non-seekable files are read into a growing heap buffer;
 *   - gzip input (magic 1f 8b, concatenated members allowed) is inflated into a heap buffer.
 * Every record's data therefore stays valid until cap_reader_free(), which is stronger than
 * the header promises (until the next cap_reader_next()); callers must not rely on more than
 * the header says: gzip and pipes are streamed (records valid until given back), and a
 * mapped file can be read in windows instead (cap_reader_read_windowed(): valid until the
 * next call). The engine reads a mapped file through its mapping only under the file's read
 * lease (cap_reader_lease()), which holds it still (SIPNAB_MAPPED=1 aside): a file cut under a
 * reader loses the mapped pages past its new end, and reading one kills the process (SIGBUS).
 *
 * Parsing then walks the range with a cursor (pos). Every length is checked against the
 * bytes left before it is used. The hot path does no allocation and no system call.
 *
 * pcap: 24-byte file header, magic a1b2c3d4 (us), a1b23c4d (ns) or a1b2cd34 (Kuznetzov,
 * 24-byte record headers), either byte order. pcapng: blocks (type, total length, body,
 * total length); a Section Header Block fixes the byte order and clears the interface table;
 * Interface Description Blocks append to it; EPB, SPB and OPB carry packets; other blocks are
 * skipped by their length.
 *
 * States: OPEN --record--> OPEN (cap_reader_next returns SN_OK)
 *         OPEN --clean end--> SN_ENOTFOUND (repeatable)
 *         OPEN --short/corrupt input--> failed: err_st is SN_ETRUNC or SN_EPARSE and every
 *         later call returns it; err tells the offset and reason.
 *
 * Ownership: the reader owns its mapping or heap buffer and its interface table.
 * Threading: a reader belongs to one thread at a time; no global state.
 * Parsing never logs and never asserts on input bytes.
 */
#include "config.h"

#include "sipnab/cap_reader.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <zlib.h>

#include "sipnab/sn_pool.h"

/* data_at sits in the padding after transient: the record lists stay 48 bytes a record */
_Static_assert(sizeof(void *) != 8 || sizeof(struct cap_record) == 48,
	       "struct cap_record grew");

#define CAP_NS_PER_SEC	   UINT64_C(1000000000)
#define CAP_MAX_RECORD_LEN (256u * 1024u * 1024u) /* larger incl_len = corrupt header */
#define CAP_MAX_BLOCK_LEN  (CAP_MAX_RECORD_LEN + 65536u)
#define CAP_PCAP_HDR_LEN   24u
#define CAP_PCAPNG_MIN_SHB 28u
#define CAP_READ_CHUNK	   (1u << 20)

#define CAP_PCAP_MAGIC_US  0xa1b2c3d4u
#define CAP_PCAP_MAGIC_NS  0xa1b23c4du
#define CAP_PCAP_MAGIC_KUZ 0xa1b2cd34u
#define CAP_PCAPNG_SHB	   0x0a0d0d0au
#define CAP_PCAPNG_BOM	   0x1a2b3c4du
#define CAP_PCAPNG_IDB	   1u
#define CAP_PCAPNG_OPB	   2u
#define CAP_PCAPNG_SPB	   3u
#define CAP_PCAPNG_EPB	   6u
#define CAP_OPT_ENDOFOPT   0u
#define CAP_OPT_TSRESOL	   9u
#define CAP_OPT_TSOFFSET   14u
/* libpcap's LT_LINKTYPE(): the FCS length (bits 28-31) and its flag (bit 26) are dropped. */
#define CAP_LINKTYPE_MASK 0x03ffffffu

enum cap_format {
	CAP_FMT_PCAP,
	CAP_FMT_PCAPNG,
};

/* One pcapng interface: link type and the timestamp conversion precomputed from the IDB. */
struct cap_iface {
	uint32_t linktype;
	uint32_t snaplen;
	bool pow2;    /* if_tsresol is a power of 2: units = 2^-exp s */
	uint8_t exp;  /* exponent of if_tsresol */
	uint64_t mul; /* power of 10: ns = units * mul, or units / div when div != 0 */
	uint64_t div;
	uint64_t offset_ns; /* if_tsoffset in ns, two's complement */
};

/* What tells a file from another that later has its name: device, inode and, where the file
 * system keeps it, birth time (a file removed frees its inode number, and the next file
 * created, under the same name or not, often gets it). */
struct cap_file_id {
	uint64_t dev, ino;
	int64_t btime_sec;
	uint32_t btime_nsec;
	bool has_btime;
};

/* How cap_reader_start() takes a gzip file read in windows (one of several merged). */
enum cap_gz_open {
	CAP_GZ_STREAM, /* inflated by a thread of its own as it is read (any other gzip input) */
	CAP_GZ_PROBE,  /* its first bytes only, inflated now (cap_reader_open_merged()) */
	CAP_GZ_WHOLE,  /* all of it, inflated now (a small file, cap_reader_resume()) */
	CAP_GZ_LAZY,   /* by a thread, its header read when its first record is (resumed) */
};

struct cap_reader {
	const uint8_t *buf; /* the whole (decompressed) input; mapped or heap */
	size_t len;
	size_t pos; /* offset of the next record or block */
	void *map;  /* owned mapping, or NULL */
	size_t map_len;
	size_t released; /* mapping bytes before this offset were given back (MADV_DONTNEED) */
	size_t populated; /* mapping bytes before this offset were prefaulted (MADV_POPULATE_READ) */
	size_t prefetched; /* bytes before this offset were asked into the cache (cap_prefetch_ahead()) */
	size_t release_lag; /* keep this much behind the reading position mapped */
	uint8_t *heap; /* owned heap copy, or NULL */
	enum cap_format fmt;
	bool gzip;
	bool gz_broken;	      /* inflate stopped on corrupt or cut data */
	struct cap_gz *gz;    /* gzip inflated by a thread into a reserved region, or NULL */
	bool gz_final;        /* gz: the inflater has finished and len is all there is */
	bool be;	      /* pcap: header fields are big-endian; pcapng: section byte order */
	bool pcap_ns;	      /* pcap: fraction is nanoseconds */
	uint32_t rec_hdr_len; /* pcap: 16, or 24 for Kuznetzov */
	uint32_t linktype;    /* pcap */
	uint32_t snaplen;     /* pcap header or first IDB */
	struct cap_iface *ifaces; /* pcapng: current section's interfaces; owned */
	uint32_t iface_count;
	uint32_t iface_cap;
	int64_t last_ts_ns;    /* for SPB, which has no timestamp */
	bool state_changed;    /* pcapng: an SHB or IDB was read (cursors track this) */
	enum sn_status err_st; /* SN_OK while readable */
	struct sn_diag err;
	int fd;                /* the file's descriptor for pread(): a mapped file's, or one opened
				* for a merge that keeps it; else -1 */
	/* windowed reading (cap_reader_read_windowed(), cap_reader_open_merged()): buf holds the
	 * file's bytes [base, len) in win, and file_len is where the file ends; win is NULL
	 * until the first fill of a file opened for a merge */
	bool windowed;
	uint8_t *win;
	size_t win_cap;
	size_t win_max;        /* a refill grows a smaller window up to this (several inputs) */
	struct cap_window_pool *pool; /* where larger windows come from and go (several inputs) */
	/* cap_reader_set_fence(): a refill goes to the other window (win2), after fence() */
	uint8_t *win2;
	size_t win2_cap;
	const struct cap_window_hooks *hooks;
	size_t hooks_input;
	size_t base;           /* file offset of buf[0]; 0 unless windowed */
	size_t file_len;
	int io_err;            /* windowed: reading the file failed at file_len (errno) */
	bool shrank;           /* windowed: the file ended at file_len, before its length at open */
	size_t shrunk_to;      /* and was this long then (fstat()) */
	/* a file merged past the descriptors the process may keep (cap_reader_open_merged()):
	 * opened again by path for each read and closed after it, and read on only while it
	 * is still the file opened first (cap_file_id()) */
	char *path;
	struct cap_file_id id;
	bool replaced;         /* windowed: another file has that path now */
	/* gzip opened for a merge (cap_reader_open_merged()): only its first bytes are inflated
	 * then (gz_open CAP_GZ_PROBE; gz_probed), for its header and the time of its first
	 * record (first_ts), and it waits, holding nothing (deferred), until the merge reaches
	 * that record: then it is opened again by path (cap_reader_resume()) */
	uint8_t gz_open;       /* enum cap_gz_open: how cap_reader_start() takes gzip input */
	bool gz_probed;
	bool gz_small;         /* the probe inflated all of it: inflated whole again, no thread */
	bool deferred;
	bool header_pending;   /* CAP_GZ_LAZY: the header is still to be read */
	int64_t first_ts;
	size_t fence_pos;      /* gzip merged with hooks: reading position at the last fence() */
	/* a cursor: file_len is the input's length; reading from a buffer (cap_cursor_fill()),
	 * buf holds [base, len) of it, and whole is the mapping the buffer stands in for (NULL
	 * when buf is the mapping itself) */
	const uint8_t *whole;
};

static inline uint32_t cap_rd32(const struct cap_reader *r, const uint8_t *p)
{
	return r->be ? sn_be32(p) : sn_le32(p);
}

static inline uint16_t cap_rd16(const struct cap_reader *r, const uint8_t *p)
{
	return r->be ? sn_be16(p) : sn_le16(p);
}

static uint64_t cap_rd64(const struct cap_reader *r, const uint8_t *p)
{
	uint64_t a = cap_rd32(r, p);
	uint64_t b = cap_rd32(r, p + 4);

	return r->be ? (a << 32) | b : (b << 32) | a;
}

/* ---------------------------------------------------------------- input loading */

/* Read all of @p fd into a heap buffer. */
static enum sn_status cap_read_all(int fd, uint8_t **out, size_t *out_len, struct sn_diag *diag)
{
	size_t cap = CAP_READ_CHUNK;
	size_t n = 0;
	uint8_t *b = sn_xmalloc(cap);

	for (;;) {
		ssize_t got;

		if (cap - n < CAP_READ_CHUNK / 4) {
			cap *= 2;
			b = sn_xrealloc(b, cap);
		}
		got = read(fd, b + n, cap - n);
		if (got < 0) {
			int e = errno;

			if (e == EINTR) {
				continue;
			}
			free(b);
			sn_diag_set(diag, e, "%s", strerror(e));
			return SN_ESYS;
		}
		if (got == 0) {
			break;
		}
		n += (size_t)got;
	}
	*out = b;
	*out_len = n;
	return SN_OK;
}

/*
 * Inflate gzip data (one or more members), at most @p max_out bytes of it. On corrupt or cut
 * data the output so far is kept and *broken is set. Trailing bytes after a member that do
 * not start another member are ignored, as gzip(1) does. @p whole: @p in is all of the data;
 * else it is the start of it, and running out of it is not a cut.
 * @return true when the data ended (its last member, or corrupt or cut); false when the output
 *         reached @p max_out or, without @p whole, the input ran out first
 */
static bool cap_inflate(const uint8_t *in, size_t in_len, bool whole, size_t max_out,
			uint8_t **out, size_t *out_len, bool *broken)
{
	z_stream zs;
	size_t cap = in_len > SIZE_MAX / 4 ? in_len : in_len * 4;
	size_t in_used = 0;
	size_t n = 0;
	bool ended = true;
	uint8_t *b;

	cap = SN_MIN(SN_MAX(cap, (size_t)16384), max_out);
	b = sn_xmalloc(cap);
	*broken = false;
	memset(&zs, 0, sizeof(zs));
	if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK) {
		*broken = true;
		goto out;
	}
	for (;;) {
		size_t in_chunk;
		size_t out_chunk;
		int ret;

		if (cap - n == 0) {
			if (cap >= max_out) {
				ended = false;
				break;
			}
			cap = cap > max_out / 2 ? max_out : cap * 2;
			b = sn_xrealloc(b, cap);
		}
		in_chunk = SN_MIN(in_len - in_used, (size_t)UINT_MAX);
		out_chunk = SN_MIN(cap - n, (size_t)UINT_MAX);
		zs.next_in = (Bytef *)(uintptr_t)(in + in_used);
		zs.avail_in = (uInt)in_chunk;
		zs.next_out = b + n;
		zs.avail_out = (uInt)out_chunk;
		ret = inflate(&zs, Z_NO_FLUSH);
		in_used += in_chunk - zs.avail_in;
		n += out_chunk - zs.avail_out;
		if (ret == Z_STREAM_END) {
			if (in_len - in_used >= 2 && in[in_used] == 0x1f &&
			    in[in_used + 1] == 0x8b) {
				inflateReset(&zs);
				continue;
			}
			/* without the rest, a member may still follow */
			ended = whole || in_len - in_used >= 2;
			break;
		}
		if (ret == Z_OK) {
			continue;
		}
		if (ret == Z_BUF_ERROR && zs.avail_out == 0) {
			continue;
		}
		if (ret == Z_BUF_ERROR && !whole && in_used == in_len) {
			ended = false; /* the rest of the input is still to come */
			break;
		}
		/* Z_BUF_ERROR with input exhausted (cut), Z_DATA_ERROR, Z_NEED_DICT, Z_MEM_ERROR */
		*broken = true;
		break;
	}
	inflateEnd(&zs);
out:
	*out = b;
	*out_len = n;
	return ended;
}

/*
 * Streamed input: one thread inflates the compressed bytes (a mapped .gz file, or gzip data
 * arriving on a pipe) in blocks of CAP_GZ_BLOCK into a region of address space reserved up
 * front (MAP_NORESERVE: pages cost memory only once written), or copies a plain pipe into it,
 * and publishes how far it got. The reading thread parses behind it and waits when it
 * catches up, so decompression overlaps analysis instead of preceding it, and a pipe is
 * analysed as it arrives. Pages behind the reader are given back (MADV_DONTNEED) when the
 * caller said how far behind it may look (cap_reader_set_release_lag(), cap_reader_advise());
 * records of such an input are marked transient so that what the engine keeps is copied.
 */
#define CAP_GZ_BLOCK   (4u << 20)
#define CAP_GZ_RESERVE ((size_t)1 << 40) /* 1 TiB of address space, not of memory */
#define CAP_GZ_AHEAD   (4u * CAP_GZ_BLOCK) /* most the thread produces ahead of the reader */
#define CAP_GZ_HUGE    ((size_t)2 << 20)   /* a huge page */

struct cap_gz_worker;

static bool cap_pool_take_region(struct cap_window_pool *p, uint8_t **region, size_t *len);
static bool cap_pool_put_region(struct cap_window_pool *p, uint8_t *region, size_t len,
				size_t used);
static struct cap_gz_worker *cap_pool_take_worker(struct cap_window_pool *p);
static bool cap_pool_put_worker(struct cap_window_pool *p, struct cap_gz_worker *w);

struct cap_gz {
	pthread_t thread;  /* a thread of its own, unless worker */
	struct cap_gz_worker *worker; /* or a pool's inflater thread (gzip files merged) */
	pthread_mutex_t lock;
	pthread_cond_t more;
	bool inflate;      /* gzip data, else a plain copy */
	const uint8_t *in; /* compressed bytes of a mapped file, or NULL */
	size_t in_len;
	bool in_mapped;    /* in is a file mapping: pages read are given back as it goes */
	int fd;            /* else the pipe, owned */
	uint8_t *inbuf;    /* pipe: staging buffer of inbuf_cap bytes; first bytes read */
	size_t inbuf_cap;  /* CAP_READ_CHUNK, or a smaller file's length */
	size_t inbuf_len;  /* bytes in inbuf before the thread starts */
	uint8_t *region;
	size_t region_len;
	size_t avail;      /* bytes produced so far (lock) */
	size_t reader_pos; /* where the reader parses (lock): the thread stays within
			    * CAP_GZ_AHEAD of it, so a fast source cannot fill memory */
	size_t reader_want; /* ... but always produces what the reader waits for (a record
			     * may be longer than CAP_GZ_AHEAD) */
	bool done;         /* the thread has finished (lock) */
	bool broken;       /* it stopped on corrupt or cut data (lock) */
	int err;           /* errno of a failed read, or 0 (lock) */
	atomic_bool stop;  /* the reader is being freed */
};

/*
 * Publish @p n bytes produced; unless done, then wait while they are more than CAP_GZ_AHEAD
 * ahead of the reader and cover what it waits for (it moves reader_pos and reader_want in
 * cap_gz_wait(), at the latest when it gets within a block of the end of what is there, so
 * the wait always ends).
 */
static void cap_gz_publish(struct cap_gz *g, size_t n, bool done, bool broken, int err)
{
	pthread_mutex_lock(&g->lock);
	g->avail = n;
	if (done) {
		g->done = true;
		g->broken = broken;
		g->err = err;
	}
	pthread_cond_broadcast(&g->more);
	while (!done && n - g->reader_pos > CAP_GZ_AHEAD && n >= g->reader_want &&
	       !atomic_load_explicit(&g->stop, memory_order_relaxed)) {
		pthread_cond_wait(&g->more, &g->lock);
	}
	pthread_mutex_unlock(&g->lock);
}

/*
 * read() that retries EINTR; -1 with *err set on failure. From a regular file, the bytes the
 * file no longer holds once read() returns are not counted: a file cut while read() copied
 * it can give a torn copy, zeros and old bytes past its new end (see cap_read_at()), and the
 * read after them ends the input there, as a cut does.
 */
static ssize_t cap_read_some(int fd, uint8_t *p, size_t n, int *err)
{
	for (;;) {
		ssize_t got = read(fd, p, n);

		if (got >= 0 || errno != EINTR) {
			struct stat st;
			off_t pos;

			if (got < 0) {
				*err = errno;
			} else if (got > 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
				   (pos = lseek(fd, 0, SEEK_CUR)) >= 0 && st.st_size < pos) {
				got -= (ssize_t)SN_MIN((uint64_t)(pos - st.st_size), (uint64_t)got);
			}
			return got;
		}
	}
}

/* Plain bytes from a pipe, copied into the region as they come. */
static void cap_gz_copy(struct cap_gz *g)
{
	size_t n = SN_MIN(g->inbuf_len, g->region_len);
	int err = 0;

	memcpy(g->region, g->inbuf, n);
	cap_gz_publish(g, n, false, false, 0);
	while (!atomic_load_explicit(&g->stop, memory_order_relaxed) && n < g->region_len) {
		ssize_t got = cap_read_some(g->fd, g->region + n,
					    SN_MIN(g->region_len - n, (size_t)CAP_READ_CHUNK), &err);

		if (got <= 0) {
			break;
		}
		n += (size_t)got;
		cap_gz_publish(g, n, false, false, 0);
	}
	cap_gz_publish(g, n, true, n == g->region_len, err);
}

/* Top up zs's input: the rest of the mapping, or more of the pipe; false at its end. */
static bool cap_gz_fill(struct cap_gz *g, z_stream *zs, size_t *in_used, int *err)
{
	ssize_t got;

	if (g->in) {
		size_t chunk = SN_MIN(g->in_len - *in_used, (size_t)UINT_MAX);

		if (chunk == 0) {
			return false;
		}
		zs->next_in = (Bytef *)(uintptr_t)(g->in + *in_used);
		zs->avail_in = (uInt)chunk;
		*in_used += chunk;
		return true;
	}
	/* keep what is left (a member boundary may fall inside it) and read more after it */
	memmove(g->inbuf, zs->next_in, zs->avail_in);
	got = cap_read_some(g->fd, g->inbuf + zs->avail_in, g->inbuf_cap - zs->avail_in, err);
	zs->next_in = g->inbuf;
	if (got <= 0) {
		return false;
	}
	zs->avail_in += (uInt)got;
	return true;
}

/*
 * Produce g's bytes: copy the pipe, or inflate with @p zs, which *@p zs_live says is set up
 * already (a pool's inflater thread keeps its zlib state from one file to the next: it is
 * reset, not allocated again).
 */
static void cap_gz_run(struct cap_gz *g, z_stream *zs, bool *zs_live)
{
	size_t in_used = 0;     /* mapped input handed to zlib */
	size_t in_released = 0; /* mapped input given back */
	size_t n = 0;
	bool broken = false;
	bool eof = false;
	int err = 0;

	if (!g->inflate) {
		cap_gz_copy(g);
		return;
	}
	if (*zs_live) {
		(void)inflateReset(zs);
	} else {
		memset(zs, 0, sizeof(*zs));
		if (inflateInit2(zs, 16 + MAX_WBITS) != Z_OK) {
			cap_gz_publish(g, 0, true, true, 0);
			return;
		}
		*zs_live = true;
	}
	/* nothing of a file before (a pool's thread) is left to read */
	zs->next_in = g->in ? NULL : g->inbuf;
	zs->avail_in = g->in ? 0 : (uInt)g->inbuf_len;
	while (!atomic_load_explicit(&g->stop, memory_order_relaxed)) {
		size_t out_chunk = SN_MIN(g->region_len - n, (size_t)CAP_GZ_BLOCK);
		int ret;

		if (out_chunk == 0) {
			broken = true; /* larger than the region */
			break;
		}
		if (zs->avail_in == 0 && !eof && !cap_gz_fill(g, zs, &in_used, &err)) {
			eof = true;
		}
		zs->next_out = g->region + n;
		zs->avail_out = (uInt)out_chunk;
		ret = inflate(zs, Z_NO_FLUSH);
		n += out_chunk - zs->avail_out;
		cap_gz_publish(g, n, false, false, 0);
		if (g->in_mapped) {
			size_t used = in_used - zs->avail_in;

			if (used >= in_released + CAP_GZ_BLOCK) {
				size_t upto = used & ~(size_t)0xffff;

				(void)madvise((uint8_t *)(uintptr_t)g->in + in_released,
					      upto - in_released, MADV_DONTNEED);
				in_released = upto;
			}
		}
		if (ret == Z_STREAM_END) {
			/* another member may follow (concatenated .gz files); other trailing
			 * bytes are ignored, as gzip(1) does */
			if (zs->avail_in < 2 && !eof && !g->in && !cap_gz_fill(g, zs, &in_used, &err)) {
				eof = true;
			}
			if (zs->avail_in >= 2 && zs->next_in[0] == 0x1f && zs->next_in[1] == 0x8b) {
				inflateReset(zs);
				continue;
			}
			break;
		}
		if (ret == Z_OK || (ret == Z_BUF_ERROR && (zs->avail_out == 0 || !eof))) {
			continue;
		}
		/* Z_BUF_ERROR with input exhausted (cut), Z_DATA_ERROR, Z_NEED_DICT, Z_MEM_ERROR */
		broken = true;
		break;
	}
	cap_gz_publish(g, n, true, broken, err);
}

/* The thread of one streamed input (a pipe, standard input, a gzip file read alone). */
static void *cap_gz_main(void *arg)
{
	z_stream zs;
	bool live = false;

	cap_gz_run(arg, &zs, &live);
	if (live) {
		inflateEnd(&zs);
	}
	return NULL;
}

/*
 * An inflater thread of a window pool: gzip files merged (rotated captures) are read one or
 * two at a time, thousands in a run, and each took a thread of its own (clone() and the
 * thread's exit were 13 % of the reading thread's time over 1,000 files) and a zlib state
 * (about 40 KiB allocated and freed). The thread waits for the next file's job instead, and
 * keeps its zlib state.
 */
struct cap_gz_worker {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct cap_gz *job; /* (lock) the input being produced; NULL once it is finished */
	bool quit;          /* (lock) */
};

static void *cap_gz_worker_main(void *arg)
{
	struct cap_gz_worker *w = arg;
	z_stream zs;
	bool live = false;

	pthread_mutex_lock(&w->lock);
	for (;;) {
		struct cap_gz *g;

		while (!w->job && !w->quit) {
			pthread_cond_wait(&w->cond, &w->lock);
		}
		if (!w->job) {
			break;
		}
		g = w->job;
		pthread_mutex_unlock(&w->lock);
		cap_gz_run(g, &zs, &live);
		pthread_mutex_lock(&w->lock);
		w->job = NULL;
		pthread_cond_broadcast(&w->cond);
	}
	pthread_mutex_unlock(&w->lock);
	if (live) {
		inflateEnd(&zs);
	}
	return NULL;
}

static struct cap_gz_worker *cap_gz_worker_new(void)
{
	struct cap_gz_worker *w = sn_xcalloc(1, sizeof(*w));

	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->cond, NULL);
	if (sn_thread_start(&w->thread, NULL, cap_gz_worker_main, w, "sn-input") != 0) {
		pthread_cond_destroy(&w->cond);
		pthread_mutex_destroy(&w->lock);
		free(w);
		return NULL;
	}
	return w;
}

/* Stop an idle worker's thread and free it. */
static void cap_gz_worker_free(struct cap_gz_worker *w)
{
	pthread_mutex_lock(&w->lock);
	w->quit = true;
	pthread_cond_broadcast(&w->cond);
	pthread_mutex_unlock(&w->lock);
	pthread_join(w->thread, NULL);
	pthread_cond_destroy(&w->cond);
	pthread_mutex_destroy(&w->lock);
	free(w);
}

/*
 * Start the streaming thread: inflating r's mapped or heap bytes (@p fd < 0), or reading the
 * pipe @p fd whose first @p head_len bytes are in @p head (taken over). False, with nothing
 * changed, when the region cannot be reserved.
 */
static bool cap_gz_start(struct cap_reader *r, bool inflate, int fd, uint8_t *head,
			 size_t head_len)
{
	struct cap_gz *g = NULL;
	void *region = MAP_FAILED;
	uint8_t *pooled;
	size_t pooled_len;

	if (r->pool && cap_pool_take_region(r->pool, &pooled, &pooled_len)) {
		g = sn_xcalloc(1, sizeof(*g));
		g->region = pooled;
		g->region_len = pooled_len;
		region = pooled;
	}
	for (size_t len = CAP_GZ_RESERVE; len >= ((size_t)1 << 32) && region == MAP_FAILED;
	     len /= 16) {
		region = mmap(NULL, len, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (region != MAP_FAILED) {
			/* from a 2 MiB boundary, so that its huge pages are whole ones */
			size_t skew = (size_t)(-(uintptr_t)region) & (CAP_GZ_HUGE - 1);

			if (skew) {
				munmap(region, skew);
				region = (uint8_t *)region + skew;
				len -= skew;
			}
#ifdef MADV_HUGEPAGE
			/* written once from start to end: past its first 2 MiB in huge pages, a
			 * fault each instead of 512 (a fresh 4 KiB page costs about 13 us on the
			 * development VM: most of the inflater's time). The first 2 MiB stay small
			 * pages, so that a small file (rotated captures, many read at once) takes
			 * no more than it holds */
			(void)madvise((uint8_t *)region + CAP_GZ_HUGE, len - CAP_GZ_HUGE,
				      MADV_HUGEPAGE);
#endif
			g = sn_xcalloc(1, sizeof(*g));
			g->region = region;
			g->region_len = len;
		}
	}
	if (!g) {
		return false;
	}
	g->inflate = inflate;
	g->fd = fd;
	if (fd < 0) {
		g->in = r->buf;
		g->in_len = r->len;
		g->in_mapped = r->map != NULL && (const uint8_t *)r->map == r->buf;
	} else {
		/* a file smaller than a chunk (rotated captures) needs no more */
		g->inbuf_cap = r->windowed && r->file_len ?
				       SN_MAX(SN_MIN(r->file_len + 1, (size_t)CAP_READ_CHUNK), head_len) :
				       CAP_READ_CHUNK;
		g->inbuf = sn_xrealloc(head, g->inbuf_cap);
		g->inbuf_len = head_len;
	}
	atomic_init(&g->stop, false);
	pthread_mutex_init(&g->lock, NULL);
	pthread_cond_init(&g->more, NULL);
	if (r->pool) {
		g->worker = cap_pool_take_worker(r->pool);
		if (!g->worker) {
			g->worker = cap_gz_worker_new();
		}
	}
	if (g->worker) {
		pthread_mutex_lock(&g->worker->lock);
		g->worker->job = g;
		pthread_cond_broadcast(&g->worker->cond);
		pthread_mutex_unlock(&g->worker->lock);
	} else if (sn_thread_start(&g->thread, NULL, cap_gz_main, g, "sn-input") != 0) {
		pthread_cond_destroy(&g->more);
		pthread_mutex_destroy(&g->lock);
		munmap(g->region, g->region_len);
		free(g->inbuf);
		free(g);
		return false;
	}
	r->gz = g;
	r->buf = g->region;
	r->len = 0;
	return true;
}

/*
 * Wait until the inflater has produced @p want bytes or finished; r->len becomes what is
 * there. @return true when the input is final (nothing more will come).
 */
static bool cap_gz_wait(struct cap_reader *r, size_t want)
{
	struct cap_gz *g = r->gz;
	bool done;

	pthread_mutex_lock(&g->lock);
	if (g->reader_pos != r->pos || g->reader_want < want) {
		g->reader_pos = r->pos;
		g->reader_want = want;
		pthread_cond_broadcast(&g->more);
	}
	while (!g->done && g->avail < want) {
		pthread_cond_wait(&g->more, &g->lock);
	}
	r->len = g->avail;
	done = g->done;
	if (done) {
		r->gz_broken = g->broken || g->err != 0;
		r->gz_final = true;
	}
	pthread_mutex_unlock(&g->lock);
	return done;
}

/* Stop and free the inflater; its region and thread go to @p pool when it has room (may be
 * NULL). */
static void cap_gz_free(struct cap_gz *g, struct cap_window_pool *pool)
{
	pthread_mutex_lock(&g->lock);
	atomic_store(&g->stop, true);
	pthread_cond_broadcast(&g->more);
	pthread_mutex_unlock(&g->lock);
	if (g->worker) {
		struct cap_gz_worker *w = g->worker;

		pthread_mutex_lock(&w->lock);
		while (w->job == g) {
			pthread_cond_wait(&w->cond, &w->lock);
		}
		pthread_mutex_unlock(&w->lock);
		if (!pool || !cap_pool_put_worker(pool, w)) {
			cap_gz_worker_free(w);
		}
	} else {
		pthread_join(g->thread, NULL);
	}
	pthread_cond_destroy(&g->more);
	pthread_mutex_destroy(&g->lock);
	if (!pool || !cap_pool_put_region(pool, g->region, g->region_len, g->avail)) {
		munmap(g->region, g->region_len);
	}
	if (g->fd >= 0) {
		close(g->fd);
	}
	free(g->inbuf);
	free(g);
}

/*
 * A pipe or standard input: read its first bytes (enough to tell gzip and the capture
 * header), then stream the rest through the streaming thread; if that cannot start, read it
 * all into the heap. Takes @p fd.
 */
static enum sn_status cap_load_pipe(struct cap_reader *r, int fd, struct sn_diag *diag)
{
	uint8_t *head = sn_xmalloc(CAP_READ_CHUNK);
	size_t n = 0;
	int err = 0;

	while (n < 64) {
		ssize_t got = cap_read_some(fd, head + n, CAP_READ_CHUNK - n, &err);

		if (got < 0) {
			free(head);
			close(fd);
			sn_diag_set(diag, err, "%s", strerror(err));
			return SN_ESYS;
		}
		if (got == 0) {
			break;
		}
		n += (size_t)got;
	}
	r->gzip = n >= 2 && head[0] == 0x1f && head[1] == 0x8b;
	if (n >= 64 && cap_gz_start(r, r->gzip, fd, head, n)) {
		return SN_OK;
	}
	/* short input, or no streaming: all of it into the heap as before */
	{
		uint8_t *rest;
		size_t rest_len;
		enum sn_status st = cap_read_all(fd, &rest, &rest_len, diag);

		close(fd);
		if (st != SN_OK) {
			free(head);
			return st;
		}
		head = sn_xrealloc(head, n + rest_len + 1);
		memcpy(head + n, rest, rest_len);
		free(rest);
		r->heap = head;
		r->len = n + rest_len;
		return SN_OK;
	}
}

/*
 * Open @p path ("-": standard input) for reading: SN_OK with *@p fd_out and *@p st for a
 * regular file of some bytes; any other input (a pipe, a character device, a /proc file that
 * claims size 0) is read as a stream by cap_load_pipe() now (*@p fd_out -1).
 */
static enum sn_status cap_open_input(struct cap_reader *r, const char *path, int *fd_out,
				     struct stat *st, struct sn_diag *diag)
{
	enum sn_status ret;
	int fd;

	*fd_out = -1;
	if (strcmp(path, "-") == 0) {
		fd = dup(STDIN_FILENO);
		if (fd < 0) {
			int e = errno;

			sn_diag_set(diag, e, "%s", strerror(e));
			return SN_ESYS;
		}
		return cap_load_pipe(r, fd, diag);
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;

		sn_diag_set(diag, e, "%s", strerror(e));
		return SN_ESYS;
	}
	if (fstat(fd, st) < 0) {
		int e = errno;

		sn_diag_set(diag, e, "%s", strerror(e));
		ret = SN_ESYS;
		goto out_close;
	}
	if (S_ISDIR(st->st_mode)) {
		sn_diag_set(diag, EISDIR, "%s", strerror(EISDIR));
		ret = SN_ESYS;
		goto out_close;
	}
	if (!S_ISREG(st->st_mode) || st->st_size == 0) {
		return cap_load_pipe(r, fd, diag);
	}
	if ((uint64_t)st->st_size > SIZE_MAX) {
		sn_diag_set(diag, EFBIG, "%s", strerror(EFBIG));
		ret = SN_ESYS;
		goto out_close;
	}
	*fd_out = fd;
	return SN_OK;
out_close:
	close(fd);
	return ret;
}

/* Take the input bytes: map a regular file, else stream or read it. */
static enum sn_status cap_load(struct cap_reader *r, const char *path, struct sn_diag *diag)
{
	struct stat st;
	enum sn_status ret;
	int fd;

	ret = cap_open_input(r, path, &fd, &st, diag);
	if (ret != SN_OK || fd < 0) {
		return ret;
	}
	r->map_len = (size_t)st.st_size;
	r->map = mmap(NULL, r->map_len, PROT_READ, MAP_PRIVATE, fd, 0);
	if (r->map == MAP_FAILED) {
		int e = errno;

		r->map = NULL;
		r->map_len = 0;
		/* some file systems cannot map: fall back to reading */
		if (e == ENODEV || e == EINVAL || e == EACCES) {
			ret = cap_read_all(fd, &r->heap, &r->len, diag);
			goto out_close;
		}
		sn_diag_set(diag, e, "%s", strerror(e));
		ret = SN_ESYS;
		goto out_close;
	}
	(void)madvise(r->map, r->map_len, MADV_SEQUENTIAL);
#ifdef MADV_HUGEPAGE
	/*
	 * A file read in from disk through this mapping then comes into the page cache in 2 MiB
	 * folios where the kernel has free 2 MiB blocks (its readahead for a huge-page mapping
	 * reads whole ones), and the kernel maps a cached 2 MiB folio with one huge-page entry
	 * instead of 512 (the mapping of a file this large is aligned to them). c5k read cold
	 * by a --cores 1 run came in with 124 of its 125 MiB in 2 MiB folios, 84 MiB without
	 * the advice; later runs over the first took 0.964 (one core) and 0.956 (two) of the
	 * time of runs over the second (paired medians of 31 alternated rounds). A file the cache
	 * holds already (written, or read with read() as cat and the peers do) stays as it is.
	 */
	(void)madvise(r->map, r->map_len, MADV_HUGEPAGE);
#endif
	r->len = r->map_len;
	r->fd = fd; /* for cap_reader_read_windowed() */
	return SN_OK;
out_close:
	close(fd);
	return ret;
}

/* ---------------------------------------------------------------- errors */

static enum sn_status cap_fail(struct cap_reader *r, enum sn_status st, uint64_t off)
{
	r->err_st = st;
	r->err.err = 0;
	r->err.offset = off;
	return st;
}

/* Why reading the file failed (io_err set). */
static const char *cap_io_reason(const struct cap_reader *r)
{
	return r->replaced ? "another file has its name now: it was rotated or removed while it "
			     "was read"
			   : strerror(r->io_err);
}

/* The input ends inside a record or block that starts at @p off and needs @p need bytes. */
static enum sn_status cap_fail_short(struct cap_reader *r, size_t off, uint64_t need)
{
	uint64_t missing = need - (uint64_t)(r->len - off);

	if (r->io_err) {
		sn_diag_set(&r->err, r->io_err,
			    "cannot read the file past byte offset %zu (%s), inside the record at "
			    "byte offset %zu",
			    r->len, cap_io_reason(r), off);
		return cap_fail(r, SN_ETRUNC, off);
	}
	if (r->shrank) {
		sn_diag_set(&r->err, 0,
			    "file ends inside a record at byte offset %zu (%llu bytes missing): it "
			    "shrank to %zu bytes while it was read", off, (unsigned long long)missing,
			    r->shrunk_to);
		return cap_fail(r, SN_ETRUNC, off);
	}
	sn_diag_set(&r->err, 0,
		    "file ends inside a record at byte offset %zu (%llu bytes missing)%s", off,
		    (unsigned long long)missing,
		    r->gz_broken ? "; the gzip stream is corrupt or truncated" : "");
	return cap_fail(r, SN_ETRUNC, off);
}

/* Clean end of the bytes we have: a broken gzip stream or a failed read still makes it a
 * truncation. */
static enum sn_status cap_end(struct cap_reader *r)
{
	if (r->io_err) {
		sn_diag_set(&r->err, r->io_err, "cannot read the file past byte offset %zu: %s",
			    r->len, cap_io_reason(r));
		return cap_fail(r, SN_ETRUNC, r->len);
	}
	if (r->gz_broken) {
		sn_diag_set(&r->err, 0,
			    "the gzip stream is corrupt or truncated after %zu decompressed bytes",
			    r->len);
		return cap_fail(r, SN_ETRUNC, r->len);
	}
	if (r->shrank) {
		/* cut between two records: the rest of what it held at open is gone all the same */
		sn_diag_set(&r->err, 0, "file shrank to %zu bytes while it was read", r->shrunk_to);
		return cap_fail(r, SN_ETRUNC, r->len);
	}
	return SN_ENOTFOUND;
}

/* ---------------------------------------------------------------- pcap */

static enum sn_status cap_pcap_next(struct cap_reader *r, struct cap_record *rec)
{
	size_t off = r->pos;
	size_t left = r->len - off;
	const uint8_t *h = r->buf + (off - r->base);
	uint32_t sec, frac, incl, orig;

	if (left == 0) {
		return cap_end(r);
	}
	if (left < r->rec_hdr_len) {
		return cap_fail_short(r, off, r->rec_hdr_len);
	}
	sec = cap_rd32(r, h);
	frac = cap_rd32(r, h + 4);
	incl = cap_rd32(r, h + 8);
	orig = cap_rd32(r, h + 12);
	if (incl > CAP_MAX_RECORD_LEN) {
		sn_diag_set(&r->err, 0,
			    "corrupt record header at byte offset %zu (captured length %u > %u)",
			    off, incl, CAP_MAX_RECORD_LEN);
		return cap_fail(r, SN_EPARSE, off);
	}
	if (left - r->rec_hdr_len < incl) {
		return cap_fail_short(r, off, (uint64_t)r->rec_hdr_len + incl);
	}
	rec->ts_ns = (int64_t)((uint64_t)sec * CAP_NS_PER_SEC +
			       (r->pcap_ns ? (uint64_t)frac : (uint64_t)frac * 1000u));
	rec->caplen = incl;
	rec->origlen = orig < incl ? incl : orig;
	rec->linktype = r->linktype;
	rec->ifindex = 0;
	rec->file_index = 0;
	rec->transient = false;
	rec->data_at = (uint8_t)r->rec_hdr_len;
	rec->offset = off;
	rec->data = h + r->rec_hdr_len;
	r->pos = off + r->rec_hdr_len + incl;
	return SN_OK;
}

/* ---------------------------------------------------------------- pcapng */

static const uint64_t cap_pow10[20] = {
	UINT64_C(1),
	UINT64_C(10),
	UINT64_C(100),
	UINT64_C(1000),
	UINT64_C(10000),
	UINT64_C(100000),
	UINT64_C(1000000),
	UINT64_C(10000000),
	UINT64_C(100000000),
	UINT64_C(1000000000),
	UINT64_C(10000000000),
	UINT64_C(100000000000),
	UINT64_C(1000000000000),
	UINT64_C(10000000000000),
	UINT64_C(100000000000000),
	UINT64_C(1000000000000000),
	UINT64_C(10000000000000000),
	UINT64_C(100000000000000000),
	UINT64_C(1000000000000000000),
	UINT64_C(10000000000000000000),
};

/* Set the timestamp resolution from an if_tsresol byte. */
static void cap_iface_set_tsresol(struct cap_iface *ifc, uint8_t v)
{
	ifc->pow2 = (v & 0x80) != 0;
	ifc->exp = v & 0x7f;
	ifc->mul = 0;
	ifc->div = 0;
	if (ifc->pow2) {
		return;
	}
	if (ifc->exp <= 9) {
		ifc->mul = cap_pow10[9 - ifc->exp];
	} else if (ifc->exp - 9 < (int)SN_ARRAY_SIZE(cap_pow10)) {
		ifc->div = cap_pow10[ifc->exp - 9];
	}
	/* else: units finer than 10^-28 s; every count is below 1 ns (mul = div = 0) */
}

/* Units of if_tsresol to ns plus if_tsoffset; arithmetic wraps instead of overflowing. */
static int64_t cap_iface_ts(const struct cap_iface *ifc, uint64_t units)
{
	uint64_t ns;

	if (ifc->pow2) {
		unsigned int p = ifc->exp;
		uint64_t whole = p >= 64 ? 0 : units >> p;
		uint64_t frac = p >= 64 ? units : units & ((UINT64_C(1) << p) - 1);

		if (p > 32) {
			/* keep frac * 10^9 below 2^64: drop sub-ns bits first */
			frac = p - 32 >= 64 ? 0 : frac >> (p - 32);
			p = 32;
		}
		ns = whole * CAP_NS_PER_SEC + ((frac * CAP_NS_PER_SEC) >> p);
	} else if (ifc->div != 0) {
		ns = units / ifc->div;
	} else {
		ns = units * ifc->mul;
	}
	return (int64_t)(ns + ifc->offset_ns);
}

/* Parse an IDB body (after type and length; @p body_len excludes the trailing length). */
static enum sn_status cap_pcapng_idb(struct cap_reader *r, size_t off, const uint8_t *body,
				     uint32_t body_len)
{
	struct cap_iface *ifc;
	uint32_t i;

	if (body_len < 8) {
		sn_diag_set(&r->err, 0, "corrupt interface description block at byte offset %zu",
			    off);
		return cap_fail(r, SN_EPARSE, off);
	}
	if (r->iface_count == r->iface_cap) {
		r->iface_cap = r->iface_cap ? r->iface_cap * 2 : 4;
		r->ifaces = sn_xrealloc(r->ifaces, r->iface_cap * sizeof(*r->ifaces));
	}
	ifc = &r->ifaces[r->iface_count++];
	memset(ifc, 0, sizeof(*ifc));
	r->state_changed = true;
	ifc->linktype = cap_rd16(r, body);
	ifc->snaplen = cap_rd32(r, body + 4);
	cap_iface_set_tsresol(ifc, 6);
	/* options; malformed options end the option list without failing the block */
	for (i = 8; body_len - i >= 4;) {
		uint16_t code = cap_rd16(r, body + i);
		uint16_t vlen = cap_rd16(r, body + i + 2);
		uint32_t padded = ((uint32_t)vlen + 3u) & ~3u;

		if (code == CAP_OPT_ENDOFOPT || body_len - i - 4 < padded) {
			break;
		}
		if (code == CAP_OPT_TSRESOL && vlen >= 1) {
			cap_iface_set_tsresol(ifc, body[i + 4]);
		} else if (code == CAP_OPT_TSOFFSET && vlen >= 8) {
			ifc->offset_ns = cap_rd64(r, body + i + 4) * CAP_NS_PER_SEC;
		}
		i += 4 + padded;
	}
	return SN_OK;
}

/*
 * Start a section at @p off: byte order from the BOM, then the total length in that order.
 * @return SN_OK with *total_len set, SN_ETRUNC or SN_EPARSE (r->err set).
 */
static enum sn_status cap_pcapng_shb(struct cap_reader *r, size_t off, uint32_t *total_len)
{
	const uint8_t *h = r->buf + (off - r->base);
	size_t left = r->len - off;
	uint32_t bom;

	if (left < 12) {
		return cap_fail_short(r, off, 12);
	}
	bom = sn_le32(h + 8);
	if (bom == CAP_PCAPNG_BOM) {
		r->be = false;
	} else if (sn_be32(h + 8) == CAP_PCAPNG_BOM) {
		r->be = true;
	} else {
		sn_diag_set(&r->err, 0, "corrupt section header block at byte offset %zu", off);
		return cap_fail(r, SN_EPARSE, off);
	}
	*total_len = cap_rd32(r, h + 4);
	if (*total_len < CAP_PCAPNG_MIN_SHB) {
		sn_diag_set(&r->err, 0,
			    "corrupt section header block at byte offset %zu (length %u)", off,
			    *total_len);
		return cap_fail(r, SN_EPARSE, off);
	}
	if (left >= 14 && cap_rd16(r, h + 12) != 1) {
		sn_diag_set(&r->err, 0, "unsupported pcapng version %u at byte offset %zu",
			    cap_rd16(r, h + 12), off);
		return cap_fail(r, SN_EPARSE, off);
	}
	r->iface_count = 0;
	r->state_changed = true;
	return SN_OK;
}

static enum sn_status cap_pcapng_next(struct cap_reader *r, struct cap_record *rec)
{
	for (;;) {
		size_t off = r->pos;
		size_t left = r->len - off;
		const uint8_t *h = r->buf + (off - r->base);
		const uint8_t *body;
		/* total is set on every path that reaches its use (cap_pcapng_shb() sets it when it
		 * returns SN_OK); 0 only spares GCC's -Wmaybe-uninitialized, which the inlining of a
		 * profile-guided build (make pgo) otherwise raises here */
		uint32_t type, total = 0, body_len;
		uint32_t ifid, caplen, origlen;
		uint64_t units;
		const struct cap_iface *ifc;
		enum sn_status st;

		if (left == 0) {
			return cap_end(r);
		}
		if (left < 8) {
			return cap_fail_short(r, off, 12);
		}
		type = cap_rd32(r, h);
		if (type == CAP_PCAPNG_SHB) {
			st = cap_pcapng_shb(r, off, &total);
			if (st != SN_OK) {
				return st;
			}
		} else {
			total = cap_rd32(r, h + 4);
		}
		if (total < 12 || (total & 3) != 0 || total > CAP_MAX_BLOCK_LEN) {
			sn_diag_set(&r->err, 0,
				    "corrupt block header at byte offset %zu (block length %u)",
				    off, total);
			return cap_fail(r, SN_EPARSE, off);
		}
		if (left < total) {
			return cap_fail_short(r, off, total);
		}
		if (cap_rd32(r, h + total - 4) != total) {
			sn_diag_set(&r->err, 0,
				    "corrupt block at byte offset %zu (trailing length %u != %u)",
				    off, cap_rd32(r, h + total - 4), total);
			return cap_fail(r, SN_EPARSE, off);
		}
		r->pos = off + total;
		body = h + 8;
		body_len = total - 12;
		switch (type) {
		case CAP_PCAPNG_IDB:
			st = cap_pcapng_idb(r, off, body, body_len);
			if (st != SN_OK) {
				return st;
			}
			continue;
		case CAP_PCAPNG_EPB:
		case CAP_PCAPNG_OPB:
			if (body_len < 20) {
				goto bad_block;
			}
			if (type == CAP_PCAPNG_EPB) {
				ifid = cap_rd32(r, body);
			} else {
				ifid = cap_rd16(r, body);
			}
			units = ((uint64_t)cap_rd32(r, body + 4) << 32) | cap_rd32(r, body + 8);
			caplen = cap_rd32(r, body + 12);
			origlen = cap_rd32(r, body + 16);
			if (caplen > body_len - 20) {
				goto bad_block;
			}
			if (ifid >= r->iface_count) {
				sn_diag_set(
					&r->err, 0,
					"packet block at byte offset %zu uses undefined interface %u",
					off, ifid);
				return cap_fail(r, SN_EPARSE, off);
			}
			ifc = &r->ifaces[ifid];
			rec->ts_ns = cap_iface_ts(ifc, units);
			rec->data = body + 20;
			rec->data_at = 8 + 20;
			break;
		case CAP_PCAPNG_SPB:
			if (body_len < 4) {
				goto bad_block;
			}
			if (r->iface_count == 0) {
				sn_diag_set(
					&r->err, 0,
					"simple packet block at byte offset %zu without an interface",
					off);
				return cap_fail(r, SN_EPARSE, off);
			}
			ifid = 0;
			ifc = &r->ifaces[0];
			origlen = cap_rd32(r, body);
			caplen = SN_MIN(origlen, body_len - 4);
			if (ifc->snaplen != 0) {
				caplen = SN_MIN(caplen, ifc->snaplen);
			}
			rec->ts_ns = r->last_ts_ns;
			rec->data = body + 4;
			rec->data_at = 8 + 4;
			break;
		default:
			/* SHB, NRB, ISB, DSB, custom and unknown blocks */
			continue;
		}
		rec->caplen = caplen;
		rec->origlen = origlen < caplen ? caplen : origlen;
		rec->linktype = ifc->linktype;
		rec->ifindex = ifid;
		rec->file_index = 0;
		rec->transient = false;
		rec->offset = off;
		r->last_ts_ns = rec->ts_ns;
		return SN_OK;
bad_block:
		sn_diag_set(&r->err, 0, "corrupt packet block at byte offset %zu", off);
		return cap_fail(r, SN_EPARSE, off);
	}
}

/*
 * Snap length of the first IDB for cap_reader_snaplen(): walk the first blocks of the first
 * section with a throw-away copy of the cursor, bounded, without touching r's state.
 */
static uint32_t cap_pcapng_first_snaplen(const struct cap_reader *r)
{
	struct cap_reader tmp = *r;
	size_t pos = 0;
	int i;

	for (i = 0; i < 64; i++) {
		size_t left = r->len - pos;
		const uint8_t *h = r->buf + pos;
		uint32_t type, total;

		if (left < 12) {
			break;
		}
		if (sn_le32(h) == CAP_PCAPNG_SHB) {
			if (i > 0) {
				break;
			}
			tmp.be = sn_be32(h + 8) == CAP_PCAPNG_BOM;
		}
		type = cap_rd32(&tmp, h);
		total = cap_rd32(&tmp, h + 4);
		if (total < 12 || (total & 3) != 0 || total > left) {
			break;
		}
		if (type == CAP_PCAPNG_IDB) {
			return total >= 20 ? cap_rd32(&tmp, h + 12) : 0;
		}
		pos += total;
	}
	return 0;
}

/* ---------------------------------------------------------------- public API */

/* A file read in windows that turned out to be gzip: a stream from here, nothing of the
 * header's read holds. */
static void cap_reader_unwindow(struct cap_reader *r)
{
	if (!r->windowed) {
		return;
	}
	r->windowed = false;
	r->win_cap = r->win_max = 0;
	r->base = r->file_len = r->shrunk_to = 0;
	r->shrank = r->replaced = false;
	r->io_err = 0;
}

/*
 * The most of a gzip file merged that is inflated from its first page when it is opened
 * (cap_reader_open_merged()): its header and first record are in it unless they are large;
 * then more is inflated for them (cap_gz_probe_more()), and a file whose first record is not
 * even there is read on at once, its inflater started.
 */
#define CAP_GZ_PROBE_MAX (16u << 10)

/* pread() @p len bytes from the start of @p fd into @p buf, fewer at its end or an error. */
static size_t cap_pread_start(int fd, uint8_t *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t k = pread(fd, buf + got, len - got, (off_t)got);

		if (k < 0 && errno == EINTR) {
			continue;
		}
		if (k <= 0) {
			break;
		}
		got += (size_t)k;
	}
	return got;
}

/*
 * One of several gzip files merged (CAP_GZ_PROBE): what its first page (r->buf, r->len)
 * inflates to, at most CAP_GZ_PROBE_MAX, into r->heap, for its header and first record
 * (cap_reader_defer()); when that is less (a long gzip header, data that gzip hardly shrinks),
 * what the first CAP_GZ_PROBE_SECOND bytes of the file inflate to. The reader keeps @p fd
 * (cap_reader_open_merged() may give it up). False, with nothing changed, when even that is
 * too little to tell a capture's header by: the file is read on at once.
 */
#define CAP_GZ_PROBE_SECOND (64u << 10)

static bool cap_gz_probe(struct cap_reader *r, int fd)
{
	bool whole = r->len >= r->file_len;
	uint8_t *plain;
	size_t plain_len;
	bool broken;
	bool ended = cap_inflate(r->buf, r->len, whole, CAP_GZ_PROBE_MAX, &plain, &plain_len,
				 &broken);

	if (!ended && plain_len < CAP_GZ_PROBE_MAX) {
		size_t want = SN_MIN(r->file_len, (size_t)CAP_GZ_PROBE_SECOND);
		uint8_t *in = sn_xmalloc(want);
		size_t got = cap_pread_start(fd, in, want);

		free(plain);
		whole = got >= r->file_len;
		ended = cap_inflate(in, got, whole, CAP_GZ_PROBE_MAX, &plain, &plain_len, &broken);
		free(in);
	}
	if (!ended && plain_len < 64) {
		free(plain);
		return false;
	}
	/* inflated whole when read only if all of it was here: a large file corrupt early
	 * ends its inflater early, and is no reason to read the whole file at once */
	r->gz_small = ended && whole;
	r->gz_broken = broken;
	cap_reader_unwindow(r);
	r->fd = fd;
	r->heap = plain;
	r->buf = plain;
	r->len = plain_len;
	r->gz_probed = true;
	return true;
}

/*
 * After cap_load(): gzip input goes to its inflater; then the capture's header. SN_OK, else
 * the reason in @p diag (the caller frees @p r).
 */
static enum sn_status cap_reader_header(struct cap_reader *r, struct sn_diag *diag);

static enum sn_status cap_reader_start(struct cap_reader *r, struct sn_diag *diag)
{
	if (r->gz) {
		/* a pipe being streamed: enough for the header and the first pcapng blocks */
		(void)cap_gz_wait(r, 1u << 20);
	} else if (!r->buf) {
		/* what was read whole; a file's first bytes were read already (open_as()) */
		r->buf = r->heap;
	}
	if (r->gz) {
		if (r->gz_broken && r->len < CAP_PCAP_HDR_LEN) {
			sn_diag_set(diag, 0, "corrupt gzip stream before any capture header");
			return SN_EPARSE;
		}
	} else if (r->len >= 2 && r->buf[0] == 0x1f && r->buf[1] == 0x8b) {
		int fd = r->fd;
		bool threaded = r->gz_open != CAP_GZ_WHOLE;
		bool streamed;

		r->gzip = true;
		r->fd = -1;
		if (r->windowed && r->gz_open == CAP_GZ_PROBE && cap_gz_probe(r, fd)) {
			goto out_header;
		}
		/* inflated from the descriptor with read(), as a pipe is, not from the mapping: a
		 * file cut while it is inflated ends its stream (a truncation) instead of the
		 * process (SIGBUS); the mapping only when there is no descriptor */
		streamed = threaded && fd >= 0 && (r->map || r->windowed) &&
			   cap_gz_start(r, true, fd, NULL, 0);
		if (!streamed && r->map) {
			/* no inflater thread: all of it, from the mapping after all */
			r->buf = r->map;
			r->len = r->map_len;
		}
		if (!streamed && r->windowed) {
			/* the file's first bytes only: all of it, to inflate below */
			enum sn_status st = cap_read_all(fd, &r->heap, &r->len, diag);

			if (st != SN_OK) {
				close(fd);
				return st;
			}
			r->buf = r->heap;
		}
		cap_reader_unwindow(r);
		if (streamed) {
			if (r->map) {
				munmap(r->map, r->map_len);
				r->map = NULL;
				r->map_len = 0;
			}
		} else {
			if (fd >= 0) {
				close(fd);
			}
			streamed = threaded && cap_gz_start(r, true, -1, NULL, 0);
		}
		if (streamed && r->gz_open == CAP_GZ_LAZY) {
			/* its header once its first record is wanted (cap_reader_late_header()):
			 * meanwhile its inflater runs on */
			r->header_pending = true;
			return SN_OK;
		}
		if (streamed) {
			/* enough for the header and the first pcapng blocks */
			(void)cap_gz_wait(r, 1u << 20);
		} else {
			uint8_t *plain;
			size_t plain_len;

			(void)cap_inflate(r->buf, r->len, true, SIZE_MAX, &plain, &plain_len,
					  &r->gz_broken);
			if (r->map) {
				munmap(r->map, r->map_len);
				r->map = NULL;
				r->map_len = 0;
			}
			free(r->heap);
			r->heap = plain;
			r->buf = plain;
			r->len = plain_len;
		}
out_header:
		if (r->gz_broken && r->len < CAP_PCAP_HDR_LEN) {
			sn_diag_set(diag, 0, "corrupt gzip stream before any capture header");
			return SN_EPARSE;
		}
	}
	return cap_reader_header(r, diag);
}

/* The capture's header, from r->buf: SN_OK, else the reason in @p diag. */
static enum sn_status cap_reader_header(struct cap_reader *r, struct sn_diag *diag)
{
	uint32_t magic;

	if (r->len < CAP_PCAP_HDR_LEN) {
		goto out_not_capture;
	}
	magic = sn_le32(r->buf);
	r->rec_hdr_len = 16;
	if (magic == CAP_PCAP_MAGIC_US || magic == CAP_PCAP_MAGIC_NS ||
	    magic == CAP_PCAP_MAGIC_KUZ) {
		r->be = false;
	} else {
		magic = sn_be32(r->buf);
		if (magic != CAP_PCAP_MAGIC_US && magic != CAP_PCAP_MAGIC_NS &&
		    magic != CAP_PCAP_MAGIC_KUZ) {
			magic = 0;
		}
		r->be = true;
	}
	if (magic != 0) {
		r->fmt = CAP_FMT_PCAP;
		r->pcap_ns = magic == CAP_PCAP_MAGIC_NS;
		if (magic == CAP_PCAP_MAGIC_KUZ) {
			r->rec_hdr_len = 24;
		}
		r->snaplen = cap_rd32(r, r->buf + 16);
		r->linktype = cap_rd32(r, r->buf + 20) & CAP_LINKTYPE_MASK;
		r->pos = CAP_PCAP_HDR_LEN;
	} else if (sn_le32(r->buf) == CAP_PCAPNG_SHB && r->len >= CAP_PCAPNG_MIN_SHB &&
		   (sn_le32(r->buf + 8) == CAP_PCAPNG_BOM ||
		    sn_be32(r->buf + 8) == CAP_PCAPNG_BOM)) {
		r->fmt = CAP_FMT_PCAPNG;
		r->be = sn_be32(r->buf + 8) == CAP_PCAPNG_BOM;
		r->pos = 0;
		r->snaplen = cap_pcapng_first_snaplen(r);
	} else {
		goto out_not_capture;
	}
	return SN_OK;

out_not_capture:
	if (r->io_err) {
		sn_diag_set(diag, r->io_err, "%s", cap_io_reason(r));
		return SN_ESYS;
	}
	sn_diag_set(diag, 0, "not a pcap or pcapng file");
	return SN_EPARSE;
}

/*
 * Give back the pages of the mapping that lie well behind the reading position, so a
 * multi-gigabyte file costs a bounded amount of resident memory. The mapping is a private,
 * read-only file mapping: a page given back is read again from the page cache if anyone
 * still looks at it (a message kept by reference, a worker lagging behind), so this never
 * invalidates a record; it only lets the kernel reclaim what nobody touches any more.
 */
#define CAP_RELEASE_LAG   (8u << 20) /* keep this much behind the reader mapped */
#define CAP_RELEASE_CHUNK (2u << 20) /* give back in steps of this size */

/*
 * Prefault the next window of the mapping in one system call (MADV_POPULATE_READ, Linux 5.14)
 * instead of one page fault per few pages as the reader walks it: measured, the faults were a
 * third of a single-core run. Older kernels reject the advice; then the pages fault as usual.
 */
#define CAP_POPULATE_CHUNK (2u << 20)
#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif

static void cap_populate_ahead(struct cap_reader *r)
{
	size_t end;

	if (!r->map || r->windowed || r->pos + CAP_POPULATE_CHUNK / 2 < r->populated ||
	    r->populated >= r->map_len) {
		return;
	}
	if (r->populated < r->pos) {
		r->populated = r->pos & ~(size_t)4095;
	}
	end = SN_MIN(r->populated + CAP_POPULATE_CHUNK, r->map_len);
	(void)madvise((uint8_t *)r->map + r->populated, end - r->populated, MADV_POPULATE_READ);
	r->populated = end;
}

/*
 * Records are found one after the other: where the next one starts is in the header of this
 * one, so reading headers is a chain of dependent loads, and in a file much larger than the
 * caches every header was a miss to memory (91 % of cap_pcap_next()'s samples under perf, on
 * its first load). The bytes are read in file order, so they are asked for a fixed distance
 * ahead, line by line: the misses overlap instead of queueing behind each other.
 */
#define CAP_PREFETCH_AHEAD (16u << 10)

static void cap_prefetch_ahead(struct cap_reader *r)
{
	size_t end = SN_MIN(r->pos + CAP_PREFETCH_AHEAD, r->len);

	if (r->prefetched < r->pos) {
		r->prefetched = SN_MAX(r->pos & ~(size_t)63, r->base);
	}
	for (; r->prefetched < end; r->prefetched += 64) {
		__builtin_prefetch(r->buf + (r->prefetched - r->base));
	}
}

/*
 * gzip merged and read by other threads too (cap_reader_set_fence()): each time the reader is
 * the lag past the position of its last fence(), fence() again, which returns once the
 * records read before that position are past every thread, and give back the inflated bytes
 * before it. Nothing was given back there before: five rotated gzip files of 100 MiB merged at
 * two cores peaked at 616 MiB, the same bytes in one file at 101 MiB.
 */
static void cap_release_fenced(struct cap_reader *r)
{
	size_t lag = r->release_lag ? r->release_lag : CAP_RELEASE_LAG;
	size_t upto;

	if (r->pos < r->fence_pos + lag) {
		return;
	}
	r->hooks->fence(r->hooks->ctx, r->hooks_input);
	upto = cap_reader_release_floor(r, r->fence_pos);
	if (upto > r->released) {
		cap_reader_advise(r, r->released, upto - r->released, false);
		r->released = upto;
	}
	r->fence_pos = r->pos;
}

static void cap_release_behind(struct cap_reader *r)
{
	size_t lag = r->release_lag ? r->release_lag : CAP_RELEASE_LAG;
	size_t upto;

	if (r->gz && r->hooks) {
		cap_release_fenced(r);
		return;
	}

	/* inflated bytes given back are gone (anonymous memory): only when the caller said
	 * how far behind it looks */
	if ((!r->map && !r->gz) || r->windowed || (r->gz && !r->release_lag) ||
	    r->pos < r->released + lag + CAP_RELEASE_CHUNK) {
		return;
	}
	upto = cap_reader_release_floor(r, r->pos - lag);
	cap_reader_advise(r, r->released, upto - r->released, false);
	r->released = upto;
}

static enum sn_status cap_parse_next(struct cap_reader *r, struct cap_record *rec)
{
	if (r->fmt == CAP_FMT_PCAP) {
		return cap_pcap_next(r, rec);
	}
	return cap_pcapng_next(r, rec);
}

/*
 * Windowed reading (cap_reader_read_windowed()): the file is read with pread() into a buffer
 * of the reader's own, CAP_WINDOW bytes at a time, and records point into it until the next
 * call. What a mapping costs depends on how the page cache holds the file, and a file written
 * a few KiB at a time (a capture tool, carrier.py) or read back with read() (cat, cp: about
 * its first 30 MiB) is held in 4-64 KiB folios, each mapped and given back on its own. On the
 * development VM, reading the 2,000-call sweep capture (50 MiB: 2 MiB at a time, touching
 * every line) took 12.8-14.2 ms through a mapping (prefaulted, given back behind) and 3.4 ms
 * with pread() into one reused buffer in that state; 2.3-3.0 and 2.8-3.2 ms when the cache
 * held it in 2 MiB folios (BENCHMARKS.md, "A file read in windows"). The bytes are also
 * read right after being copied, from the caches. The window is one huge page, refilled when
 * less than CAP_WINDOW_LOW is left unread; a record longer than what is left is read into a
 * larger window. A message's bytes can still be referred to in the mapping (cap_reader_map(),
 * cap_record.data_at), which is kept and never touched here.
 */
#define CAP_WINDOW     (2u << 20)
#define CAP_WINDOW_LOW (64u << 10)
#define CAP_WINDOW_MIN 64u /* the least a window is given */

/* A read of the file ended at file_len: when @p eof (read() gave 0 within the length the file
 * had at open), it shrank, to the length fstat() gives now (file_len, at most: the length
 * when it could not tell; the file may have grown again since). */
static void cap_note_shrink(struct cap_reader *r, bool eof)
{
	struct stat st;

	r->shrank = eof;
	r->shrunk_to = r->file_len;
	if (eof && fstat(r->fd, &st) == 0 && st.st_size >= 0 &&
	    (uint64_t)st.st_size < r->file_len) {
		r->shrunk_to = (size_t)st.st_size;
	}
}

/* The identity of the file open as @p fd; false when it cannot be had. */
static bool cap_file_id(int fd, struct cap_file_id *id)
{
	struct statx stx;
	struct stat st;

	memset(id, 0, sizeof(*id));
	if (statx(fd, "", AT_EMPTY_PATH, STATX_INO | STATX_BTIME, &stx) == 0) {
		id->dev = ((uint64_t)stx.stx_dev_major << 32) | stx.stx_dev_minor;
		id->ino = stx.stx_ino;
		id->has_btime = (stx.stx_mask & STATX_BTIME) != 0;
		if (id->has_btime) {
			id->btime_sec = stx.stx_btime.tv_sec;
			id->btime_nsec = stx.stx_btime.tv_nsec;
		}
		return true;
	}
	if (fstat(fd, &st) != 0) {
		return false;
	}
	/* statx() refused (a kernel before 4.11, a seccomp filter): no birth time */
	id->dev = ((uint64_t)major(st.st_dev) << 32) | minor(st.st_dev);
	id->ino = st.st_ino;
	return true;
}

static bool cap_same_file(const struct cap_file_id *a, const struct cap_file_id *b)
{
	return a->dev == b->dev && a->ino == b->ino && a->has_btime == b->has_btime &&
	       (!a->has_btime || (a->btime_sec == b->btime_sec && a->btime_nsec == b->btime_nsec));
}

/*
 * Open the file of a reader that keeps no descriptor (cap_reader_open_merged()) again: its
 * descriptor, or -1 with *@p err set when it cannot be opened (ENOENT: renamed away, or
 * removed) or another file has its name now (ESTALE: a capture rotated by renaming it, or
 * removed and another created: reading it on would read another file's bytes).
 */
static int cap_open_same(const struct cap_reader *r, int *err)
{
	struct cap_file_id id;
	int fd = open(r->path, O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		*err = errno;
		return -1;
	}
	if (!cap_file_id(fd, &id) || !cap_same_file(&id, &r->id)) {
		*err = ESTALE;
		close(fd);
		return -1;
	}
	return fd;
}

/* cap_open_same() into r->fd: false, with io_err (and replaced) set, when it fails. */
static bool cap_reopen(struct cap_reader *r)
{
	int err = 0;
	int fd = cap_open_same(r, &err);

	if (fd < 0) {
		r->io_err = err;
		r->replaced = err == ESTALE;
		return false;
	}
	r->fd = fd;
	return true;
}

/*
 * pread() the file's bytes [@p off, @p off + @p len) into @p buf (a window, a cursor's
 * buffer); the bytes read. Fewer when the file ends before them now (it shrank: a capture
 * rotated or cut under the reader) or cannot be read there: then the input ends where the
 * bytes read end (file_len; shrank or io_err says why: cap_end(), cap_fail_short()), and what
 * lies past is never read from the mapping, whose lost pages would kill the process (SIGBUS).
 */
static size_t cap_read_at(struct cap_reader *r, uint8_t *buf, size_t off, size_t len)
{
	size_t got = 0;
	bool reopened = false;

	if (r->fd < 0 && r->path) {
		/* merged past the descriptors it may keep: open it again for this read */
		if (!cap_reopen(r)) {
			r->file_len = off;
			return 0;
		}
		reopened = true;
	}
	while (got < len) {
		ssize_t k = pread(r->fd, buf + got, len - got, (off_t)(off + got));

		if (k > 0) {
			got += (size_t)k;
			continue;
		}
		if (k < 0 && errno == EINTR) {
			continue;
		}
		r->io_err = k < 0 ? errno : 0;
		r->file_len = off + got;
		cap_note_shrink(r, k == 0);
		break;
	}
	if (got > 0) {
		/*
		 * A file cut while pread() copied it can give a torn copy: the kernel sets the new
		 * length first, then zeroes the rest of the page-cache folio holding the new end and
		 * drops the folios past it, and a copy of a batch of folios that began before can
		 * take the zeroed stretch and the old bytes after it; the next batch then stops at
		 * the new end (seen on ext4 with 64 KiB folios at --cores 2, about one cut in 1,000
		 * with the other CPU busy: 35 KB of zeros read as 2,183 empty records, then a
		 * corrupt record header). The length is set before any byte changes, so a file at
		 * least as long as the bytes read now was read as it was; shorter, the bytes past
		 * its end are dropped, as a short read (tests/file_cut.sh).
		 */
		struct stat st;

		if (fstat(r->fd, &st) == 0 && st.st_size >= 0 && (uint64_t)st.st_size < off + got) {
			got = (uint64_t)st.st_size > off ? (size_t)st.st_size - off : 0;
			r->io_err = 0;
			r->file_len = off + got;
			cap_note_shrink(r, true);
		}
	}
	if (reopened) {
		close(r->fd);
		r->fd = -1;
	}
	return got;
}

/* Make the window hold at least @p want bytes from pos (or the rest of the file): what is
 * left unread moves to its start and the rest of it is read. Records before pos die. */
/* ---------------------------------------------------------------- window pool */

#define CAP_POOL_MAX 16u /* windows a pool keeps */

/*
 * The regions of gzip inputs merged (cap_gz_start()) that ended, kept for the next ones with
 * their first CAP_POOL_REGION_KEEP bytes still in memory: a fresh page costs a fault at its
 * first write, and on the development VM each cost about 13 us (bench/pages.c). Rotated
 * captures of 130 KiB inflated into fresh regions, 32 pages each, took 0.4 s of the 1.3 s of
 * merging 1,000 of them. Their inflater threads are kept as well (struct cap_gz_worker), as
 * many as regions.
 */
#define CAP_POOL_REGIONS     4u
#define CAP_POOL_REGION_KEEP ((size_t)2 << 20)

struct cap_window_pool {
	uint8_t *win[CAP_POOL_MAX];
	size_t cap[CAP_POOL_MAX];
	uint32_t n;
	uint8_t *region[CAP_POOL_REGIONS];
	size_t region_len[CAP_POOL_REGIONS];
	uint32_t nregion;
	struct cap_gz_worker *worker[CAP_POOL_REGIONS]; /* idle inflater threads */
	uint32_t nworker;
};

static struct cap_gz_worker *cap_pool_take_worker(struct cap_window_pool *p)
{
	return p->nworker ? p->worker[--p->nworker] : NULL;
}

static bool cap_pool_put_worker(struct cap_window_pool *p, struct cap_gz_worker *w)
{
	if (p->nworker == CAP_POOL_REGIONS) {
		return false;
	}
	p->worker[p->nworker++] = w;
	return true;
}

static bool cap_pool_take_region(struct cap_window_pool *p, uint8_t **region, size_t *len)
{
	if (p->nregion == 0) {
		return false;
	}
	p->nregion--;
	*region = p->region[p->nregion];
	*len = p->region_len[p->nregion];
	return true;
}

/* Keep @p region (@p used bytes written) for the next input, past its first bytes given back. */
static bool cap_pool_put_region(struct cap_window_pool *p, uint8_t *region, size_t len,
				size_t used)
{
	size_t page = sn_page_size();

	if (p->nregion == CAP_POOL_REGIONS) {
		return false;
	}
	used = SN_MIN((used + page - 1) & ~(page - 1), len);
	if (used > CAP_POOL_REGION_KEEP) {
		(void)madvise(region + CAP_POOL_REGION_KEEP, used - CAP_POOL_REGION_KEEP,
			      MADV_DONTNEED);
	}
	p->region[p->nregion] = region;
	p->region_len[p->nregion++] = len;
	return true;
}

struct cap_window_pool *cap_window_pool_new(void)
{
	return sn_xcalloc(1, sizeof(struct cap_window_pool));
}

void cap_window_pool_free(struct cap_window_pool *p)
{
	if (!p) {
		return;
	}
	for (uint32_t i = 0; i < p->n; i++) {
		free(p->win[i]);
	}
	for (uint32_t i = 0; i < p->nregion; i++) {
		munmap(p->region[i], p->region_len[i]);
	}
	for (uint32_t i = 0; i < p->nworker; i++) {
		cap_gz_worker_free(p->worker[i]);
	}
	free(p);
}

void cap_window_pool_put(struct cap_window_pool *p, uint8_t *win, size_t cap)
{
	uint32_t small = 0;

	if (!win) {
		return;
	}
	if (p->n < CAP_POOL_MAX) {
		p->win[p->n] = win;
		p->cap[p->n++] = cap;
		return;
	}
	/* full: the smallest goes */
	for (uint32_t i = 1; i < p->n; i++) {
		if (p->cap[i] < p->cap[small]) {
			small = i;
		}
	}
	if (p->cap[small] < cap) {
		free(p->win[small]);
		p->win[small] = win;
		p->cap[small] = cap;
	} else {
		free(win);
	}
}

/* A window of at least @p want bytes (*@p cap: its size): the smallest the pool holds that
 * is large enough, else a new one. */
static uint8_t *cap_window_pool_get(struct cap_window_pool *p, size_t want, size_t *cap)
{
	uint32_t best = p->n;
	uint8_t *w;

	for (uint32_t i = 0; i < p->n; i++) {
		if (p->cap[i] >= want && (best == p->n || p->cap[i] < p->cap[best])) {
			best = i;
		}
	}
	if (best == p->n) {
		*cap = want;
		return sn_xmalloc_huge(want);
	}
	w = p->win[best];
	*cap = p->cap[best];
	p->win[best] = p->win[--p->n];
	p->cap[best] = p->cap[p->n];
	return w;
}

/* A window of at least @p want bytes for @p r (*@p cap: its size). Reused windows, already
 * mapped in, matter for thousands of rotated captures read one after the other: each fresh
 * page costs a fault (about 12 µs on the development VM). */
static uint8_t *cap_window_alloc(struct cap_reader *r, size_t want, size_t *cap)
{
	if (r->pool) {
		return cap_window_pool_get(r->pool, want, cap);
	}
	*cap = want;
	return sn_xmalloc_huge(want);
}

static void cap_window_release(struct cap_reader *r, uint8_t *win, size_t cap)
{
	if (r->pool) {
		cap_window_pool_put(r->pool, win, cap);
	} else {
		free(win);
	}
}

/*
 * The window's size for a refill that needs @p want bytes from pos: larger than a record that
 * does not fit; a window that grows (several inputs) takes the rest of the file at its first
 * refill, up to win_max, since the input is then being read on (most hold only their head
 * record for a long time).
 */
static size_t cap_window_target(const struct cap_reader *r, size_t want)
{
	size_t cap = r->win_cap;

	if (want > cap) {
		return sn_huge_round(SN_MAX(want, 2 * cap), CAP_WINDOW);
	}
	if (cap < r->win_max && r->len > r->base) {
		return SN_MAX(cap, SN_MIN(r->win_max, SN_MAX(2 * cap, r->file_len - r->pos)));
	}
	return cap;
}

static void cap_window_fill(struct cap_reader *r, size_t want)
{
	size_t have = r->len - r->pos;
	size_t end, cap;

	if (!r->win) {
		/* a file opened for a merge, read for the first time: nothing held yet; a window
		 * no larger than the file (66,000 rotated files of a packet each: 250 bytes
		 * each, not a page) */
		cap = SN_MIN(r->win_cap, SN_MAX(r->file_len - r->pos, (size_t)CAP_WINDOW_MIN));
		r->win = cap_window_alloc(r, cap, &r->win_cap);
		r->buf = r->win;
	}
	if (have >= want || r->len == r->file_len) {
		return;
	}
	want = SN_MIN(want, r->file_len - r->pos);
	cap = cap_window_target(r, want);
	if (r->hooks && r->len > r->base) {
		/* the records read from this window stay valid: the rest of it goes to the other
		 * one, once nobody uses what that one held (read two refills ago); the first fill
		 * (nothing read yet) takes the window as it is */
		uint8_t *w;

		r->hooks->fence(r->hooks->ctx, r->hooks_input);
		if (r->win2_cap < cap) {
			cap_window_release(r, r->win2, r->win2_cap);
			r->win2 = cap_window_alloc(r, cap, &r->win2_cap);
		}
		memcpy(r->win2, r->buf + (r->pos - r->base), have);
		w = r->win2;
		r->win2 = r->win;
		r->win = w;
		cap = r->win2_cap;
		r->win2_cap = r->win_cap;
		r->win_cap = cap;
	} else if (cap != r->win_cap) {
		/* a record longer than the window, or a small window that grows as it is read */
		size_t got;
		uint8_t *w = cap_window_alloc(r, cap, &got);

		memcpy(w, r->buf + (r->pos - r->base), have);
		cap_window_release(r, r->win, r->win_cap);
		r->win = w;
		r->win_cap = got;	} else if (have) {
		memmove(r->win, r->buf + (r->pos - r->base), have);
	}
	r->buf = r->win;
	r->base = r->pos;
	r->prefetched = r->pos;
	end = r->base + SN_MIN(r->win_cap, r->file_len - r->base);
	if (r->len < end) {
		r->len += cap_read_at(r, r->win + (r->len - r->base), r->len, end - r->len);
	}
}

/* Reading from a buffer that holds part of the file ([base, len) of file_len bytes): @p st
 * ended at the buffer's end, not the file's (the record at pos reaches past it, SN_ETRUNC, or
 * it ends there, SN_ENOTFOUND). Then the error is cleared: the caller reads on from pos with
 * more of the file (a window refilled, a cursor on the mapping). */
static bool cap_past_buffer(struct cap_reader *r, enum sn_status st)
{
	if (r->len >= r->file_len || (st != SN_ETRUNC && st != SN_ENOTFOUND)) {
		return false;
	}
	r->err_st = SN_OK;
	memset(&r->err, 0, sizeof(r->err));
	return true;
}

/* Windowed: the next record, SN_OK; else whether the record at pos reaches past the window
 * (*more, the error cleared: cap_past_buffer()) or why reading ended. */
static enum sn_status cap_window_take(struct cap_reader *r, struct cap_record *rec, bool *more)
{
	enum sn_status st;

	cap_prefetch_ahead(r);
	st = cap_parse_next(r, rec);
	*more = cap_past_buffer(r, st);
	if (st == SN_OK) {
		rec->transient = true;
	}
	return st;
}

/* Windowed: records from pos until @p max or the batch's span; the first one read into a
 * larger window when it does not fit. */
static uint32_t cap_window_batch(struct cap_reader *r, struct cap_record *recs, uint32_t max,
				 size_t span, enum sn_status *st)
{
	uint32_t n = 0;
	size_t from = r->pos;
	size_t want = SN_MIN(CAP_WINDOW_LOW, r->win_cap / 4 + 1);
	bool more;

	*st = r->err_st;
	if (*st != SN_OK) {
		return 0;
	}
	cap_window_fill(r, want);
	while (n < max && (n == 0 || r->pos - from < span)) {
		*st = cap_window_take(r, &recs[n], &more);
		if (*st == SN_OK) {
			n++;
			continue;
		}
		if (!more) {
			break;
		}
		*st = SN_OK;
		if (n > 0) {
			break; /* the next batch moves the window on */
		}
		want = 2 * SN_MAX(want, r->len - r->pos);
		cap_window_fill(r, want);
	}
	return n;
}

bool cap_reader_read_windowed(struct cap_reader *r, size_t window)
{
	if (r->windowed) {
		if (!r->win && window) {
			r->win_cap = window; /* opened for a merge: its first window's size */
		}
		return true;
	}
	if (!cap_reader_mapped(r) || r->fd < 0) {
		return false;
	}
	r->windowed = true;
	if (!r->win) {
		/* no larger than the rest of the file, but a huge page from 256 KiB on (a fresh
		 * 4 KiB page costs about 12 us on the development VM, a 2 MiB one 0.13-0.6 ms:
		 * sn_huge_round()) */
		r->win_cap = window ? window
				    : sn_huge_round(SN_MIN((size_t)CAP_WINDOW,
							   SN_MAX(r->map_len - r->pos,
								  (size_t)CAP_WINDOW_MIN)),
						    SN_HUGE_WORTH);
		r->win_max = r->win_cap;
		r->win = sn_xmalloc_huge(r->win_cap);
		/* fresh memory about to be filled (and a reader that times its reads weighs
		 * what reading costs, not the window's first faults: eng_ways.h) */
		sn_mem_populate(r->win, r->win_cap);
	} /* else read through the mapping again since (cap_reader_read_mapped()): the same one */
	r->file_len = r->map_len;
	/* nothing read yet: the first call fills the window from pos */
	r->buf = r->win;
	r->base = r->pos;
	r->len = r->pos;
	r->prefetched = r->pos;
	return true;
}

bool cap_reader_read_mapped(struct cap_reader *r)
{
	if (!r->windowed) {
		return cap_reader_mapped(r);
	}
	if (!cap_reader_mapped(r) || r->hooks || r->path || r->io_err || r->shrank ||
	    r->replaced || r->err_st != SN_OK) {
		return false;
	}
	/* the window is kept for cap_reader_read_windowed() again; its bytes from pos are the
	 * mapping's at pos */
	r->windowed = false;
	r->buf = r->map;
	r->base = 0;
	r->len = r->map_len;
	r->prefetched = r->pos;
	r->populated = r->pos & ~(size_t)4095;
	return true;
}

size_t cap_reader_pos(const struct cap_reader *r)
{
	return r->pos;
}

bool cap_reader_window_spent(const struct cap_reader *r)
{
	/* as cap_window_batch() and cap_window_fill() decide */
	return r->windowed && r->win && r->len < r->file_len &&
	       r->len - r->pos < SN_MIN(CAP_WINDOW_LOW, r->win_cap / 4 + 1);
}

bool cap_reader_read_windowed_growing(struct cap_reader *r, size_t first, size_t max,
				      struct cap_window_pool *pool)
{
	if (!cap_reader_read_windowed(r, first)) {
		if (r->path && (r->deferred || r->gz)) {
			r->pool = pool; /* gzip: its inflater's region comes from it (cap_gz_start()) */
		}
		return false;
	}
	r->win_max = SN_MAX(first, max ? max : (size_t)CAP_WINDOW);
	r->pool = pool;
	return true;
}

/* The first window of a file opened by cap_reader_open_merged(): a page holds its header and
 * its first records, which is all that most of thousands of rotated captures hold at a time
 * (the merge reads every input's first record before it returns one). */
#define CAP_OPEN_WINDOW (4u << 10)

/*
 * cap_load() for one of several merged files: a regular file is not mapped (a mapping each
 * counts against the process's limit of them, 65,530 by default, and a mapped file cut while
 * it is read ends the process) but read with pread() in windows from the start; its first
 * CAP_OPEN_WINDOW bytes now into @p head, for its header.
 */
static enum sn_status cap_load_windowed(struct cap_reader *r, const char *path, int fd,
					uint8_t *head, struct sn_diag *diag)
{
	struct stat st;
	enum sn_status ret;

	if (fd >= 0) {
		/* the descriptor a gzip file waited with (cap_reader_resume()) */
		if (fstat(fd, &st) != 0) {
			int e = errno;

			close(fd);
			sn_diag_set(diag, e, "%s", strerror(e));
			return SN_ESYS;
		}
	} else {
		ret = cap_open_input(r, path, &fd, &st, diag);
		if (ret != SN_OK || fd < 0) {
			return ret;
		}
	}
	r->fd = fd;
	(void)cap_file_id(fd, &r->id);
	r->file_len = (size_t)st.st_size;
	r->windowed = true;
	r->win_cap = CAP_OPEN_WINDOW;
	r->win_max = CAP_WINDOW;
	r->buf = head;
	r->len = cap_read_at(r, head, 0, SN_MIN(r->win_cap, r->file_len));
	return SN_OK;
}

/*
 * A new reader of @p path, mapped or (@p windowed) read in windows from the start. A file read
 * in windows gets its first one when its first record is read: the header is parsed from a
 * buffer on the stack, and what it read is read again then (the page cache's copy). The
 * windows of thousands of rotated files merged are then allocated one after the other, not
 * each between two readers, where their memory was not reused once they were freed (1,000
 * rotated files of the benchmark capture peaked 3.7 MiB higher).
 */
static enum sn_status cap_reader_open_as(const char *path, int fd, bool windowed,
					 enum cap_gz_open gz, struct cap_window_pool *pool,
					 struct cap_reader **out, struct sn_diag *diag)
{
	struct cap_reader *r = sn_xcalloc(1, sizeof(*r));
	uint8_t head[CAP_OPEN_WINDOW];
	enum sn_status st;

	r->fd = -1;
	r->gz_open = (uint8_t)gz;
	r->pool = pool;
	st = windowed ? cap_load_windowed(r, path, fd, head, diag) : cap_load(r, path, diag);
	if (st == SN_OK && r->map) {
		/* its header read with pread(), not through the mapping: a file cut meanwhile is
		 * one too short to be a capture, not SIGBUS */
		r->buf = head;
		r->file_len = r->map_len;
		r->len = cap_read_at(r, head, 0, SN_MIN(sizeof(head), r->map_len));
	}
	if (st == SN_OK) {
		st = cap_reader_start(r, diag);
	}
	if (st != SN_OK) {
		cap_reader_free(r);
		return st;
	}
	if (r->map) {
		/* a file read through its mapping, or in windows (cap_reader_read_windowed()) */
		r->buf = r->map;
		r->len = r->map_len;
	}
	if (r->windowed) {
		/* nothing read yet but the header: the first fill reads from pos */
		r->buf = NULL;
		r->base = r->len = r->prefetched = r->pos;
	}
	*out = r;
	return SN_OK;
}

enum sn_status cap_reader_open(const char *path, struct cap_reader **out, struct sn_diag *diag)
{
	return cap_reader_open_as(path, -1, false, CAP_GZ_STREAM, NULL, out, diag);
}

/*
 * A gzip file of several merged, opened again when the merge reaches its first record
 * (cap_reader_defer()): as it was opened first if it is still the same file, in place of the
 * deferred reader @p r, which keeps its settings (release lag, hooks); else @p r's input ends
 * with the reason, a truncation at offset 0, as a file read in windows that was replaced ends.
 */
static void cap_reader_resume(struct cap_reader *r)
{
	struct cap_reader *fresh = NULL;
	struct cap_reader shell;
	struct sn_diag diag = {0};
	enum sn_status st;

	r->deferred = false;
	/* from the descriptor it waited with, if it kept one: the same file; else opened again
	 * if it still is */
	if (r->fd < 0 && !cap_reopen(r)) {
		(void)cap_end(r);
		return;
	}
	st = cap_reader_open_as(r->path, r->fd, true, r->gz_small ? CAP_GZ_WHOLE : CAP_GZ_LAZY,
				r->pool, &fresh, &diag);
	r->fd = -1; /* the new reader's now */
	if (st != SN_OK) {
		if (st == SN_ESYS) {
			r->io_err = diag.err ? diag.err : EIO; /* it could not be read */
			(void)cap_end(r);
			return;
		}
		/* the same file, and no capture any more: rewritten in place */
		sn_diag_set(&r->err, 0, "%s", diag.msg);
		(void)cap_fail(r, st, 0);
		return;
	}
	shell = *r;
	*r = *fresh;
	free(fresh);
	r->release_lag = shell.release_lag;
	r->hooks = shell.hooks;
	r->hooks_input = shell.hooks_input;
	r->pool = shell.pool;
	free(r->path);
	r->path = shell.path;
	r->gz_small = shell.gz_small;
	if (r->header_pending) {
		/* what the header said when the file was opened first, until it is read again */
		r->fmt = shell.fmt;
		r->snaplen = shell.snaplen;
	}
	free(shell.heap);
	free(shell.ifaces);
}

/* The header of a gzip file opened again (CAP_GZ_LAZY), read when its first record is: an
 * error in it (the file was rewritten in place) ends the input at offset 0. */
static void cap_reader_late_header(struct cap_reader *r)
{
	struct sn_diag diag = {0};
	enum sn_status st = SN_EPARSE;

	r->header_pending = false;
	(void)cap_gz_wait(r, 1u << 20);
	if (r->gz_broken && r->len < CAP_PCAP_HDR_LEN) {
		sn_diag_set(&diag, 0, "corrupt gzip stream before any capture header");
	} else {
		st = cap_reader_header(r, &diag);
	}
	if (st != SN_OK) {
		sn_diag_set(&r->err, diag.err, "%s", diag.msg);
		(void)cap_fail(r, st, 0);
	}
}

/* Before a record is read: a gzip file merged that waits is opened again, its header read. */
static void cap_reader_ready(struct cap_reader *r)
{
	if (r->deferred) {
		cap_reader_resume(r);
	}
	if (r->header_pending && r->err_st == SN_OK) {
		cap_reader_late_header(r);
	}
}

void cap_reader_start_early(struct cap_reader *r)
{
	if (r->deferred) {
		cap_reader_resume(r);
	}
}

/*
 * A gzip file of several merged, its first bytes inflated into r->heap and its header read
 * (CAP_GZ_PROBE): read its first record's time from them, then let go of everything but its
 * path and identity until the merge reaches that record (cap_merge.c). Thousands of rotated
 * captures are merged in time order, one or two at a time: each read on at once took an
 * inflater thread, a descriptor and up to CAP_GZ_AHEAD of inflated bytes for the whole run
 * (1,000 files of 130 KiB: 158 MiB; five of 100 MiB at two cores: 616 MiB, as nothing was
 * given back behind the reader there). A file whose first record is not within those bytes
 * is opened again at once and read on as before.
 */
/* Forget what parsing the probe's bytes left: the header, interfaces, errors. */
static void cap_reader_unprobe(struct cap_reader *r)
{
	free(r->heap);
	r->heap = NULL;
	r->buf = NULL;
	r->len = r->pos = 0;
	free(r->ifaces);
	r->ifaces = NULL;
	r->iface_count = r->iface_cap = 0;
	r->last_ts_ns = 0;
	r->state_changed = false;
	r->err_st = SN_OK;
	memset(&r->err, 0, sizeof(r->err));
	r->gz_broken = false;
}

/*
 * The first record of a gzip file merged that lies past what its first page inflates to (a
 * large packet, many pcapng blocks first): look for it in what the first CAP_GZ_PROBE_IN
 * bytes of the file inflate to, at most CAP_GZ_PROBE_BIG. True with *@p rec read from them.
 */
#define CAP_GZ_PROBE_IN  (256u << 10)
#define CAP_GZ_PROBE_BIG (4u << 20)

static bool cap_gz_probe_more(struct cap_reader *r, struct cap_record *rec)
{
	struct sn_diag diag = {0};
	uint8_t *in, *plain;
	size_t got, n;
	bool broken;
	int err = 0;
	int fd = r->fd >= 0 ? r->fd : cap_open_same(r, &err);

	if (fd < 0) {
		return false;
	}
	in = sn_xmalloc(CAP_GZ_PROBE_IN);
	got = cap_pread_start(fd, in, CAP_GZ_PROBE_IN);
	if (fd != r->fd) {
		close(fd);
	}
	(void)cap_inflate(in, got, got < CAP_GZ_PROBE_IN, CAP_GZ_PROBE_BIG, &plain, &n, &broken);
	free(in);
	cap_reader_unprobe(r);
	r->heap = plain;
	r->buf = plain;
	r->len = n;
	return cap_reader_header(r, &diag) == SN_OK && cap_parse_next(r, rec) == SN_OK;
}

static void cap_reader_defer(struct cap_reader *r)
{
	struct cap_record rec;
	bool first = cap_parse_next(r, &rec) == SN_OK;

	if (!first && !r->gz_small) {
		first = cap_gz_probe_more(r, &rec);
	}
	cap_reader_unprobe(r);
	r->gz_probed = false;
	r->deferred = true;
	r->first_ts = first ? rec.ts_ns : 0;
	if (!first) {
		cap_reader_resume(r);
	}
}

enum sn_status cap_reader_open_merged(const char *path, bool keep_fd, struct cap_reader **out,
				      struct sn_diag *diag)
{
	struct cap_reader *r;
	enum sn_status st = cap_reader_open_as(path, -1, true, CAP_GZ_PROBE, NULL, &r, diag);

	if (st != SN_OK) {
		return st;
	}
	if (r->gz_probed) {
		size_t n = strlen(path) + 1;

		/* it waits with its descriptor, as a file read in windows keeps its own, or
		 * without, to be opened again by path */
		r->path = sn_xmalloc(n);
		memcpy(r->path, path, n);
		if (!keep_fd) {
			cap_reader_release_fd(r);
		}
		cap_reader_defer(r);
	} else if (r->windowed && r->fd >= 0) {
		/* to be opened again for each later read (cap_read_at()) once it gives its
		 * descriptor up, now or later (cap_reader_release_fd()) */
		size_t n = strlen(path) + 1;

		r->path = sn_xmalloc(n);
		memcpy(r->path, path, n);
		if (!keep_fd) {
			cap_reader_release_fd(r);
		}
	}
	*out = r;
	return SN_OK;
}

bool cap_reader_release_fd(struct cap_reader *r)
{
	if (!r->path || r->fd < 0) {
		return false;
	}
	close(r->fd);
	r->fd = -1;
	return true;
}

bool cap_reader_reopenable(const struct cap_reader *r)
{
	return r->path != NULL;
}

bool cap_reader_holds_fd(const struct cap_reader *r)
{
	return r->fd >= 0 || (r->gz && r->gz->fd >= 0);
}

void cap_reader_set_fence(struct cap_reader *r, const struct cap_window_hooks *hooks,
			  size_t input)
{
	r->hooks = hooks;
	r->hooks_input = input;
}

void cap_reader_end_input(struct cap_reader *r)
{
	if (r->deferred) {
		r->deferred = false; /* never read: nothing to give back but its descriptor */
		if (r->fd >= 0) {
			close(r->fd);
			r->fd = -1;
		}
	}
	if (r->err_st == SN_OK) {
		r->err_st = SN_ENOTFOUND; /* every later call says it ended (nothing to read from) */
	}
	if (!r->windowed) {
		if (r->path && (r->gz || r->heap)) {
			/* gzip opened for a merge: its records may be in use still */
			if (r->hooks && r->hooks->retire_stream) {
				r->hooks->retire_stream(r->hooks->ctx, r->hooks_input, r);
			} else {
				cap_reader_end_stream(r);
			}
		}
		return;
	}
	if (r->win && r->hooks) {
		uint8_t *win[2] = {r->win, r->win2};
		size_t cap[2] = {r->win_cap, r->win2_cap};

		r->hooks->retire(r->hooks->ctx, r->hooks_input, win, cap);
	} else if (r->win) {
		cap_window_release(r, r->win, r->win_cap);
		cap_window_release(r, r->win2, r->win2_cap);
	}
	r->win = r->win2 = NULL;
	r->win_cap = r->win2_cap = 0;
	r->buf = NULL; /* nothing held any more */
	r->base = r->len = r->pos;
}

void cap_reader_end_stream(struct cap_reader *r)
{
	if (r->gz) {
		cap_gz_free(r->gz, r->pool);
		r->gz = NULL;
	}
	free(r->heap);
	r->heap = NULL;
	r->buf = NULL;
	r->len = r->pos;
}

bool cap_reader_first_ts(const struct cap_reader *r, int64_t *ts)
{
	if (!r->deferred) {
		return false;
	}
	*ts = r->first_ts;
	return true;
}

/* cap_reader_next() without giving anything back first. */
static enum sn_status cap_reader_take(struct cap_reader *r, struct cap_record *rec)
{
	enum sn_status st;

	if (r->err_st != SN_OK) {
		return r->err_st;
	}
	if (r->windowed) {
		uint32_t n = cap_window_batch(r, rec, 1, 0, &st);

		return n ? SN_OK : st;
	}
	if (!r->gz) {
		cap_populate_ahead(r);
		cap_prefetch_ahead(r);
		st = cap_parse_next(r, rec);
		if (r->heap && r->path) {
			/* a gzip file merged, inflated whole: its bytes go when its input ends */
			rec->transient = true;
		}
		return st;
	}
	for (;;) {
		bool final = r->gz_final;

		if (!final && r->len - r->pos < CAP_GZ_BLOCK) {
			/* stay a block ahead of the parser, so it rarely waits */
			final = cap_gz_wait(r, r->pos + CAP_GZ_BLOCK);
		}
		/* the bytes arrived from the input thread, in its core's cache or in memory */
		cap_prefetch_ahead(r);
		st = cap_parse_next(r, rec);
		if (st == SN_OK) {
			rec->transient = true;
			return st;
		}
		if (final || st == SN_EPARSE) {
			return st;
		}
		/* the end of what is inflated so far, not of the input: wait for more */
		r->err_st = SN_OK;
		memset(&r->err, 0, sizeof(r->err));
		(void)cap_gz_wait(r, r->len + CAP_GZ_BLOCK);
	}
}

enum sn_status cap_reader_next(struct cap_reader *r, struct cap_record *rec)
{
	cap_reader_ready(r);
	if (r->err_st != SN_OK) {
		return r->err_st;
	}
	cap_release_behind(r);
	return cap_reader_take(r, rec);
}

/*
 * A batch ends once it spans this much input. Its records stay in place until the next call
 * (mapped, or in the input thread's buffer for gzip and pipes), so this bounds what a batch
 * of large records holds: a thousand records of 200 bytes are 200 KB, a thousand of 64 KiB
 * would be 64 MiB.
 */
#define CAP_BATCH_SPAN (1u << 20)

uint32_t cap_reader_next_batch(struct cap_reader *r, struct cap_record *recs, uint32_t max,
			       enum sn_status *st)
{
	uint32_t n = 0;
	size_t from;

	cap_reader_ready(r);
	from = r->pos;
	if (r->windowed) {
		return cap_window_batch(r, recs, max, CAP_BATCH_SPAN, st);
	}
	*st = r->err_st;
	if (*st != SN_OK) {
		return 0;
	}
	/* once for the batch, behind its first record: every record of it stays in place */
	cap_release_behind(r);
	while (n < max && (n == 0 || r->pos - from < CAP_BATCH_SPAN) &&
	       (*st = cap_reader_take(r, &recs[n])) == SN_OK) {
		n++;
	}
	return n;
}

const struct sn_diag *cap_reader_error(const struct cap_reader *r)
{
	return &r->err;
}

const char *cap_reader_format(const struct cap_reader *r)
{
	if (r->fmt == CAP_FMT_PCAP) {
		return r->gzip ? "pcap+gzip" : "pcap";
	}
	return r->gzip ? "pcapng+gzip" : "pcapng";
}

uint32_t cap_reader_snaplen(const struct cap_reader *r)
{
	return r->snaplen;
}

void cap_reader_set_release_lag(struct cap_reader *r, size_t bytes)
{
	r->release_lag = bytes;
}

void cap_reader_free(struct cap_reader *r)
{
	if (!r) {
		return;
	}
	if (r->gz) {
		cap_gz_free(r->gz, NULL);
	}
	if (r->map) {
		munmap(r->map, r->map_len);
	}
	if (r->fd >= 0) {
		close(r->fd);
	}
	free(r->win);
	free(r->win2);
	free(r->heap);
	free(r->ifaces);
	free(r->path);
	free(r);
}

/* ---------------------------------------------------------------- range reading (cursors) */

/*
 * A cursor reads the records of one byte range of a mapped input, so that several threads can
 * read one file at once. It is a private copy of the reader's parsing state (byte order,
 * pcap header fields, the pcapng interface table and the last timestamp for SPBs) over the
 * same bytes; it never maps, populates or releases anything (cap_reader_advise() does that).
 *
 * A range's first record is found by resynchronisation: the first offset at or after the
 * range's start where CAP_SYNC_CHAIN plausible record (pcap) or block (pcapng) headers follow
 * each other, or the chain reaches the end of the input. A plausible chain can still be a
 * false one (a capture inside a capture); callers verify each range against the end of the
 * range before it (cap_cursor_pos()) and read it again from there when they differ, so the
 * records read are always the ones a single sequential reader reads.
 */
#define CAP_SYNC_CHAIN	   8u
#define CAP_SYNC_MAX_INCL  (256u * 1024u)

struct cap_cursor {
	struct cap_reader rd; /* copy; map and heap are NULL, ifaces is owned */
	size_t stop;          /* no record starting at or after this offset is returned */
	bool ts_known;        /* rd.last_ts_ns is the real previous timestamp */
	bool needs_prev;      /* an SPB came before any timestamp was known */
	bool changed;         /* an SHB or IDB was read: the state differs from the start */
	/* buffers of the cursor's own, read past the one filled (cap_cursor_spill()), kept for
	 * the records in them until the next fill */
	uint8_t **spills;
	uint32_t nspills, spill_cap;
};

#define CAP_SPILL_TAIL (64u << 10) /* a spill's bytes past the range's stop */
#define CAP_SPILL_MAX  (2u << 20)  /* and before it, at most */

static void cap_cursor_unbuffer(struct cap_reader *r);
static void cap_cursor_drop_spills(struct cap_cursor *c);
static bool cap_cursor_past_buffer(struct cap_cursor *c, enum sn_status st);

static void cap_cursor_take_state(struct cap_cursor *c, const struct cap_reader *from)
{
	struct cap_iface *own = c->rd.ifaces;
	uint32_t own_cap = c->rd.iface_cap;

	c->rd = *from;
	c->rd.map = NULL;
	c->rd.map_len = 0;
	c->rd.heap = NULL;
	/* the whole input, never another cursor's buffer */
	if (from->whole) {
		c->rd.buf = from->whole;
		c->rd.len = from->file_len;
		c->rd.whole = NULL;
	}
	c->rd.base = 0;
	c->rd.file_len = c->rd.len;
	if (own_cap < from->iface_count) {
		own_cap = from->iface_count;
		own = sn_xrealloc(own, own_cap * sizeof(*own));
	}
	if (from->iface_count) {
		memcpy(own, from->ifaces, from->iface_count * sizeof(*own));
	}
	c->rd.ifaces = own;
	c->rd.iface_cap = own_cap;
	c->rd.state_changed = false;
	c->rd.err_st = SN_OK;
	memset(&c->rd.err, 0, sizeof(c->rd.err));
}

bool cap_reader_mapped(const struct cap_reader *r)
{
	/* gzip input is never read from the mapping: the compressed file may be mapped while
	 * its records point into the inflated buffer */
	return r->map != NULL && !r->gzip;
}

size_t cap_reader_mapped_length(const struct cap_reader *r)
{
	return cap_reader_mapped(r) ? r->map_len : 0;
}

const uint8_t *cap_reader_map(const struct cap_reader *r)
{
	return cap_reader_mapped(r) ? (const uint8_t *)r->map : NULL;
}

struct cap_cursor *cap_reader_split_begin(const struct cap_reader *r, size_t *first,
					  size_t *end)
{
	struct cap_cursor *c;

	if (!cap_reader_mapped(r) || r->windowed || r->err_st != SN_OK) {
		return NULL;
	}
	c = sn_xcalloc(1, sizeof(*c));
	cap_cursor_take_state(c, r);
	c->stop = r->len;
	c->ts_known = true;
	if (r->fmt == CAP_FMT_PCAPNG) {
		/* read the leading blocks (SHB, IDBs, ...) up to the first packet block, with
		 * pread() where the reader has its descriptor (the mapping's pages are lost if
		 * the file is cut under the reader: SIGBUS) */
		struct cap_record rec;
		struct cap_cursor peek = {0};
		uint8_t *head = sn_xmalloc(CAP_SPILL_TAIL);
		enum sn_status st;

		cap_cursor_take_state(&peek, &c->rd);
		peek.stop = r->len;
		(void)cap_cursor_fill(&peek, head, peek.rd.pos, CAP_SPILL_TAIL);
		do {
			st = cap_pcapng_next(&peek.rd, &rec);
		} while (cap_cursor_past_buffer(&peek, st));
		cap_cursor_unbuffer(&peek.rd);
		cap_cursor_drop_spills(&peek);
		free(peek.spills);
		free(head);
		if (st == SN_OK) {
			peek.rd.pos = rec.offset;
			peek.rd.last_ts_ns = r->last_ts_ns;
			peek.rd.state_changed = false;
			free(c->rd.ifaces);
			c->rd = peek.rd;
		} else {
			/* nothing to split: an empty or broken file is read the usual way */
			free(peek.rd.ifaces);
			free(c->rd.ifaces);
			free(c);
			return NULL;
		}
	}
	*first = c->rd.pos;
	*end = r->len;
	return c;
}

struct cap_cursor *cap_cursor_new(const struct cap_cursor *state)
{
	struct cap_cursor *c = sn_xcalloc(1, sizeof(*c));

	cap_cursor_copy_state(c, state);
	return c;
}

void cap_cursor_copy_state(struct cap_cursor *dst, const struct cap_cursor *src)
{
	cap_cursor_take_state(dst, &src->rd);
	dst->rd.pos = src->rd.pos;
	dst->stop = src->stop;
	dst->ts_known = src->ts_known;
	dst->needs_prev = false;
	dst->changed = false;
}

/*
 * A pcap record header at @p off that could be real; *next = the offset after its record.
 * Lengths within bounds (on-wire length too: a header read 4 bytes early takes MAC address
 * bytes for it), and a timestamp within a day of the previous one in the chain (@p prev_sec,
 * or -1 for the first).
 */
static bool cap_pcap_plausible(const struct cap_reader *r, size_t off, int64_t prev_sec,
			       int64_t *sec, size_t *next, bool *cut)
{
	const uint8_t *h = r->buf + (off - r->base);
	uint32_t frac, incl, orig;
	uint32_t max_len = SN_MAX(r->snaplen, CAP_SYNC_MAX_INCL);

	*cut = false;
	if (r->len - off < r->rec_hdr_len) {
		*cut = off + r->rec_hdr_len <= r->file_len;
		return false;
	}
	*sec = cap_rd32(r, h);
	frac = cap_rd32(r, h + 4);
	incl = cap_rd32(r, h + 8);
	orig = cap_rd32(r, h + 12);
	if (frac >= (r->pcap_ns ? 1000000000u : 1000000u) || incl == 0 || incl > max_len ||
	    orig < incl || orig > max_len ||
	    (prev_sec >= 0 && (*sec > prev_sec + 86400 || *sec < prev_sec - 86400))) {
		return false;
	}
	if (r->len - off - r->rec_hdr_len < incl) {
		/* a record past the file's end is no record (as the whole mapping told) */
		*cut = off + r->rec_hdr_len + incl <= r->file_len;
		return false;
	}
	*next = off + r->rec_hdr_len + incl;
	return true;
}

/* A pcapng block at @p off that could be real (aligned, known type, both lengths agree). */
static bool cap_pcapng_plausible(const struct cap_reader *r, size_t off, size_t *next, bool *cut)
{
	const uint8_t *h = r->buf + (off - r->base);
	uint32_t type, total;

	*cut = false;
	if ((off & 3) != 0) {
		return false;
	}
	if (r->len - off < 12) {
		*cut = off + 12 <= r->file_len;
		return false;
	}
	type = cap_rd32(r, h);
	total = cap_rd32(r, h + 4);
	switch (type) {
	case CAP_PCAPNG_EPB:
	case CAP_PCAPNG_SPB:
	case CAP_PCAPNG_IDB:
	case CAP_PCAPNG_OPB:
	case 4u:  /* NRB */
	case 5u:  /* ISB */
	case 10u: /* DSB */
		break;
	default:
		return false;
	}
	if (total < 12 || (total & 3) != 0 || total > CAP_MAX_BLOCK_LEN) {
		return false;
	}
	/* an EPB's fields before its data, when they are here */
	if (type == CAP_PCAPNG_EPB &&
	    (total < 32 || (r->len - off >= 24 && (cap_rd32(r, h + 8) >= r->iface_count ||
						   cap_rd32(r, h + 20) > total - 32)))) {
		return false;
	}
	if (r->len - off < total) {
		*cut = off + total <= r->file_len;
		return false;
	}
	if (cap_rd32(r, h + total - 4) != total) {
		return false; /* (an EPB's fields were checked above: total >= 32 bytes are here) */
	}
	*next = off + total;
	return true;
}

/* Plausible headers that follow each other from @p off in what @p r holds: how many (at most
 * CAP_SYNC_CHAIN); *end = where the chain stopped, and *cut whether it stopped for want of
 * bytes (a plausible header whose record or block reaches past what @p r holds, or the end of
 * what it holds), when only the bytes past could tell. */
static uint32_t cap_sync_chain(const struct cap_reader *r, size_t off, size_t *end, bool *cut)
{
	size_t p = off;
	uint32_t n = 0;
	int64_t sec = -1;

	*cut = false;
	while (n < CAP_SYNC_CHAIN) {
		size_t next;
		bool ok;

		if (p >= r->len) {
			*cut = p < r->file_len;
			break;
		}
		ok = r->fmt == CAP_FMT_PCAP ? cap_pcap_plausible(r, p, sec, &sec, &next, cut)
					    : cap_pcapng_plausible(r, p, &next, cut);
		if (!ok) {
			break;
		}
		p = next;
		n++;
	}
	*end = p;
	return n;
}

enum sn_status cap_cursor_resync(const struct cap_cursor *c, size_t from, size_t limit,
				 size_t *at)
{
	const struct cap_reader *r = &c->rd;

	limit = SN_MIN(limit, r->file_len);
	if (from < r->base) {
		return SN_ENOTFOUND; /* a buffer that starts after from: not known here */
	}
	for (size_t off = from; off < limit; off++) {
		size_t p;
		uint32_t n;
		bool cut;

		if (off >= r->len) {
			return SN_ENOTFOUND; /* past the buffer (below) */
		}
		n = cap_sync_chain(r, off, &p, &cut);
		if (n < CAP_SYNC_CHAIN && cut && r->len < r->file_len) {
			/* the chain runs past the buffer's end: not known from the buffer. Followed
			 * in the mapping before, whose pages are lost when the file is cut under the
			 * reader (SIGBUS); the caller reads the range again from where the range
			 * before it ended instead */
			return SN_ENOTFOUND;
		}
		if (n == CAP_SYNC_CHAIN || (n > 0 && p == r->file_len)) {
			*at = off;
			return SN_OK;
		}
	}
	return SN_ENOTFOUND;
}

/* A cursor reading from a buffer reads from the mapping from now on. */
static void cap_cursor_unbuffer(struct cap_reader *r)
{
	if (r->whole) {
		r->buf = r->whole;
		r->whole = NULL;
		r->base = 0;
		r->len = r->file_len;
	}
}

/* A cursor reading from a buffer reads @p buf, the file's bytes [@p off, @p off + @p got),
 * from now on. */
static void cap_cursor_view(struct cap_reader *r, const uint8_t *buf, size_t off, size_t got)
{
	r->buf = buf;
	r->base = off;
	r->len = off + got;
	r->prefetched = 0;
}

static void cap_cursor_drop_spills(struct cap_cursor *c)
{
	for (uint32_t i = 0; i < c->nspills; i++) {
		free(c->spills[i]);
	}
	c->nspills = 0;
}

/*
 * The record at pos reaches past the bytes the cursor holds: read from pos into a new buffer
 * of the cursor's own, up to the range's stop and CAP_SPILL_TAIL past it (at most
 * CAP_SPILL_MAX before it), and at least twice what was left, so that a long record takes a
 * few spills at most. The buffers read before stay until the next fill: records point into
 * them.
 */
static void cap_cursor_spill(struct cap_cursor *c)
{
	struct cap_reader *r = &c->rd;
	size_t have = r->len > r->pos ? r->len - r->pos : 0;
	size_t want = c->stop > r->pos ? SN_MIN(c->stop - r->pos, (size_t)CAP_SPILL_MAX) : 0;
	uint8_t *b;

	want = SN_MIN(SN_MAX(want + CAP_SPILL_TAIL, 2 * have), r->file_len - r->pos);
	if (c->nspills && r->buf == c->spills[c->nspills - 1] && r->base == r->pos) {
		/* nothing read from the last spill yet (a record longer than it): replaced */
		free(c->spills[--c->nspills]);
	}
	if (c->nspills == c->spill_cap) {
		c->spill_cap = c->spill_cap ? 2 * c->spill_cap : 4;
		c->spills = sn_xrealloc(c->spills, c->spill_cap * sizeof(*c->spills));
	}
	b = sn_xmalloc(SN_MAX(want, (size_t)1));
	c->spills[c->nspills++] = b;
	cap_cursor_view(r, b, r->pos, cap_read_at(r, b, r->pos, want));
}

/* The record at pos reaches past the cursor's buffer (SN_ETRUNC, or SN_ENOTFOUND at its end,
 * before the input's end): the error cleared, it and the rest are read into a spill. */
static bool cap_cursor_past_buffer(struct cap_cursor *c, enum sn_status st)
{
	if (!c->rd.whole || !cap_past_buffer(&c->rd, st)) {
		return false;
	}
	cap_cursor_spill(c);
	return true;
}

size_t cap_cursor_fill(struct cap_cursor *c, uint8_t *buf, size_t off, size_t len)
{
	struct cap_reader *r = &c->rd;
	size_t got;

	cap_cursor_unbuffer(r);
	cap_cursor_drop_spills(c);
	if (r->fd < 0) {
		return 0;
	}
	off = SN_MIN(off, r->file_len);
	got = cap_read_at(r, buf, off, SN_MIN(len, r->file_len - off));
	r->whole = r->buf;
	cap_cursor_view(r, buf, off, got);
	return got;
}

void cap_cursor_seek(struct cap_cursor *c, size_t start, size_t stop, bool speculative)
{
	if (start > c->rd.file_len && c->rd.whole && (c->rd.shrank || c->rd.io_err)) {
		/* the range before read on from its own bytes, read before the file shrank: the
		 * input ends where that range ended, as it would for one reader */
		c->rd.file_len = start;
	}
	start = SN_MIN(start, c->rd.file_len);
	if (c->rd.whole && (start < c->rd.base || start > c->rd.len)) {
		/* outside the buffer: nothing held there, read into a spill at the first record */
		cap_cursor_view(&c->rd, c->rd.buf, start, 0);
	}
	c->rd.pos = start;
	c->stop = stop;
	c->rd.prefetched = 0;
	c->rd.err_st = SN_OK;
	c->needs_prev = false;
	c->changed = false;
	c->rd.state_changed = false;
	if (speculative) {
		c->ts_known = false;
	}
}

enum sn_status cap_cursor_next(struct cap_cursor *c, struct cap_record *rec)
{
	struct cap_reader *r = &c->rd;
	enum sn_status st;

	if (r->err_st != SN_OK) {
		return r->err_st;
	}
	if (r->pos >= c->stop && r->pos < r->file_len) {
		if (r->fmt == CAP_FMT_PCAPNG && !c->ts_known) {
			c->needs_prev = true; /* as below */
		}
		return SN_ENOTFOUND;
	}
	cap_prefetch_ahead(r);
	if (r->fmt == CAP_FMT_PCAP) {
		st = cap_pcap_next(r, rec);
		while (cap_cursor_past_buffer(c, st)) {
			st = cap_pcap_next(r, rec);
		}
		rec->transient = r->whole != NULL;
		return st;
	}
	for (;;) {
		st = cap_pcapng_next(r, rec);
		if (r->state_changed) {
			c->changed = true;
		}
		if (cap_cursor_past_buffer(c, st)) {
			continue;
		}
		rec->transient = r->whole != NULL;
		if (st == SN_OK && rec->offset >= c->stop) {
			/* only non-packet blocks before the stop: the packet belongs to the next range */
			r->pos = rec->offset;
			st = SN_ENOTFOUND;
		}
		if (st != SN_OK) {
			if (st == SN_ENOTFOUND && !c->ts_known) {
				/* a speculative range without a packet timestamp ends with an unknown
				 * one, which an SPB in the next range would inherit */
				c->needs_prev = true;
			}
			return st;
		}
		if (cap_rd32(r, r->buf + (rec->offset - r->base)) == CAP_PCAPNG_SPB) {
			if (!c->ts_known) {
				c->needs_prev = true;
			}
		} else {
			c->ts_known = true;
		}
		return SN_OK;
	}
}

size_t cap_cursor_pos(const struct cap_cursor *c)
{
	return c->rd.pos;
}

bool cap_cursor_needs_prev(const struct cap_cursor *c)
{
	return c->needs_prev;
}

bool cap_cursor_changed(const struct cap_cursor *c)
{
	return c->changed;
}

const struct sn_diag *cap_cursor_error(const struct cap_cursor *c)
{
	return &c->rd.err;
}

void cap_cursor_free(struct cap_cursor *c)
{
	if (!c) {
		return;
	}
	cap_cursor_drop_spills(c);
	free(c->spills);
	free(c->rd.ifaces);
	free(c);
}

bool cap_reader_transient(const struct cap_reader *r)
{
	return r->gz != NULL;
}

/* 2 MiB: the kernel maps a page-cache folio of this size with one huge-page entry where the
 * mapping is aligned to it (it places the mapping of a file this large so), and giving back
 * part of one first splits the entry into 512 (a page table allocated and filled, then
 * cleared). Giving back at page granularity split 23-24 entries of c5k a run in the sharded
 * reader (02737b4) and 58 in the one-reader path (6b4e054), each /proc/vmstat thp_split_pmd;
 * in whole blocks, none. */
#define CAP_GIVE_BLOCK (2u << 20)

size_t cap_reader_release_floor(const struct cap_reader *r, size_t off)
{
	/* gzip input gives back its inflated (anonymous) buffer, in huge pages as well */
	return off & ~((cap_reader_mapped(r) || r->gz ? (size_t)CAP_GIVE_BLOCK : sn_page_size()) -
		       1);
}

bool cap_reader_lease(const struct cap_reader *r)
{
	struct stat st;

	if (!cap_reader_mapped(r) || r->fd < 0 || r->windowed) {
		return false;
	}
	/* a lease's break is signalled to the descriptor's owner, which the lease makes this
	 * process, with SIGIO, whose default action ends it: the signal is SIGURG instead
	 * (ignored unless handled) until the owner is cleared, after which none is sent */
	if (fcntl(r->fd, F_SETSIG, SIGURG) != 0 || fcntl(r->fd, F_SETLEASE, F_RDLCK) != 0) {
		return false;
	}
	(void)fcntl(r->fd, F_SETOWN, 0);
	/* cut before the lease: its lost pages would be read */
	if (fstat(r->fd, &st) != 0 || st.st_size < 0 || (size_t)st.st_size < r->map_len) {
		cap_reader_unlease(r);
		return false;
	}
	return true;
}

bool cap_reader_lease_wanted(const struct cap_reader *r)
{
	/* F_UNLCK while a break is pending (or when none is held) */
	return fcntl(r->fd, F_GETLEASE) != F_RDLCK;
}

void cap_reader_unlease(const struct cap_reader *r)
{
	(void)fcntl(r->fd, F_SETLEASE, F_UNLCK);
}

void cap_reader_advise(const struct cap_reader *r, size_t off, size_t len, bool need)
{
	size_t page = sn_page_size();
	uint8_t *base = r->gz ? r->gz->region : (uint8_t *)r->map;
	size_t limit = r->gz ? r->len : r->map_len;
	size_t lo, hi;

	if (!base || off >= limit || (need && r->gz)) {
		return;
	}
	len = SN_MIN(len, limit - off);
	if (need) {
		lo = off & ~(page - 1);
		hi = off + len;
		(void)madvise(base + lo, hi - lo, MADV_POPULATE_READ);
	} else {
		/* whole pages inside the range only: the pages at its edges may hold neighbours */
		lo = (off + page - 1) & ~(page - 1);
		hi = (off + len) & ~(page - 1);
		if (hi > lo) {
			(void)madvise(base + lo, hi - lo, MADV_DONTNEED);
		}
	}
}
