/*
 * cap_reader.h - capture file input: pcap (both byte orders, micro- and nanosecond),
 * pcapng (SHB, IDB, EPB, SPB, OPB; several interfaces and sections; both byte orders),
 * either of them gzip-compressed, from a path or from standard input ("-").
 *
 * A reader yields records in file order. cap_merge yields the records of several readers
 * in timestamp order (stable: ties keep the order of the files on the command line).
 */
#ifndef SIPNAB_CAP_READER_H
#define SIPNAB_CAP_READER_H

#include "sipnab/sn_base.h"

/* Link types we decode (LINKTYPE_* numbers of the pcap/pcapng specifications). */
enum cap_linktype {
	CAP_LINK_NULL = 0,      /* BSD loopback, host-order 4-byte family */
	CAP_LINK_ETHERNET = 1,
	CAP_LINK_RAW = 101,     /* raw IPv4 or IPv6 */
	CAP_LINK_LOOP = 108,    /* OpenBSD loopback, network-order family */
	CAP_LINK_LINUX_SLL = 113,
	CAP_LINK_IPV4 = 228,
	CAP_LINK_IPV6 = 229,
	CAP_LINK_LINUX_SLL2 = 276,
};

/* One captured packet. data is valid until the next cap_reader_next() on the same reader. */
struct cap_record {
	int64_t ts_ns;       /* capture time, nanoseconds since the epoch */
	uint32_t caplen;     /* bytes present at data */
	uint32_t origlen;    /* bytes on the wire (caplen < origlen: cut by the snap length) */
	uint32_t linktype;   /* enum cap_linktype or any other LINKTYPE_ value */
	uint32_t ifindex;    /* pcapng interface id; 0 for pcap */
	uint32_t file_index; /* which input (cap_merge), else 0 */
	bool transient;      /* the bytes are given back once the record is analysed (streamed
			      * gzip input, a file read in windows): whoever keeps them must copy
			      * them, or refer to the file's mapping (cap_reader_map()) */
	uint8_t data_at;     /* data starts this many bytes after offset in the input (the
			      * record or block header), set by the readers; sits in padding */
	uint64_t offset;     /* byte offset of the record in the (decompressed) input */
	const uint8_t *data; /* caplen bytes; borrowed */
};

struct cap_reader;

/**
 * Open a capture file. Detects gzip by its magic and inflates it with zlib.
 * @param path a file path, or "-" for standard input
 * @param out receives the reader
 * @param diag receives the reason on failure (may be NULL)
 * @return SN_OK; SN_ESYS when the file cannot be opened or read; SN_EPARSE when it is not a
 *         pcap or pcapng file (or a corrupt gzip stream before any capture header).
 */
enum sn_status cap_reader_open(const char *path, struct cap_reader **out, struct sn_diag *diag);
/**
 * cap_reader_open() for one of several files to be merged (cap_merge_new()): a regular,
 * uncompressed file is never mapped; it is read with pread() in windows of its own from the
 * start (cap_reader_read_windowed_growing(); the first, a page unless set there, comes with the
 * first record), so its records are transient, and a file cut while it is read ends its
 * input, a truncation at the cut record. A gzip file waits until the merge reaches it
 * (cap_reader_first_ts()); a pipe is opened as cap_reader_open() opens it.
 * @param keep_fd keep the file open; false, for files merged past the descriptors the process
 *        may keep open: the file is opened again by @p path for each window read and closed
 *        after it, and its input ends, with the reason, if @p path then names another file
 *        (a capture rotated by renaming, or removed) or cannot be opened
 */
enum sn_status cap_reader_open_merged(const char *path, bool keep_fd, struct cap_reader **out,
				      struct sn_diag *diag);
/**
 * A gzip file opened by cap_reader_open_merged() is not read on at once: only what its first
 * page inflates to is read then, for its header and the time of its first record, and it
 * holds nothing (no descriptor, thread or buffer) until its first record is read, when it is
 * opened again by its path. Its input ends then, with the reason, if the path names another
 * file by then or none (a truncation at offset 0). A file whose first record lies past
 * those bytes is read on at once.
 * @return whether @p r waits so; *@p ts is then its first record's time (cap_merge.c merges
 *         it by that time until it reads it)
 */
bool cap_reader_first_ts(const struct cap_reader *r, int64_t *ts);
/**
 * Open a gzip file that waits (cap_reader_first_ts()) now, ahead of its first record: its
 * inflater runs while other inputs are read (cap_merge.c starts the next file to be reached
 * so). No-op for any other reader.
 */
void cap_reader_start_early(struct cap_reader *r);
/**
 * Give up the descriptor of a file opened by cap_reader_open_merged() (with keep_fd): from now
 * on it is opened again for each window read, as without keep_fd.
 * @return whether a descriptor was closed (false for any other reader)
 */
bool cap_reader_release_fd(struct cap_reader *r);
/** @p r is a file opened by cap_reader_open_merged() that is read by opening it again, or
 *  can be (cap_reader_release_fd()). */
bool cap_reader_reopenable(const struct cap_reader *r);
/** @p r holds a descriptor open now: a file kept open, gzip input or a pipe. */
bool cap_reader_holds_fd(const struct cap_reader *r);

/**
 * Next record.
 * @return SN_OK with *rec filled; SN_ENOTFOUND at the clean end of input; SN_ETRUNC when the
 *         input ends inside a record or block header (cap_reader_error() tells the offset);
 *         SN_EPARSE when a record or block header is corrupt (impossible length) and reading
 *         cannot continue (offset likewise). After ETRUNC/EPARSE every call returns the same.
 */
enum sn_status cap_reader_next(struct cap_reader *r, struct cap_record *rec);

/**
 * Up to @p max next records at once, as cap_reader_next() would return them one by one; the
 * records of one batch stay valid together until the next call. Fewer than @p max at the end
 * of input or on an error: *st is then what cap_reader_next() would have returned
 * (SN_ENOTFOUND, SN_ETRUNC, SN_EPARSE); also, with *st SN_OK, once the batch spans 1 MiB of
 * input (large records: what a batch holds in place stays bounded). At least one record
 * unless the input ended.
 */
uint32_t cap_reader_next_batch(struct cap_reader *r, struct cap_record *recs, uint32_t max,
			       enum sn_status *st);

/** Byte offset and reason of the last SN_ETRUNC/SN_EPARSE (diag->offset, diag->msg). */
const struct sn_diag *cap_reader_error(const struct cap_reader *r);

/** "pcap", "pcapng", with "+gzip" when compressed. */
const char *cap_reader_format(const struct cap_reader *r);

/** Snap length of the file (pcap header or first IDB); 0 if unknown. */
uint32_t cap_reader_snaplen(const struct cap_reader *r);

/**
 * How much of a mapped file to keep mapped behind the reading position (default 8 MiB);
 * older pages are given back to the kernel (they are read again if touched). Records handed
 * to other threads should stay within this window.
 * @param r the reader
 * @param bytes the window; 0 restores the default
 */
void cap_reader_set_release_lag(struct cap_reader *r, size_t bytes);

/** Close and free. NULL is allowed. */
void cap_reader_free(struct cap_reader *r);

/* --- reading one mapped file in byte ranges, from several threads --- */

/*
 * A cursor reads the records of one byte range of a reader's input with its own copy of the
 * parsing state, so several threads can read one file at once (each range by one thread at a
 * time). Only a mapped, uncompressed file can be read this way. The records of a range are
 * those that start inside it; the first one is found by resynchronisation, which can be
 * fooled (a capture stored inside a capture), so callers check that each range starts where
 * the range before it ended and read it again from there when it does not: then the records
 * read are exactly those of a sequential reader, in the same order.
 */
struct cap_cursor;

/**
 * Prepare range reading of @p r (before any cap_reader_next()).
 * @param first receives the offset of the first packet record or block
 * @param end receives the input length
 * @return a cursor holding the state at @p first (after a pcapng's leading SHB and IDBs),
 *         the template of every other cursor; NULL when the input cannot be read in ranges
 *         (gzip, standard input, pcapng without a packet): read it sequentially.
 */
struct cap_cursor *cap_reader_split_begin(const struct cap_reader *r, size_t *first,
					  size_t *end);
/** A new cursor with the state (and position) of @p state. */
struct cap_cursor *cap_cursor_new(const struct cap_cursor *state);
/** Copy the parsing state and position of @p src into @p dst. */
void cap_cursor_copy_state(struct cap_cursor *dst, const struct cap_cursor *src);
/**
 * Find the first offset in [from, limit) where plausible record (pcap) or block (pcapng)
 * headers follow each other (resynchronisation).
 * @return SN_OK with *at set; SN_ENOTFOUND when there is none, or when a cursor reading
 *         from a buffer (cap_cursor_fill()) cannot tell from the bytes it holds: read the
 *         range again from where the range before it ended.
 */
enum sn_status cap_cursor_resync(const struct cap_cursor *c, size_t from, size_t limit,
				 size_t *at);
/**
 * Read from @p start (a record boundary), stopping before the first record that starts at or
 * after @p stop.
 * @param speculative true when the state before @p start is not known (a resynchronised
 *        start): then cap_cursor_needs_prev() tells whether that mattered
 */
void cap_cursor_seek(struct cap_cursor *c, size_t start, size_t stop, bool speculative);
/**
 * Next record of the range; as cap_reader_next(): SN_OK, SN_ENOTFOUND (the range or the
 * input ended; cap_cursor_pos() is then where the next range starts), SN_ETRUNC or SN_EPARSE
 * (cap_cursor_error() tells the offset and reason).
 */
enum sn_status cap_cursor_next(struct cap_cursor *c, struct cap_record *rec);
/**
 * Read the bytes [@p off, @p off + @p len) of the cursor's file into @p buf with pread(), and
 * read the cursor's records from there until the next cap_cursor_copy_state() or fill: what
 * mapping a file costs depends on how the page cache holds it (cap_reader_read_windowed()).
 * A record that reaches past the bytes read, a seek outside them, and what comes after are
 * read with pread() into buffers of the cursor's own, kept until the next fill; a chain of
 * records that resynchronisation cannot follow to its end within them is not found
 * (cap_cursor_resync()). The file is never read through the mapping then: when it ends
 * before the bytes asked for (cut under the reader), the input ends there, a truncation at
 * the cut record as for a sequential reader. Records read from buffers are marked transient:
 * @p buf must outlive them (their bytes are at offset + data_at in cap_reader_map() as well).
 * Thread: any thread, for its own cursor (pread() on the reader's descriptor).
 * @return the bytes read (fewer at the end of the file)
 */
size_t cap_cursor_fill(struct cap_cursor *c, uint8_t *buf, size_t off, size_t len);
/** Offset of the next record or block the cursor would read. */
size_t cap_cursor_pos(const struct cap_cursor *c);
/**
 * A speculative pcapng range depends on the range before: it read an SPB (whose timestamp is
 * the previous packet's) before any timestamp, or it ended without learning one.
 */
bool cap_cursor_needs_prev(const struct cap_cursor *c);
/** The range contained a pcapng SHB or IDB: the state at its end differs from its start. */
bool cap_cursor_changed(const struct cap_cursor *c);
const struct sn_diag *cap_cursor_error(const struct cap_cursor *c);
void cap_cursor_free(struct cap_cursor *c);
/** Records of @p r are transient (streamed gzip input): see struct cap_record. */
bool cap_reader_transient(const struct cap_reader *r);
/** Records of @p r point into a read-only mapping of the file itself (a regular,
 * uncompressed file): the input that several threads read in ranges (eng_split.c). */
bool cap_reader_mapped(const struct cap_reader *r);
/**
 * From now on read the records of a mapped file (cap_reader_mapped()) with pread() into a
 * buffer of the reader's own, a window of it at a time, instead of through the mapping: what
 * mapping a file costs depends on how the page cache holds it (cap_reader.c). Each record is
 * then valid only until the next cap_reader_next() or cap_reader_next_batch() call, as
 * struct cap_record promises, and is marked transient; the reader cannot be split
 * (cap_reader_split_begin()) any more.
 * A reader opened by cap_reader_open_merged() reads in windows already: then only the size of
 * its first window is set (unless it has one).
 * @param window bytes read at a time (a record longer than that gets a larger window); 0 = the
 *        default, 2 MiB
 * @return true when @p r reads in windows; false for any other input (nothing changes)
 */
bool cap_reader_read_windowed(struct cap_reader *r, size_t window);
/**
 * Read a mapped file that cap_reader_read_windowed() reads in windows through its mapping
 * again, from where it is (the records returned so far stay valid; the window is kept for
 * cap_reader_read_windowed() again; what was read of the mapping is given back once it is
 * read through it again, behind the reader). Only while the file is held still
 * (cap_reader_lease()).
 * @return true when @p r reads through its mapping; false when it cannot (not one mapped
 *         file read on its own, or its reading failed or found the file cut): nothing changes
 */
bool cap_reader_read_mapped(struct cap_reader *r);
/** Offset in the input of the next record to be read. */
size_t cap_reader_pos(const struct cap_reader *r);
/** Whether @p r reads in windows and the next read refills its window (it holds less than
 *  a record's worth past the reading position, and the file goes on). */
bool cap_reader_window_spent(const struct cap_reader *r);
/**
 * Windows that readers of several merged inputs give back when their input ends, for the
 * next ones to reuse (a window already mapped in costs no page faults). One thread uses it.
 */
struct cap_window_pool;
struct cap_window_pool *cap_window_pool_new(void);
void cap_window_pool_free(struct cap_window_pool *p);
/** Give @p win (@p cap bytes, a reader's window: cap_window_hooks.retire) to the pool. */
void cap_window_pool_put(struct cap_window_pool *p, uint8_t *win, size_t cap);
/**
 * cap_reader_read_windowed() from a window of @p first bytes, one of many inputs merged
 * (cap_merge_read_windowed()): most of them hold only their head record for a long time, so
 * the window is small until the input is read on; its first refill takes the rest of the file
 * up to @p max (0: the default, 2 MiB). Larger windows come from @p pool (may be NULL).
 */
bool cap_reader_read_windowed_growing(struct cap_reader *r, size_t first, size_t max,
				      struct cap_window_pool *pool);
/** For threads that analyse a windowed reader's records later: cap_reader_set_fence(). */
struct cap_window_hooks {
	/* before a refill overwrites the window of two refills ago (@p input: the reader's
	 * index given to cap_reader_set_fence()): return only once no record read before the
	 * last refill is in use any more */
	void (*fence)(void *ctx, size_t input);
	/* the input ended (cap_reader_end_input()): its windows @p win[0] and @p win[1]
	 * (@p cap[k] bytes each; win[1] may be NULL) may still hold records in use; the callee
	 * owns them (cap_window_pool_put() once they are not) */
	void (*retire)(void *ctx, size_t input, uint8_t *win[2], size_t cap[2]);
	/* the input of @p r, gzip opened for a merge, ended (cap_reader_end_input()): its
	 * inflated bytes may still hold records in use; the callee calls
	 * cap_reader_end_stream(@p r) once they are not. NULL: at once */
	void (*retire_stream)(void *ctx, size_t input, struct cap_reader *r);
	void *ctx;
};
/**
 * Keep a windowed reader's records valid for one refill more: a refill moves on to a second
 * window instead of reusing the current one, after @p hooks->fence. NULL: records are valid
 * until the next call, as usual. @p hooks must outlive the reading.
 */
void cap_reader_set_fence(struct cap_reader *r, const struct cap_window_hooks *hooks,
			  size_t input);
/**
 * The reader's input has ended (cap_reader_next() gave anything but SN_OK), or is not to be
 * read any more: every later call gives the end again. A windowed reader's windows go to
 * hooks->retire, or back to the pool (or freed) without hooks; what a gzip file opened by
 * cap_reader_open_merged() holds (its inflater thread, descriptor and inflated bytes) goes
 * with cap_reader_end_stream(), through hooks->retire_stream when there is one.
 */
void cap_reader_end_input(struct cap_reader *r);
/** Give back what the gzip input of @p r holds once it ended (cap_reader_end_input()):
 *  none of its records may be in use. */
void cap_reader_end_stream(struct cap_reader *r);
/** The mapping of the file that cap_reader_mapped() @p r maps, NULL for any other input:
 *  a record's bytes are at offset + data_at in it, whether or not it is read in windows. */
const uint8_t *cap_reader_map(const struct cap_reader *r);
/** Length of the file that cap_reader_mapped() @p r maps; 0 for any other input. */
size_t cap_reader_mapped_length(const struct cap_reader *r);
/**
 * Prefault (@p need) or give back (!@p need; whole pages only) a byte range of a mapped
 * input. Giving back never invalidates a record of a mapped file: the pages are read again
 * if touched. For a transient input (giving back only) the bytes are gone: only for records
 * every thread has finished with. Call from the reading thread.
 */
void cap_reader_advise(const struct cap_reader *r, size_t off, size_t len, bool need);
/**
 * Hold a mapped file still while its mapping is read: a read lease (fcntl F_SETLEASE). While
 * it is held, another process that opens the file for writing or truncates it waits until
 * cap_reader_unlease() (at most /proc/sys/fs/lease-break-time seconds, 45 by default), so the
 * mapping's pages cannot be lost under the reader (a mapped page past a file's new end kills
 * the process that reads it: SIGBUS). A reader that holds it polls
 * cap_reader_lease_wanted() and, once another process waits, stops reading the mapping and
 * lets go. No signal comes of it (the descriptor's owner is cleared).
 * @return true when held; false where there is none to be had: a file open for writing
 *         anywhere, one the caller does not own (without CAP_LEASE), a file system without
 *         leases, a file already shorter than its mapping, or any input that is not one mapped
 *         file with its descriptor. Then the mapping must not be read.
 */
bool cap_reader_lease(const struct cap_reader *r);
/** Whether another process waits for the lease of cap_reader_lease() to go (cheap: one
 *  fcntl()). */
bool cap_reader_lease_wanted(const struct cap_reader *r);
/** Let the lease of cap_reader_lease() go (the file's descriptor stays open). */
void cap_reader_unlease(const struct cap_reader *r);
/**
 * Where a give-back that should end at @p off ends instead: @p off rounded down to a whole
 * 2 MiB block of a file mapping (the kernel maps a cached 2 MiB folio with one huge-page
 * entry, and giving back part of one first splits it into 512), to a page otherwise. A
 * caller that gives back up to this offset, and starts the next give-back there, gives back
 * every byte once.
 */
size_t cap_reader_release_floor(const struct cap_reader *r, size_t off);

/* --- timestamp-ordered merge of several readers --- */

struct cap_merge;

/**
 * Merge readers. Ownership: the merge takes ownership of the readers in @p readers (the
 * array itself is copied).
 */
struct cap_merge *cap_merge_new(struct cap_reader **readers, size_t count);

/** Called once for an input that ends early (SN_ETRUNC) or is corrupt (SN_EPARSE). */
typedef void cap_merge_error_fn(void *user, uint32_t file_index, enum sn_status st,
				const struct sn_diag *diag);

/**
 * Next record in timestamp order over all inputs; rec->file_index tells which input.
 * @return SN_OK; SN_ENOTFOUND when every input is exhausted. A truncated or corrupt input
 *         ends that input only: @p on_error (may be NULL) is called once for it with its
 *         index and status, and the other inputs go on.
 * @param m the merge
 * @param rec receives the record
 * @param on_error error callback (may be NULL)
 * @param user passed to @p on_error
 */
enum sn_status cap_merge_next(struct cap_merge *m, struct cap_record *rec,
			      cap_merge_error_fn *on_error, void *user);

/** Reader of input @p i, for its format and errors. */
const struct cap_reader *cap_merge_reader(const struct cap_merge *m, size_t i);

/**
 * Up to @p max next records at once, as cap_merge_next() would return them one by one (with
 * the same error reports); the records of one batch stay valid together until the next call.
 * With several inputs a batch holds one record (refilling an input gives back what is behind
 * it, see cap_merge_set_release_lag()).
 * @return how many; 0 when every input is exhausted
 */
uint32_t cap_merge_next_batch(struct cap_merge *m, struct cap_record *recs, uint32_t max,
			      cap_merge_error_fn *on_error, void *user);
/** The only input when there is exactly one (for range reading), else NULL. */
const struct cap_reader *cap_merge_single(const struct cap_merge *m);
/**
 * Read the only input through its mapping, held still by its read lease (cap_reader_lease())
 * until cap_merge_lease_yield() or cap_merge_unlease() lets it go.
 * @return true when there is one input, nothing has been read and the lease is held; false
 *         otherwise (nothing changes)
 */
bool cap_merge_lease(struct cap_merge *m);
/**
 * Under cap_merge_lease(): when another process waits for the lease, read on from here in
 * windows (cap_reader_read_windowed(); the records returned so far must be done with, as
 * their pages of the mapping may go) and let the lease go.
 * @return true when it did
 */
bool cap_merge_lease_yield(struct cap_merge *m);
/**
 * Under cap_merge_lease(): read the only input on from here through its mapping (@p mapped,
 * cap_reader_read_mapped()) or in windows of @p window bytes (cap_reader_read_windowed(); the
 * records returned so far must be done with, as their pages of the mapping may go).
 * @return whether it reads that way now
 */
bool cap_merge_read_way(struct cap_merge *m, bool mapped, size_t window);
/** Let the lease of cap_merge_lease() go. */
void cap_merge_unlease(struct cap_merge *m);
/** cap_reader_set_release_lag() on every input. */
void cap_merge_set_release_lag(struct cap_merge *m, size_t bytes);
/**
 * Read the inputs in windows, before anything is read: the only input with
 * cap_reader_read_windowed(); each of several with cap_reader_read_windowed_growing(), whose
 * records are then transient (those opened by cap_reader_open_merged() read in windows
 * already: this sets how their windows grow and where they come from).
 * @return whether there is exactly one input and it reads in windows
 */
bool cap_merge_read_windowed(struct cap_merge *m);
/** Inputs merged. */
size_t cap_merge_count(const struct cap_merge *m);
/** cap_reader_set_fence() on every input, each with its index (NULL: none). */
void cap_merge_set_fence(struct cap_merge *m, const struct cap_window_hooks *hooks);
/** The pool the windows of several inputs come from (cap_merge_read_windowed()), or NULL. */
struct cap_window_pool *cap_merge_window_pool(const struct cap_merge *m);

void cap_merge_free(struct cap_merge *m);

#endif
