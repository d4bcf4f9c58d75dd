/*
 * check_cap_reader.c - tests for capture file input (cap_reader.c), reading it in byte ranges
 * with cursors, and the timestamp merge (cap_merge.c). Captures are built byte by byte in
 * memory, written to a private temp directory, and read back; every field of every record is
 * checked.
 */
#include "config.h"

#include "sipnab/cap_reader.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <check.h>
#include <zlib.h>

/* ---------------------------------------------------------------- byte builder */

struct tbuf {
	uint8_t b[65536];
	size_t n;
	bool be;
};

static void put8(struct tbuf *t, uint8_t v)
{
	ck_assert_uint_lt(t->n, sizeof(t->b));
	t->b[t->n++] = v;
}

static void put16(struct tbuf *t, uint16_t v)
{
	if (t->be) {
		put8(t, (uint8_t)(v >> 8));
		put8(t, (uint8_t)v);
	} else {
		put8(t, (uint8_t)v);
		put8(t, (uint8_t)(v >> 8));
	}
}

static void put32(struct tbuf *t, uint32_t v)
{
	if (t->be) {
		put16(t, (uint16_t)(v >> 16));
		put16(t, (uint16_t)v);
	} else {
		put16(t, (uint16_t)v);
		put16(t, (uint16_t)(v >> 16));
	}
}

static void put64(struct tbuf *t, uint64_t v)
{
	if (t->be) {
		put32(t, (uint32_t)(v >> 32));
		put32(t, (uint32_t)v);
	} else {
		put32(t, (uint32_t)v);
		put32(t, (uint32_t)(v >> 32));
	}
}

static void put_bytes(struct tbuf *t, const void *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		put8(t, ((const uint8_t *)p)[i]);
	}
}

static void pad4(struct tbuf *t)
{
	while (t->n % 4) {
		put8(t, 0);
	}
}

/* Payload of packet @p k: @p len bytes k, k+1, ... */
static void put_payload(struct tbuf *t, uint8_t k, uint32_t len)
{
	for (uint32_t i = 0; i < len; i++) {
		put8(t, (uint8_t)(k + i));
	}
}

static void pcap_hdr(struct tbuf *t, uint32_t magic, uint32_t snaplen, uint32_t linktype)
{
	put32(t, magic);
	put16(t, 2);
	put16(t, 4);
	put32(t, 0);
	put32(t, 0);
	put32(t, snaplen);
	put32(t, linktype);
}

static void pcap_rec(struct tbuf *t, uint32_t sec, uint32_t frac, uint32_t incl, uint32_t orig,
		     uint8_t k)
{
	put32(t, sec);
	put32(t, frac);
	put32(t, incl);
	put32(t, orig);
	put_payload(t, k, incl);
}

static size_t blk_begin(struct tbuf *t, uint32_t type)
{
	size_t start = t->n;

	put32(t, type);
	put32(t, 0); /* patched by blk_end */
	return start;
}

static void blk_end(struct tbuf *t, size_t start)
{
	uint32_t len;
	size_t save;

	pad4(t);
	len = (uint32_t)(t->n - start + 4);
	put32(t, len);
	save = t->n;
	t->n = start + 4;
	put32(t, len);
	t->n = save;
}

static void png_shb(struct tbuf *t)
{
	size_t s = blk_begin(t, 0x0a0d0d0a);

	put32(t, 0x1a2b3c4d);
	put16(t, 1);
	put16(t, 0);
	put64(t, UINT64_MAX);
	blk_end(t, s);
}

/* IDB with optional if_tsresol (tsresol >= 0) and if_tsoffset (has_off). */
static void png_idb(struct tbuf *t, uint16_t link, uint32_t snaplen, int tsresol, bool has_off,
		    int64_t tsoff)
{
	size_t s = blk_begin(t, 1);

	put16(t, link);
	put16(t, 0);
	put32(t, snaplen);
	put16(t, 2); /* if_description, to be skipped */
	put16(t, 3);
	put_bytes(t, "abc", 3);
	pad4(t);
	if (tsresol >= 0) {
		put16(t, 9);
		put16(t, 1);
		put8(t, (uint8_t)tsresol);
		pad4(t);
	}
	if (has_off) {
		put16(t, 14);
		put16(t, 8);
		put64(t, (uint64_t)tsoff);
	}
	put16(t, 0);
	put16(t, 0);
	blk_end(t, s);
}

static size_t png_epb(struct tbuf *t, uint32_t ifid, uint64_t units, uint32_t caplen,
		      uint32_t origlen, uint8_t k)
{
	size_t s = blk_begin(t, 6);

	put32(t, ifid);
	put32(t, (uint32_t)(units >> 32));
	put32(t, (uint32_t)units);
	put32(t, caplen);
	put32(t, origlen);
	put_payload(t, k, caplen);
	blk_end(t, s);
	return s;
}

static size_t png_spb(struct tbuf *t, uint32_t origlen, uint32_t data_len, uint8_t k)
{
	size_t s = blk_begin(t, 3);

	put32(t, origlen);
	put_payload(t, k, data_len);
	blk_end(t, s);
	return s;
}

static size_t png_opb(struct tbuf *t, uint16_t ifid, uint64_t units, uint32_t caplen,
		      uint32_t origlen, uint8_t k)
{
	size_t s = blk_begin(t, 2);

	put16(t, ifid);
	put16(t, 0);
	put32(t, (uint32_t)(units >> 32));
	put32(t, (uint32_t)units);
	put32(t, caplen);
	put32(t, origlen);
	put_payload(t, k, caplen);
	blk_end(t, s);
	return s;
}

static void png_unknown(struct tbuf *t, uint32_t type)
{
	size_t s = blk_begin(t, type);

	put32(t, 0xdeadbeef);
	put8(t, 1);
	blk_end(t, s);
}

/* ---------------------------------------------------------------- temp files */

static char tmpdir[256];
static int tmp_seq;

static void tmp_setup(void)
{
	const char *base = getenv("TMPDIR");
	int n;

	if (!base || !*base) {
		base = "/tmp";
	}
	n = snprintf(tmpdir, sizeof(tmpdir), "%s/check_cap_reader.XXXXXX", base);
	ck_assert(n > 0 && (size_t)n < sizeof(tmpdir));
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
	tmp_seq = 0;
}

static void tmp_teardown(void)
{
	DIR *d = opendir(tmpdir);
	struct dirent *e;
	char p[512];

	if (!d) {
		return;
	}
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.') {
			continue;
		}
		snprintf(p, sizeof(p), "%s/%s", tmpdir, e->d_name);
		unlink(p);
	}
	closedir(d);
	rmdir(tmpdir);
}

/* Write @p len bytes to a new temp file; returns its path (static storage per call slot). */
static const char *tmp_write(const void *data, size_t len)
{
	static char paths[16][512];
	char *p = paths[tmp_seq % 16];
	FILE *f;

	snprintf(p, 512, "%s/f%d", tmpdir, tmp_seq++);
	f = fopen(p, "wb");
	ck_assert_ptr_nonnull(f);
	if (len) {
		ck_assert_uint_eq(fwrite(data, 1, len, f), len);
	}
	ck_assert_int_eq(fclose(f), 0);
	return p;
}

/* gzip @p data into a temp file, split into @p members gzip members. */
static const char *tmp_write_gz(const void *data, size_t len, int members)
{
	const char *p = tmp_write("", 0);
	size_t done = 0;

	for (int m = 0; m < members; m++) {
		size_t part = (m == members - 1) ? len - done : len / (size_t)members;
		gzFile gz = gzopen(p, "ab");

		ck_assert_ptr_nonnull(gz);
		ck_assert_int_eq(gzwrite(gz, (const uint8_t *)data + done, (unsigned)part),
				 (int)part);
		ck_assert_int_eq(gzclose(gz), Z_OK);
		done += part;
	}
	return p;
}

static bool payload_ok(const struct cap_record *rec, uint8_t k)
{
	for (uint32_t i = 0; i < rec->caplen; i++) {
		if (rec->data[i] != (uint8_t)(k + i)) {
			return false;
		}
	}
	return true;
}

static void expect_rec(struct cap_reader *r, int64_t ts, uint32_t caplen, uint32_t origlen,
		       uint32_t link, uint32_t ifindex, uint64_t offset, uint8_t k)
{
	struct cap_record rec;

	memset(&rec, 0xa5, sizeof(rec));
	ck_assert_int_eq(cap_reader_next(r, &rec), SN_OK);
	ck_assert_int_eq(rec.ts_ns, ts);
	ck_assert_uint_eq(rec.caplen, caplen);
	ck_assert_uint_eq(rec.origlen, origlen);
	ck_assert_uint_eq(rec.linktype, link);
	ck_assert_uint_eq(rec.ifindex, ifindex);
	ck_assert_uint_eq(rec.file_index, 0);
	ck_assert_uint_eq(rec.offset, offset);
	ck_assert(payload_ok(&rec, k));
}

static struct cap_reader *open_ok(const char *path)
{
	struct cap_reader *r = NULL;
	struct sn_diag d;

	memset(&d, 0, sizeof(d));
	ck_assert_msg(cap_reader_open(path, &r, &d) == SN_OK, "open %s: %s", path, d.msg);
	ck_assert_ptr_nonnull(r);
	return r;
}

static size_t count_records(struct cap_reader *r, enum sn_status *end)
{
	struct cap_record rec;
	enum sn_status st;
	size_t n = 0;

	while ((st = cap_reader_next(r, &rec)) == SN_OK) {
		n++;
	}
	*end = st;
	return n;
}

/* A three-record pcap; sizes 10, 20 (cut from 30 by snaplen), 5. */
static void build_pcap(struct tbuf *t, bool be, uint32_t magic)
{
	memset(t, 0, sizeof(*t));
	t->be = be;
	pcap_hdr(t, magic, 20, 1 | 0xf4000000u); /* FCS bits must be ignored */
	pcap_rec(t, 1700000000, 123456, 10, 10, 1);
	pcap_rec(t, 1700000001, 999999, 20, 30, 2);
	pcap_rec(t, 1700000002, 0, 5, 4, 3); /* caplen > origlen: origlen raised */
}

static void check_pcap_records(struct cap_reader *r, bool ns)
{
	int64_t m = ns ? 1 : 1000;
	enum sn_status end;

	ck_assert_uint_eq(cap_reader_snaplen(r), 20);
	expect_rec(r, 1700000000LL * 1000000000 + 123456 * m, 10, 10, 1, 0, 24, 1);
	expect_rec(r, 1700000001LL * 1000000000 + 999999 * m, 20, 30, 1, 0, 50, 2);
	expect_rec(r, 1700000002LL * 1000000000, 5, 5, 1, 0, 86, 3);
	ck_assert_uint_eq(count_records(r, &end), 0);
	ck_assert_int_eq(end, SN_ENOTFOUND);
	ck_assert_int_eq(cap_reader_next(r, &(struct cap_record){0}), SN_ENOTFOUND);
}

/* ---------------------------------------------------------------- pcap */

START_TEST(test_cap_reader_reads_pcap_in_both_byte_orders_and_resolutions)
{
	static const uint32_t magics[2] = {0xa1b2c3d4u, 0xa1b23c4du};
	struct tbuf t;

	for (int be = 0; be < 2; be++) {
		for (int i = 0; i < 2; i++) {
			struct cap_reader *r;

			build_pcap(&t, be, magics[i]);
			r = open_ok(tmp_write(t.b, t.n));
			ck_assert_str_eq(cap_reader_format(r), "pcap");
			check_pcap_records(r, i == 1);
			cap_reader_free(r);
		}
	}
}
END_TEST

START_TEST(test_cap_reader_reads_kuznetzov_pcap_with_long_record_headers)
{
	struct tbuf t = {.be = false};
	struct cap_reader *r;
	enum sn_status end;

	pcap_hdr(&t, 0xa1b2cd34u, 65535, 101);
	put32(&t, 10);
	put32(&t, 5);
	put32(&t, 4);
	put32(&t, 4);
	put32(&t, 7); /* ifindex, protocol, pkt_type, pad */
	put32(&t, 0);
	put_payload(&t, 9, 4);
	r = open_ok(tmp_write(t.b, t.n));
	expect_rec(r, 10000005000LL, 4, 4, 101, 0, 24, 9);
	ck_assert_uint_eq(count_records(r, &end), 0);
	ck_assert_int_eq(end, SN_ENOTFOUND);
	cap_reader_free(r);
}
END_TEST

START_TEST(test_cap_reader_reads_header_only_pcap_as_empty)
{
	struct tbuf t = {.be = false};
	struct cap_reader *r;
	enum sn_status end;

	pcap_hdr(&t, 0xa1b2c3d4u, 0, 1);
	r = open_ok(tmp_write(t.b, t.n));
	ck_assert_uint_eq(count_records(r, &end), 0);
	ck_assert_int_eq(end, SN_ENOTFOUND);
	cap_reader_free(r);
}
END_TEST

/* ---------------------------------------------------------------- pcapng */

struct png_layout {
	size_t epb0, epb1, spb, opb, epb2, epb3;
};

/* Section 1 in byte order @p be, section 2 in the other one. */
static void build_pcapng(struct tbuf *t, bool be, struct png_layout *lay)
{
	memset(t, 0, sizeof(*t));
	t->be = be;
	png_shb(t);
	png_idb(t, 1, 8, 9, false, 0);		  /* ethernet, ns */
	png_idb(t, 101, 0, 0x80 | 10, true, 100); /* raw, 2^-10 s, +100 s */
	png_unknown(t, 0x0bad);
	lay->epb0 = png_epb(t, 0, 1700000000123456789ULL, 6, 60, 1);
	lay->epb1 = png_epb(t, 1, (UINT64_C(5) << 10) | 512, 7, 7, 2); /* 5.5 s + 100 s */
	png_unknown(t, 5);					       /* ISB */
	lay->spb = png_spb(t, 12, 12, 3);			       /* cut to snaplen 8 */
	lay->opb = png_opb(t, 1, 1024 * 3 + 256, 3, 2, 4);	       /* caplen > origlen */
	t->be = !be;
	png_shb(t);
	png_idb(t, 113, 1500, -1, false, 0); /* default resolution: us */
	lay->epb2 = png_epb(t, 0, 1700000009000001ULL, 5, 5, 5);
	lay->epb3 = png_epb(t, 0, 1700000009000002ULL, 0, 0, 6);
}

START_TEST(test_cap_reader_reads_pcapng_with_two_sections_and_all_packet_blocks)
{
	for (int be = 0; be < 2; be++) {
		struct tbuf t;
		struct png_layout lay;
		struct cap_reader *r;
		enum sn_status end;

		build_pcapng(&t, be, &lay);
		r = open_ok(tmp_write(t.b, t.n));
		ck_assert_str_eq(cap_reader_format(r), "pcapng");
		ck_assert_uint_eq(cap_reader_snaplen(r), 8);
		expect_rec(r, 1700000000123456789LL, 6, 60, 1, 0, lay.epb0, 1);
		expect_rec(r, 105500000000LL, 7, 7, 101, 1, lay.epb1, 2);
		expect_rec(r, 105500000000LL, 8, 12, 1, 0, lay.spb, 3);
		expect_rec(r, 103250000000LL, 3, 3, 101, 1, lay.opb, 4);
		expect_rec(r, 1700000009000001000LL, 5, 5, 113, 0, lay.epb2, 5);
		expect_rec(r, 1700000009000002000LL, 0, 0, 113, 0, lay.epb3, 6);
		ck_assert_uint_eq(count_records(r, &end), 0);
		ck_assert_int_eq(end, SN_ENOTFOUND);
		cap_reader_free(r);
	}
}
END_TEST

START_TEST(test_cap_reader_converts_fine_and_coarse_pcapng_resolutions)
{
	struct tbuf t = {.be = false};
	struct cap_reader *r;
	size_t off[5];

	png_shb(&t);
	png_idb(&t, 1, 0, 12, false, 0);	/* ps */
	png_idb(&t, 1, 0, 0, true, -10);	/* s, -10 s */
	png_idb(&t, 1, 0, 0x80 | 40, false, 0); /* 2^-40 s */
	png_idb(&t, 1, 0, 0x80 | 100, false, 0);
	png_idb(&t, 1, 0, 40, false, 0);
	off[0] = png_epb(&t, 0, UINT64_C(1234567890123456789), 0, 0, 0);
	off[1] = png_epb(&t, 1, 1700000000, 0, 0, 0);
	off[2] = png_epb(&t, 2, (UINT64_C(3) << 40) | (UINT64_C(1) << 39), 0, 0, 0);
	off[3] = png_epb(&t, 3, UINT64_MAX, 0, 0, 0);
	off[4] = png_epb(&t, 4, UINT64_MAX, 0, 0, 0);
	ck_assert_uint_eq(off[0], 240);
	r = open_ok(tmp_write(t.b, t.n));
	expect_rec(r, 1234567890123456LL, 0, 0, 1, 0, off[0], 0);
	expect_rec(r, 1699999990000000000LL, 0, 0, 1, 1, off[1], 0);
	expect_rec(r, 3500000000LL, 0, 0, 1, 2, off[2], 0);
	expect_rec(r, 0, 0, 0, 1, 3, off[3], 0);
	expect_rec(r, 0, 0, 0, 1, 4, off[4], 0);
	cap_reader_free(r);
}
END_TEST

START_TEST(test_cap_reader_rejects_packet_block_for_undefined_interface)
{
	struct tbuf t = {.be = false};
	struct cap_reader *r;
	size_t off;

	png_shb(&t);
	png_idb(&t, 1, 0, -1, false, 0);
	ck_assert_uint_eq(png_epb(&t, 0, 1, 1, 1, 0), 60);
	off = png_epb(&t, 1, 1, 1, 1, 0);
	r = open_ok(tmp_write(t.b, t.n));
	expect_rec(r, 1000, 1, 1, 1, 0, 60, 0);
	ck_assert_int_eq(cap_reader_next(r, &(struct cap_record){0}), SN_EPARSE);
	ck_assert_uint_eq(cap_reader_error(r)->offset, off);
	ck_assert_ptr_nonnull(strstr(cap_reader_error(r)->msg, "undefined interface 1"));
	ck_assert_int_eq(cap_reader_next(r, &(struct cap_record){0}), SN_EPARSE);
	cap_reader_free(r);
}
END_TEST

START_TEST(test_cap_reader_rejects_simple_packet_block_without_interface)
{
	struct tbuf t = {.be = true};
	struct cap_reader *r;

	png_shb(&t);
	png_spb(&t, 4, 4, 0);
	r = open_ok(tmp_write(t.b, t.n));
	ck_assert_uint_eq(cap_reader_snaplen(r), 0);
	ck_assert_int_eq(cap_reader_next(r, &(struct cap_record){0}), SN_EPARSE);
	ck_assert_uint_eq(cap_reader_error(r)->offset, 28);
	cap_reader_free(r);
}
END_TEST

/* A mapped file is given back in whole 2 MiB blocks (a cached 2 MiB folio is mapped with one
 * huge-page entry, which a partial give-back would split), and so are inflated gzip bytes
 * (written into huge pages). */
START_TEST(test_cap_reader_release_floor_keeps_mapped_give_backs_to_whole_blocks)
{
	const size_t mib = 1u << 20;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	struct cap_reader *r;
	struct tbuf t;

	build_pcap(&t, false, 0xa1b2c3d4u);
	r = open_ok(tmp_write(t.b, t.n));
	ck_assert(cap_reader_mapped(r));
	ck_assert_uint_eq(cap_reader_release_floor(r, 0), 0);
	ck_assert_uint_eq(cap_reader_release_floor(r, 2 * mib - 1), 0);
	ck_assert_uint_eq(cap_reader_release_floor(r, 2 * mib), 2 * mib);
	ck_assert_uint_eq(cap_reader_release_floor(r, 5 * mib + 24), 4 * mib);
	cap_reader_free(r);

	r = open_ok(tmp_write_gz(t.b, t.n, 1));
	ck_assert(!cap_reader_mapped(r));
	ck_assert_uint_eq(cap_reader_release_floor(r, 5 * mib + 24), 4 * mib);
	ck_assert_uint_eq(cap_reader_release_floor(r, 3 * page + 1), 0);
	cap_reader_free(r);
}
END_TEST

/* ---------------------------------------------------------------- gzip */

START_TEST(test_cap_reader_inflates_gzip_pcap_and_concatenated_members)
{
	struct tbuf t;

	build_pcap(&t, false, 0xa1b2c3d4u);
	for (int members = 1; members <= 3; members++) {
		struct cap_reader *r = open_ok(tmp_write_gz(t.b, t.n, members));

		ck_assert_str_eq(cap_reader_format(r), "pcap+gzip");
		check_pcap_records(r, false);
		cap_reader_free(r);
	}
}
END_TEST

START_TEST(test_cap_reader_inflates_gzip_pcapng)
{
	struct tbuf t;
	struct png_layout lay;
	struct cap_reader *r;
	enum sn_status end;

	build_pcapng(&t, true, &lay);
	r = open_ok(tmp_write_gz(t.b, t.n, 1));
	ck_assert_str_eq(cap_reader_format(r), "pcapng+gzip");
	ck_assert_uint_eq(count_records(r, &end), 6);
	ck_assert_int_eq(end, SN_ENOTFOUND);
	cap_reader_free(r);
}
END_TEST

/* Read a whole file into @p buf; returns its length. */
static size_t slurp(const char *path, uint8_t *buf, size_t cap)
{
	FILE *f = fopen(path, "rb");
	size_t n;

	ck_assert_ptr_nonnull(f);
	n = fread(buf, 1, cap, f);
	ck_assert_uint_lt(n, cap);
	fclose(f);
	return n;
}

START_TEST(test_cap_reader_reports_cut_gzip_stream_as_truncation)
{
	static uint8_t gz[65536];
	struct tbuf t = {.be = false};
	struct cap_reader *r;
	struct sn_diag d;
	enum sn_status end;
	size_t n, good;

	/* large incompressible-ish records so the cut lands after some complete output */
	pcap_hdr(&t, 0xa1b2c3d4u, 65535, 1);
	for (uint32_t i = 0; i < 10; i++) {
		put32(&t, i);
		put32(&t, 0);
		put32(&t, 1000);
		put32(&t, 1000);
		for (uint32_t j = 0; j < 1000; j++) {
			put8(&t, (uint8_t)((j * 2654435761u + i * 40503u) >> 13));
		}
	}
	n = slurp(tmp_write_gz(t.b, t.n, 1), gz, sizeof(gz));
	r = open_ok(tmp_write(gz, n * 2 / 3));
	good = count_records(r, &end);
	ck_assert_uint_gt(good, 0);
	ck_assert_uint_lt(good, 10);
	ck_assert_int_eq(end, SN_ETRUNC);
	ck_assert_ptr_nonnull(strstr(cap_reader_error(r)->msg, "gzip stream is corrupt"));
	ck_assert_uint_eq(cap_reader_error(r)->offset, 24 + good * 1016);
	cap_reader_free(r);

	/* reserved deflate block type right after the 10-byte gzip header: nothing usable */
	gz[10] |= 0x06;
	r = NULL;
	ck_assert_int_eq(cap_reader_open(tmp_write(gz, 40), &r, &d), SN_EPARSE);
	ck_assert_ptr_null(r);
	ck_assert_str_eq(d.msg, "corrupt gzip stream before any capture header");
}
END_TEST

/* ---------------------------------------------------------------- truncation, corruption */

START_TEST(test_cap_reader_returns_complete_records_then_truncation_offset)
{
	struct tbuf t;
	struct cap_reader *r;
	enum sn_status end;

	build_pcap(&t, false, 0xa1b2c3d4u);
	/* record 3 starts at 86 and is 16 + 5 bytes: cut 2 data bytes short */
	r = open_ok(tmp_write(t.b, t.n - 2));
	expect_rec(r, 1700000000123456000LL, 10, 10, 1, 0, 24, 1);
	expect_rec(r, 1700000001999999000LL, 20, 30, 1, 0, 50, 2);
	ck_assert_int_eq(cap_reader_next(r, &(struct cap_record){0}), SN_ETRUNC);
	ck_assert_uint_eq(cap_reader_error(r)->offset, 86);
	ck_assert_str_eq(cap_reader_error(r)->msg,
			 "file ends inside a record at byte offset 86 (2 bytes missing)");
	ck_assert_int_eq(cap_reader_next(r, &(struct cap_record){0}), SN_ETRUNC);
	cap_reader_free(r);

	/* cut inside the record header */
	r = open_ok(tmp_write(t.b, 86 + 10));
	ck_assert_uint_eq(count_records(r, &end), 2);
	ck_assert_int_eq(end, SN_ETRUNC);
	ck_assert_uint_eq(cap_reader_error(r)->offset, 86);
	ck_assert_str_eq(cap_reader_error(r)->msg,
			 "file ends inside a record at byte offset 86 (6 bytes missing)");
	cap_reader_free(r);
}
END_TEST

START_TEST(test_cap_reader_reports_truncated_pcapng_block)
{
	struct tbuf t;
	struct png_layout lay;
	struct cap_reader *r;
	enum sn_status end;

	build_pcapng(&t, false, &lay);
	r = open_ok(tmp_write(t.b, lay.epb3 + 20));
	ck_assert_uint_eq(count_records(r, &end), 5);
	ck_assert_int_eq(end, SN_ETRUNC);
	ck_assert_uint_eq(cap_reader_error(r)->offset, lay.epb3);
	cap_reader_free(r);

	r = open_ok(tmp_write(t.b, lay.epb3 + 5));
	ck_assert_uint_eq(count_records(r, &end), 5);
	ck_assert_int_eq(end, SN_ETRUNC);
	ck_assert_uint_eq(cap_reader_error(r)->offset, lay.epb3);
	cap_reader_free(r);
}
END_TEST

START_TEST(test_cap_reader_rejects_corrupt_block_lengths_with_offset)
{
	struct tbuf t;
	struct png_layout lay;
	struct cap_reader *r;
	enum sn_status end;
	size_t at;

	/* total length not a multiple of 4 */
	build_pcapng(&t, false, &lay);
	t.b[lay.spb + 4] = 13;
	r = open_ok(tmp_write(t.b, t.n));
	ck_assert_uint_eq(count_records(r, &end), 2);
	ck_assert_int_eq(end, SN_EPARSE);
	ck_assert_uint_eq(cap_reader_error(r)->offset, lay.spb);
	ck_assert_ptr_nonnull(strstr(cap_reader_error(r)->msg, "block length 13"));
	cap_reader_free(r);

	/* trailing length differs from the leading one */
	build_pcapng(&t, true, &lay);
	at = lay.opb - 1; /* last byte of the SPB's trailing length (big-endian) */
	t.b[at] ^= 4;
	r = open_ok(tmp_write(t.b, t.n));
	ck_assert_uint_eq(count_records(r, &end), 2);
	ck_assert_int_eq(end, SN_EPARSE);
	ck_assert_uint_eq(cap_reader_error(r)->offset, lay.spb);
	cap_reader_free(r);

	/* length below the minimum */
	build_pcapng(&t, false, &lay);
	t.b[lay.epb0 + 4] = 8;
	r = open_ok(tmp_write(t.b, t.n));
	ck_assert_uint_eq(count_records(r, &end), 0);
	ck_assert_int_eq(end, SN_EPARSE);
	ck_assert_uint_eq(cap_reader_error(r)->offset, lay.epb0);
	cap_reader_free(r);

	/* EPB captured length larger than its block */
	build_pcapng(&t, false, &lay);
	t.b[lay.epb1 + 20] = 200;
	r = open_ok(tmp_write(t.b, t.n));
	ck_assert_uint_eq(count_records(r, &end), 1);
	ck_assert_int_eq(end, SN_EPARSE);
	ck_assert_uint_eq(cap_reader_error(r)->offset, lay.epb1);
	cap_reader_free(r);
}
END_TEST

START_TEST(test_cap_reader_rejects_huge_pcap_record_length)
{
	struct tbuf t = {.be = true};
	struct cap_reader *r;
	enum sn_status end;

	pcap_hdr(&t, 0xa1b2c3d4u, 65535, 1);
	pcap_rec(&t, 1, 0, 4, 4, 0);
	put32(&t, 2);
	put32(&t, 0);
	put32(&t, 256u * 1024 * 1024 + 1);
	put32(&t, 10);
	r = open_ok(tmp_write(t.b, t.n));
	ck_assert_uint_eq(count_records(r, &end), 1);
	ck_assert_int_eq(end, SN_EPARSE);
	ck_assert_uint_eq(cap_reader_error(r)->offset, 44);
	cap_reader_free(r);
}
END_TEST

/* Resident KiB of this process's mapping that holds @p addr (/proc/self/smaps); -1 if none. */
static long mapping_rss_kb(const void *addr)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[512];
	bool in = false;
	long kb = -1;

	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;

		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' ')) {
			in = (uintptr_t)addr >= lo && (uintptr_t)addr < hi;
		} else if (in && sscanf(line, "Rss: %ld kB", &kb) == 1) {
			break;
		}
	}
	fclose(f);
	return kb;
}

/* Opening a file maps it but reads its header with pread(): nothing of the mapping is touched
 * (a file cut while it is opened is one too short, not SIGBUS), pcap and pcapng alike. */
START_TEST(test_cap_reader_open_reads_the_header_without_the_mapping)
{
	static struct tbuf t;
	struct png_layout lay;
	struct cap_reader *r;
	struct cap_record rec;

	build_pcap(&t, false, 0xa1b2c3d4u);
	for (int k = 0; k < 2; k++) {
		r = open_ok(tmp_write(t.b, t.n));
		ck_assert(cap_reader_mapped(r));
		ck_assert_int_eq(mapping_rss_kb(cap_reader_map(r)), 0);
		ck_assert_int_eq(cap_reader_next(r, &rec), SN_OK); /* through it now */
		ck_assert_int_gt(mapping_rss_kb(cap_reader_map(r)), 0);
		cap_reader_free(r);
		build_pcapng(&t, false, &lay);
	}
}
END_TEST

START_TEST(test_cap_reader_rejects_files_that_are_not_captures)
{
	static const char text[] = "INVITE sip:bob@example.com SIP/2.0\r\nVia: x\r\n\r\n";
	static const uint8_t shortpcap[10] = {0xd4, 0xc3, 0xb2, 0xa1};
	struct cap_reader *r = NULL;
	struct sn_diag d;

	ck_assert_int_eq(cap_reader_open(tmp_write(text, sizeof(text) - 1), &r, &d), SN_EPARSE);
	ck_assert_str_eq(d.msg, "not a pcap or pcapng file");
	ck_assert_ptr_null(r);
	ck_assert_int_eq(cap_reader_open(tmp_write("", 0), &r, &d), SN_EPARSE);
	ck_assert_str_eq(d.msg, "not a pcap or pcapng file");
	ck_assert_int_eq(cap_reader_open(tmp_write(shortpcap, sizeof(shortpcap)), &r, &d),
			 SN_EPARSE);
	ck_assert_str_eq(d.msg, "not a pcap or pcapng file");
	ck_assert_int_eq(cap_reader_open(tmp_write(text, sizeof(text) - 1), &r, NULL), SN_EPARSE);
	ck_assert_ptr_null(r);
}
END_TEST

START_TEST(test_cap_reader_reports_system_errors_for_missing_file_and_directory)
{
	struct cap_reader *r = NULL;
	struct sn_diag d;
	char p[512];

	snprintf(p, sizeof(p), "%s/does-not-exist.pcap", tmpdir);
	ck_assert_int_eq(cap_reader_open(p, &r, &d), SN_ESYS);
	ck_assert_int_eq(d.err, ENOENT);
	ck_assert_str_eq(d.msg, strerror(ENOENT));
	ck_assert_ptr_null(r);
	ck_assert_int_eq(cap_reader_open(tmpdir, &r, &d), SN_ESYS);
	ck_assert_int_eq(d.err, EISDIR);
	ck_assert_str_eq(d.msg, strerror(EISDIR));
	ck_assert_ptr_null(r);
}
END_TEST

/* ---------------------------------------------------------------- stdin */

/* In a child: fd 0 = @p path; open "-" and exit with the record count (or 100 + status). */
static int child_count_stdin(const char *path, const char *format)
{
	pid_t pid = fork();
	int status;

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct cap_reader *r = NULL;
		enum sn_status end;
		int fd = open(path, O_RDONLY);
		size_t n;

		if (fd < 0 || dup2(fd, 0) < 0) {
			_exit(99);
		}
		close(fd);
		if (cap_reader_open("-", &r, NULL) != SN_OK) {
			_exit(98);
		}
		if (strcmp(cap_reader_format(r), format) != 0) {
			_exit(97);
		}
		n = count_records(r, &end);
		cap_reader_free(r);
		_exit(end == SN_ENOTFOUND ? (int)n : 100 + (int)end);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status));
	return WEXITSTATUS(status);
}

START_TEST(test_cap_reader_reads_standard_input_plain_and_gzip)
{
	struct tbuf t;
	struct png_layout lay;

	build_pcap(&t, true, 0xa1b23c4du);
	ck_assert_int_eq(child_count_stdin(tmp_write(t.b, t.n), "pcap"), 3);
	ck_assert_int_eq(child_count_stdin(tmp_write_gz(t.b, t.n, 2), "pcap+gzip"), 3);
	build_pcapng(&t, false, &lay);
	ck_assert_int_eq(child_count_stdin(tmp_write(t.b, t.n), "pcapng"), 6);
}
END_TEST

/* ---------------------------------------------------------------- merge */

struct err_log {
	int calls;
	uint32_t file_index;
	enum sn_status st;
	uint64_t offset;
};

static void on_merge_error(void *user, uint32_t file_index, enum sn_status st,
			   const struct sn_diag *diag)
{
	struct err_log *log = user;

	log->calls++;
	log->file_index = file_index;
	log->st = st;
	log->offset = diag->offset;
}

static const char *pcap_with_times(const uint32_t *secs, size_t n, uint8_t k0, size_t cut)
{
	struct tbuf t = {.be = false};

	pcap_hdr(&t, 0xa1b2c3d4u, 65535, 1);
	for (size_t i = 0; i < n; i++) {
		pcap_rec(&t, secs[i], 0, 4, 4, (uint8_t)(k0 + i));
	}
	return tmp_write(t.b, t.n - cut);
}

START_TEST(test_cap_merge_orders_records_by_time_and_keeps_file_order_on_ties)
{
	static const uint32_t a[] = {1, 3, 5, 5, 9};
	static const uint32_t b[] = {2, 3, 4, 10};
	static const uint32_t c[] = {0};
	static const int64_t want_ts[] = {0, 1, 2, 3, 3, 4, 5, 5, 9, 10};
	static const uint32_t want_file[] = {2, 0, 1, 0, 1, 1, 0, 0, 0, 1};
	static const uint8_t want_k[] = {30, 10, 20, 11, 21, 22, 12, 13, 14, 23};
	struct cap_reader *rs[3];
	struct cap_merge *m;
	struct cap_record rec;
	struct err_log log = {0};
	const uint8_t *prev_data = NULL;

	rs[0] = open_ok(pcap_with_times(a, SN_ARRAY_SIZE(a), 10, 0));
	rs[1] = open_ok(pcap_with_times(b, SN_ARRAY_SIZE(b), 20, 0));
	rs[2] = open_ok(pcap_with_times(c, SN_ARRAY_SIZE(c), 30, 0));
	m = cap_merge_new(rs, 3);
	ck_assert_ptr_eq(cap_merge_reader(m, 1), rs[1]);
	ck_assert_ptr_null(cap_merge_reader(m, 3));
	for (size_t i = 0; i < SN_ARRAY_SIZE(want_ts); i++) {
		ck_assert_int_eq(cap_merge_next(m, &rec, on_merge_error, &log), SN_OK);
		ck_assert_int_eq(rec.ts_ns, want_ts[i] * 1000000000);
		ck_assert_uint_eq(rec.file_index, want_file[i]);
		ck_assert_uint_eq(rec.caplen, 4);
		ck_assert(payload_ok(&rec, want_k[i]));
		ck_assert_ptr_ne(rec.data, prev_data);
		prev_data = rec.data;
	}
	ck_assert_int_eq(cap_merge_next(m, &rec, on_merge_error, &log), SN_ENOTFOUND);
	ck_assert_int_eq(cap_merge_next(m, &rec, on_merge_error, &log), SN_ENOTFOUND);
	ck_assert_int_eq(log.calls, 0);
	cap_merge_free(m);
}
END_TEST

START_TEST(test_cap_merge_reports_a_truncated_input_once_and_goes_on)
{
	static const uint32_t a[] = {1, 2, 3};
	static const uint32_t b[] = {1, 4, 6, 8};
	struct cap_reader *rs[2];
	struct cap_merge *m;
	struct cap_record rec;
	struct err_log log = {0};
	int n = 0;

	rs[0] = open_ok(pcap_with_times(a, SN_ARRAY_SIZE(a), 10, 1)); /* third record cut */
	rs[1] = open_ok(pcap_with_times(b, SN_ARRAY_SIZE(b), 20, 0));
	m = cap_merge_new(rs, 2);
	while (cap_merge_next(m, &rec, on_merge_error, &log) == SN_OK) {
		n++;
	}
	ck_assert_int_eq(n, 6);
	ck_assert_int_eq(log.calls, 1);
	ck_assert_uint_eq(log.file_index, 0);
	ck_assert_int_eq(log.st, SN_ETRUNC);
	ck_assert_uint_eq(log.offset, 24 + 2 * 20);
	ck_assert_int_eq(cap_merge_next(m, &rec, on_merge_error, &log), SN_ENOTFOUND);
	ck_assert_int_eq(log.calls, 1);
	cap_merge_free(m);
	cap_merge_free(cap_merge_new(NULL, 0));
}
END_TEST

/* Batches give what one-by-one reading gives, and the same end: a single input read through
 * cap_merge_next_batch() (the one-core path) and a merge of two, cut or whole. */
START_TEST(test_cap_merge_batches_equal_records_one_by_one)
{
	static const uint32_t a[] = {1, 2, 3, 5, 7, 9, 11, 13, 15};
	static const uint32_t b[] = {1, 4, 6, 8};
	struct cap_record one[16], batch[16];

	for (int cut = 0; cut <= 1; cut++) {
		for (uint32_t max = 1; max <= 4; max++) {
			for (int inputs = 1; inputs <= 2; inputs++) {
				struct cap_reader *rs[2];
				struct cap_merge *m;
				struct err_log log1 = {0}, log2 = {0};
				uint32_t n1 = 0, n2 = 0, got;

				rs[0] = open_ok(pcap_with_times(a, SN_ARRAY_SIZE(a), 10, cut));
				if (inputs == 2) {
					rs[1] = open_ok(pcap_with_times(b, SN_ARRAY_SIZE(b), 20, 0));
				}
				m = cap_merge_new(rs, (size_t)inputs);
				while (cap_merge_next(m, &one[n1], on_merge_error, &log1) == SN_OK) {
					n1++;
				}
				cap_merge_free(m);
				rs[0] = open_ok(pcap_with_times(a, SN_ARRAY_SIZE(a), 10, cut));
				if (inputs == 2) {
					rs[1] = open_ok(pcap_with_times(b, SN_ARRAY_SIZE(b), 20, 0));
				}
				m = cap_merge_new(rs, (size_t)inputs);
				while ((got = cap_merge_next_batch(m, batch + n2, max, on_merge_error,
								   &log2)) > 0) {
					ck_assert_uint_le(got, max);
					n2 += got;
				}
				ck_assert_uint_eq(cap_merge_next_batch(m, batch, max, on_merge_error,
								       &log2), 0);
				ck_assert_uint_eq(n1, n2);
				ck_assert_uint_eq(n1, (uint32_t)(inputs == 2 ? 13 : 9) - (uint32_t)cut);
				for (uint32_t i = 0; i < n1; i++) {
					ck_assert_int_eq(one[i].ts_ns, batch[i].ts_ns);
					ck_assert_uint_eq(one[i].offset, batch[i].offset);
					ck_assert_uint_eq(one[i].file_index, batch[i].file_index);
					ck_assert_uint_eq(one[i].caplen, batch[i].caplen);
				}
				ck_assert_int_eq(log1.calls, cut);
				ck_assert_int_eq(log2.calls, cut);
				ck_assert_int_eq(log1.st, log2.st);
				ck_assert_uint_eq(log1.offset, log2.offset);
				cap_merge_free(m);
			}
		}
	}
}
END_TEST

/* A little-endian microsecond pcap of @p n records of @p len bytes each, record i at second
 * t0 + i filled with byte (k0 + i); heap-owned. */
static uint8_t *big_pcap(uint32_t n, uint32_t len, uint32_t t0, uint8_t k0, size_t *out_len)
{
	size_t total = 24 + (size_t)n * (16 + len);
	uint8_t *b = malloc(total);
	uint8_t *p = b + 24;
	const uint32_t hdr[6] = {0xa1b2c3d4u, 0x00040002u, 0, 0, 262144, 1};

	ck_assert_ptr_nonnull(b);
	memcpy(b, hdr, sizeof(hdr)); /* little-endian host (the tests' files are host order) */
	for (uint32_t i = 0; i < n; i++) {
		const uint32_t rh[4] = {t0 + i, 0, len, len};

		memcpy(p, rh, sizeof(rh));
		memset(p + 16, (uint8_t)(k0 + i), len);
		p += 16 + len;
	}
	*out_len = total;
	return b;
}

/* Large records from two gzip inputs (their bytes live in memory that is given back behind
 * the reader), read in batches as the one-core path reads them: every record of every batch
 * still holds its own bytes when the batch is used. */
START_TEST(test_cap_merge_batches_keep_streamed_records_of_two_inputs)
{
	size_t la, lb;
	uint8_t *a = big_pcap(40, 150000, 1000, 1, &la);
	uint8_t *b = big_pcap(2, 100, 2000, 200, &lb);
	struct cap_reader *rs[2];
	struct cap_merge *m;
	struct cap_record recs[32];
	uint32_t got, seen = 0;

	rs[0] = open_ok(tmp_write_gz(a, la, 1));
	rs[1] = open_ok(tmp_write_gz(b, lb, 1));
	m = cap_merge_new(rs, 2);
	cap_merge_set_release_lag(m, 2u << 20);
	while ((got = cap_merge_next_batch(m, recs, 32, NULL, NULL)) > 0) {
		for (uint32_t i = 0; i < got; i++, seen++) {
			uint8_t want = seen < 40 ? (uint8_t)(1 + seen) : (uint8_t)(200 + seen - 40);

			ck_assert_msg(recs[i].data[0] == want &&
					      recs[i].data[recs[i].caplen - 1] == want &&
					      recs[i].data[recs[i].caplen / 2] == want,
				      "record %u lost its bytes", seen);
		}
	}
	ck_assert_uint_eq(seen, 42);
	cap_merge_free(m);
	free(a);
	free(b);
}
END_TEST

/* A batch of large records ends after 1 MiB of input (what it holds in place stays bounded),
 * plain or gzip, and loses none of them; small records fill the whole batch. */
START_TEST(test_cap_reader_batch_ends_after_a_span)
{
	size_t len;
	uint8_t *big = big_pcap(40, 150000, 1000, 1, &len);
	uint8_t *small = big_pcap(3000, 200, 1000, 1, &len);
	static struct cap_record recs[1024];

	for (int gz = 0; gz <= 1; gz++) {
		size_t blen = 24 + 40 * (size_t)(16 + 150000);
		struct cap_reader *r =
			open_ok(gz ? tmp_write_gz(big, blen, 1) : tmp_write(big, blen));
		enum sn_status st = SN_OK;
		uint32_t got, seen = 0, batches = 0;

		while ((got = cap_reader_next_batch(r, recs, 1024, &st)) > 0) {
			/* seven records of 150,016 bytes pass 1 MiB */
			ck_assert_uint_le(got, 7);
			for (uint32_t i = 0; i < got; i++, seen++) {
				ck_assert_uint_eq(recs[i].data[0], (uint8_t)(1 + seen));
				ck_assert_uint_eq(recs[i].data[recs[i].caplen - 1],
						  (uint8_t)(1 + seen));
			}
			batches++;
		}
		ck_assert_int_eq(st, SN_ENOTFOUND);
		ck_assert_uint_eq(seen, 40);
		ck_assert_uint_eq(batches, 6); /* 7 + 7 + 7 + 7 + 7 + 5 */
		cap_reader_free(r);

		r = open_ok(gz ? tmp_write_gz(small, len, 1) : tmp_write(small, len));
		ck_assert_uint_eq(cap_reader_next_batch(r, recs, 1024, &st), 1024);
		ck_assert_int_eq(st, SN_OK);
		cap_reader_free(r);
	}
	free(big);
	free(small);
}
END_TEST


/* ---------------------------------------------------------------- range reading (cursors) */

#define LOG_MAX 256

/* Records as a reader or a cursor returned them, with their bytes copied, and how it ended. */
struct rec_log {
	size_t n;
	struct cap_record rec[LOG_MAX];
	uint8_t data[65536];
	size_t data_len;
	enum sn_status end;
	struct sn_diag err;
};

static struct rec_log *log_new(void)
{
	struct rec_log *log = calloc(1, sizeof(*log));

	ck_assert_ptr_nonnull(log);
	return log;
}

static void log_add(struct rec_log *log, const struct cap_record *rec)
{
	ck_assert_uint_lt(log->n, LOG_MAX);
	ck_assert_uint_le(log->data_len + rec->caplen, sizeof(log->data));
	memcpy(log->data + log->data_len, rec->data, rec->caplen);
	log->rec[log->n] = *rec;
	log->rec[log->n].data = log->data + log->data_len;
	log->data_len += rec->caplen;
	log->n++;
}

/* What cap_reader_next() returns for @p path: the reference for range reading. */
static struct rec_log *log_sequential(const char *path)
{
	struct rec_log *log = log_new();
	struct cap_reader *r = open_ok(path);
	struct cap_record rec;
	enum sn_status st;

	while ((st = cap_reader_next(r, &rec)) == SN_OK) {
		/* data_at: where the bytes are in the file, which is all that is mapped */
		ck_assert_ptr_eq(cap_reader_map(r) + rec.offset + rec.data_at, rec.data);
		log_add(log, &rec);
	}
	log->end = st;
	log->err = *cap_reader_error(r);
	cap_reader_free(r);
	return log;
}

/*
 * What a reader reports for a file cut to @p cut bytes after it opened it, given @p log of
 * the cut file read whole: the same records, then the cut record's truncation, or a cut between
 * two records, saying that the file shrank (a new log; its records' data stay in @p log).
 */
static struct rec_log *log_cut_under(const struct rec_log *log, size_t cut)
{
	struct rec_log *want = log_new();
	char msg[2 * sizeof(want->err.msg)];

	memcpy(want, log, sizeof(*want));
	want->end = SN_ETRUNC;
	if (log->end == SN_ETRUNC) {
		snprintf(msg, sizeof(msg), "%s: it shrank to %zu bytes while it was read",
			 log->err.msg, cut);
	} else {
		ck_assert_int_eq(log->end, SN_ENOTFOUND);
		want->err.offset = cut;
		snprintf(msg, sizeof(msg), "file shrank to %zu bytes while it was read", cut);
	}
	ck_assert_uint_lt(strlen(msg), sizeof(want->err.msg));
	memcpy(want->err.msg, msg, sizeof(want->err.msg));
	return want;
}

/* @p rec is record @p i of @p log: same offset, time, lengths, link type, interface, bytes. */
static void expect_log_rec(const struct rec_log *log, size_t i, const struct cap_record *rec)
{
	const struct cap_record *want;

	ck_assert_uint_lt(i, log->n);
	want = &log->rec[i];
	ck_assert_uint_eq(rec->offset, want->offset);
	ck_assert_int_eq(rec->ts_ns, want->ts_ns);
	ck_assert_uint_eq(rec->caplen, want->caplen);
	ck_assert_uint_eq(rec->origlen, want->origlen);
	ck_assert_uint_eq(rec->linktype, want->linktype);
	ck_assert_uint_eq(rec->ifindex, want->ifindex);
	ck_assert_uint_eq(rec->file_index, 0);
	ck_assert(memcmp(rec->data, want->data, rec->caplen) == 0);
}

/* The end of a range reading that stopped on @p st matches the reader's end. */
static void expect_log_end(const struct rec_log *log, enum sn_status st, const struct cap_cursor *c)
{
	ck_assert_int_eq(st, log->end);
	if (st != SN_ENOTFOUND) {
		ck_assert_uint_eq(cap_cursor_error(c)->offset, log->err.offset);
		ck_assert_str_eq(cap_cursor_error(c)->msg, log->err.msg);
	}
}

/*
 * Read @p path in ranges of @p range_len bytes chained as threads hand ranges to each other:
 * each range with the other of two cursors, starting with the state and at the position the
 * range before ended with (cap_cursor_copy_state(), cap_cursor_pos()). Every record must be
 * the next one of @p log, and the input must end as it did for the reader.
 */
static void read_chained(const char *path, size_t range_len, const struct rec_log *log)
{
	struct cap_reader *r = open_ok(path);
	struct cap_cursor *tmpl;
	struct cap_cursor *cur[2];
	struct cap_record rec;
	enum sn_status st = SN_ENOTFOUND;
	size_t first, end;
	size_t i = 0;
	size_t k = 0;

	tmpl = cap_reader_split_begin(r, &first, &end);
	ck_assert_ptr_nonnull(tmpl);
	cur[0] = cap_cursor_new(tmpl);
	cur[1] = cap_cursor_new(tmpl);
	ck_assert_uint_eq(cap_cursor_pos(cur[0]), first);
	for (size_t lo = first;; lo += range_len, k++) {
		struct cap_cursor *c = cur[k % 2];
		size_t hi = SN_MIN(lo + range_len, end);

		if (k > 0) {
			cap_cursor_copy_state(c, cur[(k + 1) % 2]);
		}
		cap_cursor_seek(c, cap_cursor_pos(c), hi, false);
		while ((st = cap_cursor_next(c, &rec)) == SN_OK) {
			ck_assert_uint_ge(rec.offset, lo);
			ck_assert_uint_lt(rec.offset, hi);
			expect_log_rec(log, i++, &rec);
		}
		if (st != SN_ENOTFOUND) {
			expect_log_end(log, st, c);
			break;
		}
		ck_assert_uint_ge(cap_cursor_pos(c), hi);
		if (hi == end) {
			ck_assert_uint_eq(cap_cursor_pos(c), end);
			break;
		}
	}
	ck_assert_uint_eq(i, log->n);
	ck_assert_int_eq(st, log->end);
	cap_cursor_free(cur[0]);
	cap_cursor_free(cur[1]);
	cap_cursor_free(tmpl);
	cap_reader_free(r);
}

/* Read a range from @p c's position into @p out (emptied first); returns how it stopped. */
static enum sn_status read_range(struct cap_cursor *c, struct rec_log *out)
{
	struct cap_record rec;
	enum sn_status st;

	out->n = 0;
	out->data_len = 0;
	while ((st = cap_cursor_next(c, &rec)) == SN_OK) {
		log_add(out, &rec);
	}
	return st;
}

/*
 * Read @p path in ranges of @p range_len bytes the way the header prescribes for threads that
 * do not wait for each other: every range but the first starts speculatively at its
 * resynchronised first record; then, in order, a range is kept only if it starts where the
 * range before it ended, needed nothing from before it (cap_cursor_needs_prev()) and no range
 * before it changed the pcapng state (cap_cursor_changed()); else it is read again from where
 * the range before ended, with that range's state. The records kept must be exactly those of
 * @p log, ending as the reader ended. Returns the number of ranges read again.
 */
#define NO_FILL SIZE_MAX

/* The records of range [lo, hi): each starts in it, is read from @p buf and the cursor's own
 * buffers past it when there is a @p buf, else from the mapping, and is at offset + data_at
 * in the file. */
static void expect_in_place(const struct cap_reader *r, const struct rec_log *got,
			    const uint8_t *buf, size_t lo, size_t hi, size_t filled)
{
	for (size_t j = 0; j < got->n; j++) {
		const struct cap_record *rec = &got->rec[j];
		const uint8_t *at = cap_reader_map(r) + rec->offset + rec->data_at;

		ck_assert(memcmp(at, rec->data, rec->caplen) == 0);
		ck_assert_uint_lt(rec->offset, hi);
		/* transient: from a buffer, never the mapping */
		ck_assert_msg(rec->transient == (buf != NULL), "record at %llu of [%zu, +%zu)",
			      (unsigned long long)rec->offset, lo, filled);
	}
}

/* cap_cursor_fill() of [lo, hi + tail) into a new *buf (freed first), unless @p tail is
 * NO_FILL; returns the bytes read. */
static size_t fill_range(struct cap_cursor *c, uint8_t **buf, size_t lo, size_t hi, size_t tail)
{
	free(*buf);
	*buf = NULL;
	if (tail == NO_FILL) {
		return 0;
	}
	*buf = malloc(hi - lo + tail + 1);
	ck_assert_ptr_nonnull(*buf);
	return cap_cursor_fill(c, *buf, lo, hi - lo + tail);
}

static size_t read_verified_cut(const char *path, size_t range_len, const struct rec_log *log,
				size_t tail, size_t cut);

static size_t read_verified(const char *path, size_t range_len, const struct rec_log *log)
{
	return read_verified_cut(path, range_len, log, NO_FILL, SIZE_MAX);
}

static size_t read_verified_filled(const char *path, size_t range_len, const struct rec_log *log,
				   size_t tail)
{
	return read_verified_cut(path, range_len, log, tail, SIZE_MAX);
}

/*
 * read_verified(), each range read from a buffer of its bytes and @p tail more
 * (cap_cursor_fill()) unless @p tail is NO_FILL; a rescan fills it again. Unless @p cut is
 * SIZE_MAX, the file is cut to @p cut bytes once the reader has opened (and mapped) it, and
 * @p cut_log is the log of the cut file (log_cut_under()).
 */
static size_t read_verified_cut(const char *path, size_t range_len, const struct rec_log *cut_log,
				size_t tail, size_t cut)
{
	struct rec_log *want = cut != SIZE_MAX ? log_cut_under(cut_log, cut) : NULL;
	const struct rec_log *log = want ? want : cut_log;
	uint8_t *buf = NULL;
	size_t filled = 0;
	struct cap_reader *r = open_ok(path);
	struct rec_log *got = log_new();
	struct cap_cursor *tmpl;
	struct cap_cursor *state;
	struct cap_cursor *c;
	enum sn_status st = SN_ENOTFOUND;
	size_t first, end, expect;
	size_t i = 0;
	size_t rereads = 0;
	bool dirty = false;

	tmpl = cap_reader_split_begin(r, &first, &end);
	ck_assert_ptr_nonnull(tmpl);
	if (cut != SIZE_MAX) {
		ck_assert_int_eq(truncate(path, (off_t)cut), 0);
	}
	state = cap_cursor_new(tmpl);
	c = cap_cursor_new(tmpl);
	expect = first;
	for (size_t lo = first;; lo += range_len) {
		size_t hi = SN_MIN(lo + range_len, end);
		size_t start = 0;
		bool keep;

		cap_cursor_copy_state(c, tmpl);
		filled = fill_range(c, &buf, lo, hi, tail);
		if (lo == first) {
			cap_cursor_seek(c, first, hi, false);
			st = read_range(c, got);
			keep = true;
		} else if (cap_cursor_resync(c, lo, hi, &start) == SN_OK) {
			cap_cursor_seek(c, start, hi, true);
			st = read_range(c, got);
			keep = start == expect && !dirty && !cap_cursor_needs_prev(c);
		} else {
			keep = false;
		}
		if (!keep) {
			rereads++;
			cap_cursor_copy_state(c, state);
			filled = fill_range(c, &buf, lo, hi, tail);
			cap_cursor_seek(c, expect, hi, false);
			st = read_range(c, got);
		}
		expect_in_place(r, got, buf, lo, hi, filled);
		for (size_t j = 0; j < got->n; j++) {
			expect_log_rec(log, i++, &got->rec[j]);
		}
		if (st != SN_ENOTFOUND) {
			expect_log_end(log, st, c);
			break;
		}
		expect = cap_cursor_pos(c);
		dirty = dirty || cap_cursor_changed(c);
		cap_cursor_copy_state(state, c);
		if (hi == end) {
			break;
		}
	}
	ck_assert_uint_eq(i, log->n);
	ck_assert_int_eq(st, log->end);
	cap_cursor_free(c);
	cap_cursor_free(state);
	cap_cursor_free(tmpl);
	cap_reader_free(r);
	free(got);
	free(buf);
	free(want);
	return rereads;
}

static const size_t range_lens[] = {1, 3, 16, 17, 64, 100, 256, 1000, 100000};

/* Records i = 0..count-1: i s after 1700000000, 1..150 bytes k0+i, k0+i+1, ... */
static void pcap_many(struct tbuf *t, uint32_t count)
{
	pcap_hdr(t, 0xa1b2c3d4u, 65535, 1);
	for (uint32_t i = 0; i < count; i++) {
		uint32_t incl = 1 + i * 37 % 150;

		pcap_rec(t, 1700000000 + i, i * 7919 % 1000000, incl, incl + i % 3, (uint8_t)i);
	}
}

/* A whole pcap file (header and 9 records of 4 bytes, times near @p sec) as a record's data. */
static size_t pcap_rec_with_pcap(struct tbuf *t, uint32_t sec)
{
	size_t inner;

	put32(t, sec);
	put32(t, 0);
	put32(t, 24 + 9 * 20);
	put32(t, 24 + 9 * 20);
	pcap_hdr(t, 0xa1b2c3d4u, 65535, 1);
	inner = t->n;
	for (uint32_t j = 0; j < 9; j++) {
		pcap_rec(t, sec + j, j * 1000, 4, 4, (uint8_t)(0x80 + j));
	}
	return inner;
}

/* An interface statistics block with an opt_comment of @p comment_len bytes. */
static size_t png_isb(struct tbuf *t, uint16_t comment_len)
{
	size_t s = blk_begin(t, 5);

	put32(t, 0);
	put32(t, 0);
	put32(t, 0);
	put16(t, 1);
	put16(t, comment_len);
	for (uint16_t i = 0; i < comment_len; i++) {
		put8(t, 'c');
	}
	pad4(t);
	put16(t, 0);
	put16(t, 0);
	blk_end(t, s);
	return s;
}

/* ---------------------------------------------------------------- windowed reading */

/*
 * Five damaged captures, each read the same way however it is read: 20 records, then a file
 * cut inside a record header (0) or its data (1), a captured length of 0x7fffffff (2); a
 * pcapng cut after 5 records (3), a block length not a multiple of 4 after 2 (4).
 */
static void damaged_captures(const char *paths[5])
{
	static struct tbuf t;
	struct png_layout lay;
	struct rec_log *log;
	size_t rec20;

	memset(&t, 0, sizeof(t));
	pcap_many(&t, 30);
	log = log_sequential(tmp_write(t.b, t.n));
	rec20 = log->rec[20].offset;
	free(log);
	paths[0] = tmp_write(t.b, rec20 + 10);	   /* inside a record header */
	paths[1] = tmp_write(t.b, rec20 + 16 + 1); /* inside its data */
	t.b[rec20 + 8] = 0xff;
	t.b[rec20 + 9] = 0xff;
	t.b[rec20 + 10] = 0xff;
	t.b[rec20 + 11] = 0x7f; /* captured length 0x7fffffff */
	paths[2] = tmp_write(t.b, t.n);
	build_pcapng(&t, false, &lay);
	paths[3] = tmp_write(t.b, lay.epb3 + 20);
	t.b[lay.spb + 4] = 13; /* block length not a multiple of 4 */
	paths[4] = tmp_write(t.b, t.n);
}

/* What the reader reads of damaged capture @p p (damaged_captures()). */
static struct rec_log *damaged_log(const char *paths[5], size_t p)
{
	struct rec_log *log = log_sequential(paths[p]);

	ck_assert_int_eq(log->end, p == 2 || p == 4 ? SN_EPARSE : SN_ETRUNC);
	ck_assert_uint_eq(log->n, p < 3 ? 20 : p == 3 ? 5 : 2);
	return log;
}

/*
 * One pcapng section of 40 packets in @p t (emptied first): an IDB before packet 15 (packets
 * alternate between the two interfaces from there), every fourth packet an SPB, the others
 * EPBs of 5 + i * @p step bytes; with @p isbs an ISB with a long comment before packets 5,
 * 15, 25 and 35.
 */
static void png_mid_idb(struct tbuf *t, bool isbs, uint32_t step)
{
	memset(t, 0, sizeof(*t));
	png_shb(t);
	png_idb(t, 1, 0, -1, false, 0);
	for (uint32_t i = 0; i < 40; i++) {
		if (i == 15) {
			png_idb(t, 101, 0, 9, false, 0);
		}
		if (isbs && i % 10 == 5) {
			png_isb(t, (uint16_t)(50 + i * 10));
		}
		if (i % 4 == 3) {
			png_spb(t, 10 + i, 10 + i, (uint8_t)i);
		} else {
			png_epb(t, i >= 15 ? i % 2 : 0, 1700000000000000ULL + i * 1000, 5 + i * step,
				5 + i * step, (uint8_t)i);
		}
	}
}

/* Windows from one byte (every record grows it) to the default 2 MiB (0). */
static const size_t window_lens[] = {1, 7, 16, 64, 100, 257, 1000, 4096, 0};

/*
 * Read @p path in windows of @p window bytes (cap_reader_read_windowed()), @p max records at
 * a time (1: cap_reader_next(), else cap_reader_next_batch()). Every record must be the next
 * one of @p log (read through the mapping), marked transient, with its bytes checked before
 * the next call moves them; the input must end as it did for the mapped reader, at the same
 * offset for the same reason, and say so again when asked again.
 */
static void read_windowed(const char *path, size_t window, uint32_t max,
			  const struct rec_log *log)
{
	struct cap_reader *r = open_ok(path);
	struct cap_record recs[16];
	enum sn_status st;
	size_t first, end;
	size_t i = 0;

	ck_assert_uint_le(max, SN_ARRAY_SIZE(recs));
	ck_assert(cap_reader_read_windowed(r, window));
	ck_assert(cap_reader_read_windowed(r, window)); /* once is enough: still windowed */
	ck_assert_ptr_null(cap_reader_split_begin(r, &first, &end));
	for (;;) {
		uint32_t n;

		if (max == 1) {
			st = cap_reader_next(r, &recs[0]);
			n = st == SN_OK;
		} else {
			n = cap_reader_next_batch(r, recs, max, &st);
			ck_assert(n > 0 || st != SN_OK);
		}
		for (uint32_t k = 0; k < n; k++) {
			const struct cap_record *rec = &recs[k];

			ck_assert(rec->transient);
			ck_assert(memcmp(cap_reader_map(r) + rec->offset + rec->data_at, rec->data,
					 rec->caplen) == 0);
			expect_log_rec(log, i++, rec);
		}
		if (st != SN_OK) {
			break;
		}
	}
	ck_assert_msg(i == log->n, "%s, window %zu, batches of %u: %zu of %zu records", path,
		      window, max, i, log->n);
	ck_assert_int_eq(st, log->end);
	if (st != SN_ENOTFOUND) {
		ck_assert_uint_eq(cap_reader_error(r)->offset, log->err.offset);
		ck_assert_str_eq(cap_reader_error(r)->msg, log->err.msg);
	}
	ck_assert_int_eq(cap_reader_next(r, &recs[0]), st);
	cap_reader_free(r);
}

static void read_windowed_all_ways(const char *path, const struct rec_log *log)
{
	static const uint32_t maxes[] = {1, 2, 7, 16};

	for (size_t w = 0; w < SN_ARRAY_SIZE(window_lens); w++) {
		for (size_t m = 0; m < SN_ARRAY_SIZE(maxes); m++) {
			read_windowed(path, window_lens[w], maxes[m], log);
		}
	}
}

START_TEST(test_cap_reader_read_in_windows_gives_the_mapped_records)
{
	static struct tbuf t;
	struct png_layout lay;
	const char *paths[6];

	memset(&t, 0, sizeof(t));
	pcap_many(&t, 60);
	paths[0] = tmp_write(t.b, t.n);
	build_pcap(&t, true, 0xa1b23c4du);
	paths[1] = tmp_write(t.b, t.n);
	build_pcapng(&t, false, &lay); /* two sections, other byte order, SPB, OPB, unknown */
	paths[2] = tmp_write(t.b, t.n);
	/* non-packet blocks longer than the small windows, an IDB in the middle, SPBs */
	png_mid_idb(&t, true, 7);
	paths[3] = tmp_write(t.b, t.n);
	/* one record far longer than the default window's low mark and every small window */
	memset(&t, 0, sizeof(t));
	pcap_hdr(&t, 0xa1b2c3d4u, 65535, 1);
	pcap_rec(&t, 1700000000, 0, 30, 30, 1);
	pcap_rec(&t, 1700000001, 0, 9000, 9000, 2);
	pcap_rec(&t, 1700000002, 0, 3, 3, 3);
	paths[4] = tmp_write(t.b, t.n);
	/* a header and no record */
	memset(&t, 0, sizeof(t));
	pcap_hdr(&t, 0xa1b2c3d4u, 65535, 1);
	paths[5] = tmp_write(t.b, t.n);
	for (size_t p = 0; p < SN_ARRAY_SIZE(paths); p++) {
		struct rec_log *log = log_sequential(paths[p]);

		ck_assert_int_eq(log->end, SN_ENOTFOUND);
		ck_assert_uint_eq(log->n, p == 4 ? 3 : p == 5 ? 0 : log->n);
		read_windowed_all_ways(paths[p], log);
		free(log);
	}
}
END_TEST

/* cap_reader_set_fence() for read_fenced(): counts the calls, keeps the retired windows */
struct fence_count {
	uint32_t calls;
	uint32_t retired;
	uint8_t *win[2];
};

static void count_fence(void *ctx, size_t input)
{
	struct fence_count *f = ctx;

	ck_assert_uint_eq(input, 7);
	f->calls++;
}

static void keep_retired(void *ctx, size_t input, uint8_t *win[2], size_t cap[2])
{
	struct fence_count *f = ctx;

	ck_assert_uint_eq(input, 7);
	ck_assert_ptr_nonnull(win[0]);
	ck_assert_uint_gt(cap[0], 0);
	ck_assert_uint_eq(f->retired, 0); /* once */
	f->retired++;
	f->win[0] = win[0];
	f->win[1] = win[1];
}

/*
 * Read @p path in windows growing from @p first bytes to @p max with a fence (one of several
 * inputs whose records workers analyse later): the records of @p log, and every record read
 * since the refill before the last one (the fence before the last one) still holds its bytes.
 */
static void read_fenced(const char *path, size_t first, size_t max, const struct rec_log *log)
{
	struct cap_reader *r = open_ok(path);
	static struct cap_record kept[LOG_MAX];
	static uint32_t epoch[LOG_MAX];
	struct fence_count f = {0};
	struct cap_window_hooks hooks = {.fence = count_fence, .retire = keep_retired, .ctx = &f};
	struct cap_window_pool *pool = cap_window_pool_new();
	struct cap_record rec;
	enum sn_status st;
	size_t i = 0;

	ck_assert(cap_reader_read_windowed_growing(r, first, max, pool));
	cap_reader_set_fence(r, &hooks, 7);
	while ((st = cap_reader_next(r, &rec)) == SN_OK) {
		ck_assert(rec.transient);
		expect_log_rec(log, i, &rec);
		kept[i] = rec;
		epoch[i] = f.calls;
		i++;
		for (size_t j = 0; j < i; j++) {
			if (epoch[j] + 1 >= f.calls) {
				ck_assert_msg(memcmp(cap_reader_map(r) + kept[j].offset +
							     kept[j].data_at,
						     kept[j].data, kept[j].caplen) == 0,
					      "%s, windows %zu-%zu: record %zu of fence %u changed at fence %u",
					      path, first, max, j, epoch[j], f.calls);
			}
		}
	}
	ck_assert_uint_eq(i, log->n);
	ck_assert_int_eq(st, log->end);
	if (st != SN_ENOTFOUND) {
		ck_assert_uint_eq(cap_reader_error(r)->offset, log->err.offset);
		ck_assert_str_eq(cap_reader_error(r)->msg, log->err.msg);
	}
	/* a reader that read past its first window refilled it after the fence */
	if (log->n > 1 && log->rec[log->n - 1].offset > first + 24) {
		ck_assert_uint_ge(f.calls, 1);
	}
	/* ended: its windows are handed over, records still intact, and it stays ended */
	cap_reader_end_input(r);
	ck_assert_uint_ge(f.retired, 1);
	for (size_t j = 0; j < i; j++) {
		if (epoch[j] + 1 >= f.calls) {
			ck_assert(memcmp(cap_reader_map(r) + kept[j].offset + kept[j].data_at,
					 kept[j].data, kept[j].caplen) == 0);
		}
	}
	ck_assert_int_eq(cap_reader_next(r, &rec), st);
	for (int k = 0; k < 2; k++) {
		cap_window_pool_put(pool, f.win[k], 1);
	}
	cap_reader_free(r);
	cap_window_pool_free(pool);
}

/* Windows that a fence keeps for the workers (several inputs at --cores 2 and more): a refill
 * moves to the other window and never overwrites the one the records before the last refill
 * were read from; the records, and how the input ends, are the mapped reader's. */
START_TEST(test_cap_reader_fenced_windows_keep_the_last_windows_records)
{
	static struct tbuf t;
	const char *paths[7];
	struct rec_log *log;
	static const size_t firsts[] = {1, 16, 100, 4096, 16384};
	static const size_t maxes[] = {0, 64, 1000, 4096};

	memset(&t, 0, sizeof(t));
	pcap_many(&t, 60);
	paths[0] = tmp_write(t.b, t.n);
	png_mid_idb(&t, true, 7);
	paths[1] = tmp_write(t.b, t.n);
	damaged_captures(paths + 2);
	for (size_t p = 0; p < SN_ARRAY_SIZE(paths); p++) {
		log = p < 2 ? log_sequential(paths[p]) : damaged_log(paths + 2, p - 2);
		for (size_t a = 0; a < SN_ARRAY_SIZE(firsts); a++) {
			for (size_t b = 0; b < SN_ARRAY_SIZE(maxes); b++) {
				read_fenced(paths[p], firsts[a], maxes[b], log);
			}
		}
		free(log);
	}
}
END_TEST

START_TEST(test_cap_reader_read_in_windows_reports_truncation_and_corruption_like_mapped)
{
	struct rec_log *log;
	const char *paths[5];

	damaged_captures(paths);
	for (size_t p = 0; p < SN_ARRAY_SIZE(paths); p++) {
		log = damaged_log(paths, p);
		read_windowed_all_ways(paths[p], log);
		free(log);
	}
}
END_TEST

/*
 * Read 5 records of @p r (a reader of @p path), cut the file to @p cut bytes, and read on: the
 * records of @p log (the cut file's, read whole), then the truncation that log_cut_under()
 * describes.
 */
static void read_across_cut(struct cap_reader *r, const char *path, size_t cut,
			    const struct rec_log *log)
{
	struct cap_record rec;
	struct rec_log *want;
	enum sn_status st;
	size_t i;

	for (i = 0; i < 5; i++) {
		ck_assert_int_eq(cap_reader_next(r, &rec), SN_OK);
		expect_log_rec(log, i, &rec);
	}
	ck_assert_int_eq(truncate(path, (off_t)cut), 0);
	while ((st = cap_reader_next(r, &rec)) == SN_OK) {
		expect_log_rec(log, i++, &rec);
	}
	ck_assert_int_eq(st, SN_ETRUNC);
	ck_assert_uint_eq(i, log->n);
	want = log_cut_under(log, cut);
	ck_assert_uint_eq(cap_reader_error(r)->offset, want->err.offset);
	ck_assert_str_eq(cap_reader_error(r)->msg, want->err.msg);
	free(want);
}

/* 60 records into @p t, and *@p cut, a byte offset inside its 41st record: the log of @p t cut
 * there (40 records, then the truncation). */
static struct rec_log *log_cut_capture(struct tbuf *t, size_t *cut)
{
	struct rec_log *log;

	memset(t, 0, sizeof(*t));
	pcap_many(t, 60);
	log = log_sequential(tmp_write(t->b, t->n));
	*cut = log->rec[40].offset + 20;
	free(log);
	return log_sequential(tmp_write(t->b, *cut));
}

/* A file cut while it is read (a capture rotated under the reader): read through a mapping,
 * touching the lost pages would kill the process (SIGBUS); read in windows, it is a
 * truncation at the record that was cut, which says that the file shrank, and every record
 * before it is read. */
START_TEST(test_cap_reader_read_in_windows_survives_a_file_cut_under_it)
{
	static struct tbuf t;
	struct cap_reader *r;
	struct rec_log *log;
	const char *path;
	size_t cut;

	log = log_cut_capture(&t, &cut);
	ck_assert_int_eq(log->end, SN_ETRUNC);
	ck_assert_uint_eq(log->n, 40);
	path = tmp_write(t.b, t.n);
	r = open_ok(path);
	ck_assert(cap_reader_read_windowed(r, 256));
	read_across_cut(r, path, cut, log);
	cap_reader_free(r);
	free(log);
}
END_TEST

/* The same for ranges read from buffers (--cores 2 and up): the range that reads short ends
 * at the cut record, and nothing is read from the mapping, whose pages past the cut are
 * lost. */
START_TEST(test_cap_cursor_ranges_from_buffers_survive_a_file_cut_under_them)
{
	static const size_t lens[] = {64, 1000, 5000};
	static const size_t tails[] = {0, 16, 4096};
	static struct tbuf t;
	struct rec_log *log;
	struct cap_reader *r;
	const char *path;
	size_t cuts[3];
	size_t first, end;

	for (int png = 0; png < 2; png++) {
		memset(&t, 0, sizeof(t));
		if (png) {
			/* 13.9 KB of blocks: the leading SHB and IDB read with pread() too */
			png_shb(&t);
			png_idb(&t, 1, 65535, -1, false, 0);
			for (uint32_t i = 0; i < 120; i++) {
				uint32_t cap = 1 + i * 37 % 150;

				(void)png_epb(&t, 0, 1700000000ull * 1000000 + i, cap, cap, (uint8_t)i);
			}
		} else {
			pcap_many(&t, 160); /* 14.6 KB: pages of the mapping wholly past each cut */
		}
		log = log_sequential(tmp_write(t.b, t.n));
		ck_assert_uint_ge(log->n, 120);
		cuts[0] = log->rec[40].offset + 20;  /* inside a record's data */
		cuts[1] = log->rec[90].offset + 7;   /* inside a record's header */
		cuts[2] = log->rec[110].offset;      /* between two records: a clean end */
		free(log);
		for (size_t k = 0; k < SN_ARRAY_SIZE(cuts); k++) {
			log = log_sequential(tmp_write(t.b, cuts[k]));
			ck_assert_int_eq(log->end, k < 2 ? SN_ETRUNC : SN_ENOTFOUND);
			for (size_t i = 0; i < SN_ARRAY_SIZE(lens); i++) {
				for (size_t j = 0; j < SN_ARRAY_SIZE(tails); j++) {
					path = tmp_write(t.b, t.n);
					read_verified_cut(path, lens[i], log, tails[j], cuts[k]);
				}
			}
			free(log);
		}
	}
	/* a pcapng cut to nothing after it was opened, before range reading begins (as
	 * logrotate's copytruncate does): its leading blocks are read with pread(), not from
	 * the mapping's lost pages */
	path = tmp_write(t.b, t.n);
	r = open_ok(path);
	ck_assert_int_eq(truncate(path, 0), 0);
	ck_assert_ptr_null(cap_reader_split_begin(r, &first, &end));
	cap_reader_free(r);
}
END_TEST

/* A file cut inside the last record of a range that was read before the cut (its record
 * whole, from its buffer): the next range, read after it, ends the input where that range
 * ended, not back at the cut, below records already read (as one reader would). */
START_TEST(test_cap_cursor_range_after_a_cut_ends_where_the_range_before_ended)
{
	static struct tbuf t;
	struct rec_log *log;
	struct cap_reader *r;
	struct cap_cursor *tmpl, *c, *state;
	struct cap_record rec;
	const char *path;
	uint8_t *b1, *b2;
	size_t first, end, hi1, expect, cut;
	uint32_t n = 0;
	char want[128];

	memset(&t, 0, sizeof(t));
	pcap_many(&t, 160);
	path = tmp_write(t.b, t.n);
	log = log_sequential(path);
	hi1 = log->rec[30].offset + 5; /* record 30 reaches past the range's end */
	expect = log->rec[31].offset;
	cut = hi1 + 2;
	r = open_ok(path);
	tmpl = cap_reader_split_begin(r, &first, &end);
	ck_assert_ptr_nonnull(tmpl);
	c = cap_cursor_new(tmpl);
	b1 = malloc(hi1 - first + 4096);
	ck_assert_uint_eq(cap_cursor_fill(c, b1, first, hi1 - first + 4096), hi1 - first + 4096);
	cap_cursor_seek(c, first, hi1, false);
	while (cap_cursor_next(c, &rec) == SN_OK) {
		expect_log_rec(log, n++, &rec);
	}
	ck_assert_uint_eq(n, 31);
	ck_assert_uint_eq(cap_cursor_pos(c), expect);
	state = cap_cursor_new(c);
	ck_assert_int_eq(truncate(path, (off_t)cut), 0);
	/* the next range: read short, no start found in it, read again from where the range
	 * before ended */
	b2 = malloc(1000 + 4096);
	cap_cursor_copy_state(c, tmpl);
	ck_assert_uint_eq(cap_cursor_fill(c, b2, hi1, 1000 + 4096), cut - hi1);
	cap_cursor_copy_state(c, state);
	(void)cap_cursor_fill(c, b2, hi1, 1000 + 4096);
	cap_cursor_seek(c, expect, hi1 + 1000, false);
	ck_assert_int_eq(cap_cursor_next(c, &rec), SN_ETRUNC);
	ck_assert_uint_eq(cap_cursor_error(c)->offset, expect);
	snprintf(want, sizeof(want), "file shrank to %zu bytes while it was read", cut);
	ck_assert_str_eq(cap_cursor_error(c)->msg, want);
	cap_cursor_free(state);
	cap_cursor_free(c);
	cap_cursor_free(tmpl);
	cap_reader_free(r);
	free(b1);
	free(b2);
	free(log);
}
END_TEST

START_TEST(test_cap_reader_read_in_windows_only_for_a_mapped_file)
{
	struct tbuf t = {.be = false};
	struct cap_reader *rs[2];
	struct cap_reader *r;
	struct cap_merge *m;
	const char *path;
	struct cap_record rec;

	build_pcap(&t, false, 0xa1b2c3d4u);
	r = open_ok(tmp_write_gz(t.b, t.n, 1));
	ck_assert(!cap_reader_read_windowed(r, 0));
	ck_assert_int_eq(cap_reader_next(r, &rec), SN_OK);
	ck_assert(rec.transient); /* streamed, as before */
	cap_reader_free(r);
	/* a merge: its one input, and only before it is read; several inputs each in windows of
	 * their own (not the only input: false), also those opened for a merge, with or without
	 * their descriptor kept */
	path = tmp_write(t.b, t.n);
	rs[0] = open_ok(path);
	rs[1] = open_ok(path);
	m = cap_merge_new(rs, 2);
	ck_assert(!cap_merge_read_windowed(m));
	for (int k = 0; k < 2; k++) {
		ck_assert_int_eq(cap_merge_next(m, &rec, NULL, NULL), SN_OK);
		ck_assert(rec.transient);
	}
	cap_merge_free(m);
	ck_assert_int_eq(cap_reader_open_merged(path, true, &rs[0], NULL), SN_OK);
	ck_assert_int_eq(cap_reader_open_merged(path, false, &rs[1], NULL), SN_OK);
	ck_assert(!cap_reader_mapped(rs[0]) && !cap_reader_mapped(rs[1]));
	m = cap_merge_new(rs, 2);
	ck_assert(!cap_merge_read_windowed(m));
	for (int k = 0; k < 2; k++) {
		ck_assert_int_eq(cap_merge_next(m, &rec, NULL, NULL), SN_OK);
		ck_assert(rec.transient);
	}
	cap_merge_free(m);
	rs[0] = open_ok(path);
	m = cap_merge_new(rs, 1);
	ck_assert(cap_merge_read_windowed(m));
	ck_assert_int_eq(cap_merge_next(m, &rec, NULL, NULL), SN_OK);
	ck_assert(rec.transient);
	cap_merge_free(m);
	rs[0] = open_ok(path);
	m = cap_merge_new(rs, 1);
	ck_assert_int_eq(cap_merge_next(m, &rec, NULL, NULL), SN_OK);
	ck_assert(!cap_merge_read_windowed(m));
	ck_assert_int_eq(cap_merge_next(m, &rec, NULL, NULL), SN_OK);
	ck_assert(!rec.transient);
	cap_merge_free(m);
}
END_TEST


/* ---------------------------------------------------------------- opened for a merge */

/* Entries of directory @p path, but . and .. */
static int count_entries(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	int n = 0;

	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d)) != NULL) {
		n += e->d_name[0] != '.';
	}
	closedir(d);
	return n;
}

/* The input of @p r ended, saying that its file was removed (@p removed) or that another
 * file has its name now. */
static void expect_file_gone(struct cap_reader *r, bool removed)
{
	ck_assert_ptr_nonnull(strstr(cap_reader_error(r)->msg,
				     removed ? strerror(ENOENT)
					     : "another file has its name now: it was rotated or "
					       "removed while it was read"));
}

/* Descriptors this process has open. */
static int count_fds(void)
{
	return count_entries("/proc/self/fd") - 1; /* the directory's own */
}

static struct cap_reader *open_merged_ok(const char *path, bool keep_fd)
{
	struct cap_reader *r = NULL;
	struct sn_diag d;
	int fds = count_fds();

	memset(&d, 0, sizeof(d));
	ck_assert_msg(cap_reader_open_merged(path, keep_fd, &r, &d) == SN_OK, "open %s: %s", path,
		      d.msg);
	ck_assert_ptr_nonnull(r);
	ck_assert(!cap_reader_mapped(r));
	ck_assert_ptr_null(cap_reader_map(r));
	/* without its descriptor kept, the reader holds none between reads */
	ck_assert_int_eq(count_fds(), fds + (keep_fd ? 1 : 0));
	return r;
}

/*
 * Read @p path opened for a merge (cap_reader_open_merged()), in windows up to @p max bytes
 * (cap_reader_read_windowed_growing(); 4096 keeps the first one's size: a refill every few
 * records), its descriptor kept (@p keep 1), not kept (0), or kept and given up before the
 * first read (2: cap_reader_release_fd()). Every record must be the next one of @p log (the
 * mapped reader's) and transient, and the input must end as it did for the mapped reader, at
 * the same offset for the same reason.
 */
static void read_merged_open(const char *path, int keep, size_t max, const struct rec_log *log)
{
	struct cap_reader *r = open_merged_ok(path, keep != 0);
	bool keep_fd = keep == 1;
	int fds;

	ck_assert(cap_reader_reopenable(r));
	ck_assert(cap_reader_holds_fd(r) == (keep != 0));
	if (keep == 2) {
		ck_assert(cap_reader_release_fd(r));
		ck_assert(!cap_reader_release_fd(r));
		ck_assert(!cap_reader_holds_fd(r));
	}
	fds = count_fds();
	struct cap_record rec;
	enum sn_status st;
	size_t i = 0;

	ck_assert(cap_reader_read_windowed_growing(r, 4096, max, NULL));
	while ((st = cap_reader_next(r, &rec)) == SN_OK) {
		ck_assert(rec.transient);
		expect_log_rec(log, i++, &rec);
		ck_assert_int_eq(count_fds(), fds);
	}
	ck_assert_msg(i == log->n, "%s, keep %d, max %zu: %zu of %zu records", path, keep, max, i,
		      log->n);
	ck_assert_int_eq(st, log->end);
	if (st != SN_ENOTFOUND) {
		ck_assert_uint_eq(cap_reader_error(r)->offset, log->err.offset);
		ck_assert_str_eq(cap_reader_error(r)->msg, log->err.msg);
	}
	ck_assert_int_eq(cap_reader_next(r, &rec), st);
	cap_reader_free(r);
	ck_assert_int_eq(count_fds(), fds - (keep_fd ? 1 : 0));
}

/* Files to be merged are read in windows from their opening, never mapped, with or without
 * their descriptor kept open: the records and ends of the mapped reader, for every format and
 * every damage. */
START_TEST(test_cap_reader_open_merged_gives_the_mapped_records)
{
	static struct tbuf t;
	struct png_layout lay;
	const char *paths[11];

	memset(&t, 0, sizeof(t));
	pcap_many(&t, 150); /* about 14 KB: several windows of 4 KiB */
	paths[0] = tmp_write(t.b, t.n);
	build_pcap(&t, true, 0xa1b23c4du);
	paths[1] = tmp_write(t.b, t.n);
	build_pcapng(&t, false, &lay);
	paths[2] = tmp_write(t.b, t.n);
	png_mid_idb(&t, true, 7); /* blocks longer than the first window, an IDB midway */
	paths[3] = tmp_write(t.b, t.n);
	memset(&t, 0, sizeof(t));
	pcap_hdr(&t, 0xa1b2c3d4u, 65535, 1);
	pcap_rec(&t, 1700000000, 0, 9000, 9000, 2); /* the first record longer than a window */
	pcap_rec(&t, 1700000001, 0, 3, 3, 3);
	paths[4] = tmp_write(t.b, t.n);
	memset(&t, 0, sizeof(t));
	pcap_hdr(&t, 0xa1b2c3d4u, 65535, 1);
	paths[5] = tmp_write(t.b, t.n);
	damaged_captures(&paths[6]);
	for (size_t p = 0; p < SN_ARRAY_SIZE(paths); p++) {
		struct rec_log *log = log_sequential(paths[p]);

		ck_assert_int_eq(log->end, p < 6 ? SN_ENOTFOUND : p == 8 || p == 10 ? SN_EPARSE
										    : SN_ETRUNC);
		for (int keep = 0; keep < 3; keep++) {
			read_merged_open(paths[p], keep, 4096, log);
			read_merged_open(paths[p], keep, 0, log);
		}
		free(log);
	}
}
END_TEST

/* A file merged without its descriptor kept is opened again by its name for each window: cut
 * meanwhile, it is a truncation as for one kept open; renamed away with another file put in
 * its place, or removed, its input ends at the end of what was read, saying why, instead of
 * reading another file's bytes as its own. */
START_TEST(test_cap_reader_open_merged_ends_when_its_file_is_replaced)
{
	static struct tbuf t;
	struct rec_log *log;
	struct cap_reader *r;
	struct cap_record rec;
	enum sn_status st;
	char moved[600];
	const char *path;
	size_t cut, i;

	memset(&t, 0, sizeof(t));
	pcap_many(&t, 150);
	log = log_sequential(tmp_write(t.b, t.n));
	cut = log->rec[120].offset + 20;
	free(log);
	log = log_sequential(tmp_write(t.b, cut));
	ck_assert_uint_eq(log->n, 120);
	/* cut: the same inode, shorter */
	path = tmp_write(t.b, t.n);
	r = open_merged_ok(path, false);
	ck_assert(cap_reader_read_windowed_growing(r, 4096, 4096, NULL));
	read_across_cut(r, path, cut, log);
	cap_reader_free(r);
	free(log);
	/* renamed, and another capture (the same bytes) written under its name; renamed, and
	 * nothing under its name; removed (nothing holds it open: its inode number is free),
	 * and another written under its name, often given the same inode number */
	log = log_sequential(tmp_write(t.b, t.n));
	for (int how = 0; how < 3; how++) {
		struct statx stx;

		path = tmp_write(t.b, t.n);
		if (how == 2 && (statx(AT_FDCWD, path, 0, STATX_BTIME, &stx) != 0 ||
				 !(stx.stx_mask & STATX_BTIME))) {
			continue; /* no birth time here: only the inode tells (sipnab.1, BUGS) */
		}
		r = open_merged_ok(path, false);
		ck_assert(cap_reader_read_windowed_growing(r, 4096, 4096, NULL));
		ck_assert_int_eq(cap_reader_next(r, &rec), SN_OK);
		expect_log_rec(log, 0, &rec);
		snprintf(moved, sizeof(moved), "%s.1", path);
		if (how < 2) {
			ck_assert_int_eq(rename(path, moved), 0);
		} else {
			ck_assert_int_eq(unlink(path), 0);
		}
		if (how != 1) {
			FILE *f = fopen(path, "wb");

			ck_assert_ptr_nonnull(f);
			ck_assert_uint_eq(fwrite(t.b, 1, t.n, f), t.n);
			ck_assert_int_eq(fclose(f), 0);
		}
		i = 1;
		while ((st = cap_reader_next(r, &rec)) == SN_OK) {
			expect_log_rec(log, i++, &rec);
		}
		/* the first window's records, and no more */
		ck_assert_int_eq(st, SN_ETRUNC);
		ck_assert_uint_gt(i, 5);
		ck_assert_uint_lt(i, log->n);
		ck_assert_uint_le(cap_reader_error(r)->offset, 4096);
		expect_file_gone(r, how == 1);
		ck_assert_int_eq(cap_reader_next(r, &rec), SN_ETRUNC);
		cap_reader_free(r);
		if (how < 2) {
			ck_assert_int_eq(unlink(moved), 0);
		}
	}
	free(log);
}
END_TEST

/* What a merge opens that is not a regular uncompressed file reads as cap_reader_open() reads
 * it: gzip (with or without the descriptor asked to be kept), errors alike. */
START_TEST(test_cap_reader_open_merged_opens_gzip_and_rejects_like_open)
{
	static const char text[] = "INVITE sip:bob@example.com SIP/2.0\r\nVia: x\r\n\r\n";
	struct cap_reader *r = NULL;
	struct sn_diag d, d2;
	struct tbuf t;
	const char *bad[3];
	char missing[512];

	build_pcap(&t, false, 0xa1b2c3d4u);
	for (int keep = 0; keep < 2; keep++) {
		ck_assert_int_eq(cap_reader_open_merged(tmp_write_gz(t.b, t.n, 2), keep, &r, &d),
				 SN_OK);
		ck_assert_str_eq(cap_reader_format(r), "pcap+gzip");
		/* it waits with its descriptor if asked to keep it, and may give it up */
		ck_assert(cap_reader_holds_fd(r) == keep && cap_reader_release_fd(r) == keep);
		ck_assert(!cap_reader_holds_fd(r));
		check_pcap_records(r, false);
		cap_reader_free(r);
	}
	snprintf(missing, sizeof(missing), "%s/does-not-exist.pcap", tmpdir);
	bad[0] = missing;
	bad[1] = tmpdir;
	bad[2] = tmp_write(text, sizeof(text) - 1);
	for (size_t i = 0; i < SN_ARRAY_SIZE(bad); i++) {
		for (int keep = 0; keep < 2; keep++) {
			enum sn_status want = cap_reader_open(bad[i], &r, &d);

			r = NULL;
			ck_assert_int_eq(cap_reader_open_merged(bad[i], keep, &r, &d2), want);
			ck_assert_ptr_null(r);
			ck_assert_int_eq(d2.err, d.err);
			ck_assert_str_eq(d2.msg, d.msg);
		}
	}
}
END_TEST

/* Threads of this process. */
static int count_threads(void)
{
	return count_entries("/proc/self/task");
}

/*
 * count_threads() once it is @p want, or after 2 s: a joined thread has ended, but the kernel
 * may list it in /proc/self/task a little longer (pthread_join() returns when the thread's
 * exit clears its id, before the kernel has reaped it): one check in ten saw it.
 */
static int threads_settle(int want)
{
	int n = count_threads();

	for (int i = 0; i < 2000 && n != want; i++) {
		usleep(1000);
		n = count_threads();
	}
	return n;
}

/* @p path gzip-compressed into a new file (its path, to be freed). */
static char *gz_copy(const char *path)
{
	FILE *f = fopen(path, "rb");
	static uint8_t buf[65536];
	size_t n;
	char *out;

	ck_assert_ptr_nonnull(f);
	n = fread(buf, 1, sizeof(buf), f);
	ck_assert(feof(f));
	fclose(f);
	out = strdup(tmp_write_gz(buf, n, 1));
	ck_assert_ptr_nonnull(out);
	return out;
}

/* A pcap of @p count records of @p len bytes that gzip cannot shrink (xorshift from @p seed),
 * one a second from @p sec. */
static void pcap_random_from(struct tbuf *t, uint32_t count, uint32_t len, uint32_t seed,
			     uint32_t sec)
{
	memset(t, 0, sizeof(*t));
	pcap_hdr(t, 0xa1b2c3d4u, 65535, 1);
	for (uint32_t i = 0; i < count; i++) {
		put32(t, sec + i);
		put32(t, i);
		put32(t, len);
		put32(t, len);
		/* one check a record, not a byte: each is a write() to the test's parent */
		ck_assert_uint_le(t->n + len, sizeof(t->b));
		for (uint32_t k = 0; k < len; k++) {
			seed ^= seed << 13;
			seed ^= seed >> 17;
			seed ^= seed << 5;
			t->b[t->n++] = (uint8_t)seed;
		}
	}
}

static void pcap_random(struct tbuf *t, uint32_t count, uint32_t len, uint32_t seed)
{
	pcap_random_from(t, count, len, seed, 1700000000);
}

/*
 * A gzip file opened for a merge waits until it is read: no descriptor, no thread, and the
 * time of its first record known (cap_reader_first_ts()). Read, it gives the records and the
 * end of the same capture uncompressed, marked transient; once its input ended
 * (cap_reader_end_input()), its descriptor and inflater thread are gone. Files: small ones
 * (inflated whole when read), one larger than what its first page inflates to (read by an
 * inflater thread), pcapng, every damage, a header alone (read at once: it has no first
 * record to wait for), and one whose first record lies past what the first page inflates to
 * (found further on). A first record past the first 4 MiB: read on at once, as before.
 */
START_TEST(test_cap_reader_open_merged_gzip_waits_until_read)
{
	static struct tbuf t;
	struct png_layout lay;
	const char *damaged[5];
	char *plain[10];

	build_pcap(&t, false, 0xa1b2c3d4u);
	plain[0] = strdup(tmp_write(t.b, t.n));
	build_pcapng(&t, false, &lay);
	plain[1] = strdup(tmp_write(t.b, t.n));
	pcap_random(&t, 150, 200, 1); /* 32 KiB, about as much compressed */
	plain[2] = strdup(tmp_write(t.b, t.n));
	damaged_captures(damaged);
	for (int i = 0; i < 5; i++) {
		plain[3 + i] = strdup(damaged[i]);
	}
	memset(&t, 0, sizeof(t));
	pcap_hdr(&t, 0xa1b2c3d4u, 65535, 1);
	plain[8] = strdup(tmp_write(t.b, t.n));
	pcap_random(&t, 3, 20000, 2); /* the first record past what the first page gives */
	plain[9] = strdup(tmp_write(t.b, t.n));
	for (size_t q = 0; q < 2 * SN_ARRAY_SIZE(plain); q++) {
		size_t p = q / 2;
		bool keep = q % 2;
		struct rec_log *log = log_sequential(plain[p]);
		char *gz = gz_copy(plain[p]);
		bool waits = p != 8;
		bool streamed = p == 2 || p == 9; /* more than the probe inflates: a thread */
		int fds = count_fds();
		int threads = count_threads();
		struct cap_reader *r = NULL;
		struct cap_record rec;
		struct sn_diag d = {0};
		enum sn_status st;
		int64_t ts = -1;
		size_t i = 0;

		ck_assert_int_eq(cap_reader_open_merged(gz, keep, &r, &d), SN_OK);
		ck_assert_str_eq(cap_reader_format(r), p == 1 || p == 6 || p == 7 ? "pcapng+gzip"
										    : "pcap+gzip");
		ck_assert_msg(cap_reader_first_ts(r, &ts) == waits, "file %zu", p);
		if (waits) {
			/* its descriptor if kept, as a file read in windows keeps its own */
			ck_assert_int_eq(ts, log->rec[0].ts_ns);
			ck_assert_int_eq(count_fds(), fds + keep);
			ck_assert_int_eq(count_threads(), threads); /* none started */
			ck_assert(cap_reader_holds_fd(r) == keep);
		} else {
			/* a header alone is read at once, inflated whole */
			ck_assert_int_eq(count_fds(), fds);
		}
		while ((st = cap_reader_next(r, &rec)) == SN_OK) {
			ck_assert(rec.transient);
			expect_log_rec(log, i++, &rec);
			/* the file's descriptor while an inflater reads it; none when inflated whole */
			ck_assert_int_eq(count_fds(), fds + streamed);
		}
		ck_assert_uint_eq(i, log->n);
		ck_assert_int_eq(st, log->end);
		if (st != SN_ENOTFOUND) {
			ck_assert_uint_eq(cap_reader_error(r)->offset, log->err.offset);
			ck_assert_str_eq(cap_reader_error(r)->msg, log->err.msg);
		}
		ck_assert(!cap_reader_first_ts(r, &ts));
		cap_reader_end_input(r);
		ck_assert_int_eq(count_fds(), fds);
		ck_assert_int_eq(threads_settle(threads), threads);
		ck_assert_int_eq(cap_reader_next(r, &rec), st);
		cap_reader_free(r);
		free(log);
		free(gz);
		if (keep) {
			free(plain[p]);
		}
	}
	{
		/* a first record of 5 MiB */
		static const uint8_t zero[65536];
		const char *big = tmp_write("", 0);
		gzFile f = gzopen(big, "wb1");
		struct cap_reader *r = NULL;
		struct cap_record rec;
		struct sn_diag d = {0};
		int64_t ts;
		int fds;

		memset(&t, 0, sizeof(t));
		pcap_hdr(&t, 0xa1b2c3d4u, 0, 1);
		put32(&t, 1700000000);
		put32(&t, 5);
		put32(&t, 5u << 20);
		put32(&t, 5u << 20);
		ck_assert_ptr_nonnull(f);
		ck_assert_int_eq(gzwrite(f, t.b, (unsigned)t.n), (int)t.n);
		for (int i = 0; i < 80; i++) {
			ck_assert_int_eq(gzwrite(f, zero, sizeof(zero)), (int)sizeof(zero));
		}
		ck_assert_int_eq(gzclose(f), Z_OK);
		fds = count_fds();
		ck_assert_int_eq(cap_reader_open_merged(big, false, &r, &d), SN_OK);
		ck_assert(!cap_reader_first_ts(r, &ts));
		ck_assert_int_eq(count_fds(), fds + 1); /* its inflater's */
		ck_assert_int_eq(cap_reader_next(r, &rec), SN_OK);
		ck_assert_int_eq(rec.ts_ns, 1700000000LL * 1000000000 + 5000);
		ck_assert_uint_eq(rec.caplen, 5u << 20);
		ck_assert_int_eq(cap_reader_next(r, &rec), SN_ENOTFOUND);
		cap_reader_end_input(r);
		ck_assert_int_eq(count_fds(), fds);
		cap_reader_free(r);
	}
}
END_TEST

/* A gzip file merged that is removed, or renamed away with another file put in its place,
 * before the merge reaches it: its input ends when it is read, saying why, a truncation at
 * offset 0, instead of reading the other file as its own. */
START_TEST(test_cap_reader_open_merged_gzip_replaced_before_it_is_read)
{
	static struct tbuf t;
	char moved[600];

	for (int how = 0; how < 2; how++) {
		struct cap_reader *r = NULL;
		struct cap_record rec;
		struct sn_diag d = {0};
		int64_t ts;
		char *gz;

		build_pcap(&t, false, 0xa1b2c3d4u);
		gz = gz_copy(tmp_write(t.b, t.n));
		ck_assert_int_eq(cap_reader_open_merged(gz, false, &r, &d), SN_OK);
		ck_assert(cap_reader_first_ts(r, &ts));
		if (how == 0) {
			ck_assert_int_eq(unlink(gz), 0);
		} else {
			char *other;

			snprintf(moved, sizeof(moved), "%s.moved", gz);
			ck_assert_int_eq(rename(gz, moved), 0);
			pcap_random(&t, 3, 10, 3);
			other = gz_copy(tmp_write(t.b, t.n));
			ck_assert_int_eq(rename(other, gz), 0);
			free(other);
		}
		ck_assert_int_eq(cap_reader_next(r, &rec), SN_ETRUNC);
		ck_assert_uint_eq(cap_reader_error(r)->offset, 0);
		expect_file_gone(r, how == 0);
		ck_assert_int_eq(cap_reader_next(r, &rec), SN_ETRUNC);
		cap_reader_end_input(r);
		cap_reader_free(r);
		if (how == 1) {
			ck_assert_int_eq(unlink(gz), 0);
			ck_assert_int_eq(unlink(moved), 0);
		}
		free(gz);
	}
}
END_TEST

struct stream_retired {
	int fences;
	int calls;
	size_t input;
	struct cap_reader *r;
};

static void count_stream_fence(void *ctx, size_t input)
{
	struct stream_retired *s = ctx;

	ck_assert_uint_eq(input, 7);
	s->fences++;
}

static void note_retired_stream(void *ctx, size_t input, struct cap_reader *r)
{
	struct stream_retired *s = ctx;

	s->calls++;
	s->input = input;
	s->r = r;
}

/* With hooks, an ended gzip input goes to retire_stream, which gives it back when its records
 * are no longer in use: its descriptor and inflater stay until cap_reader_end_stream(). */
START_TEST(test_cap_reader_gzip_merged_retires_its_stream_through_the_hooks)
{
	static struct tbuf t;
	struct stream_retired s = {0};
	struct cap_window_hooks hooks = {
		.fence = count_stream_fence, .retire_stream = note_retired_stream, .ctx = &s};
	struct cap_reader *r = NULL;
	struct cap_record rec;
	struct sn_diag d = {0};
	int fds = count_fds();
	char *gz;

	pcap_random(&t, 150, 200, 4); /* 32 KiB: read by an inflater thread */
	gz = gz_copy(tmp_write(t.b, t.n));
	ck_assert_int_eq(cap_reader_open_merged(gz, true, &r, &d), SN_OK);
	ck_assert_int_eq(count_fds(), fds + 1);
	cap_reader_set_fence(r, &hooks, 7);
	/* what lies 8 KiB behind is given back after a fence(), every 8 KiB */
	cap_reader_set_release_lag(r, 8192);
	while (cap_reader_next(r, &rec) == SN_OK) {
	}
	ck_assert_int_eq(s.fences, 3); /* at 8, 16 and 24 KiB of its 32 */
	ck_assert_int_eq(count_fds(), fds + 1);
	cap_reader_end_input(r);
	ck_assert_int_eq(s.calls, 1);
	ck_assert_uint_eq(s.input, 7);
	ck_assert_ptr_eq(s.r, r);
	ck_assert_int_eq(count_fds(), fds + 1); /* still its records' */
	cap_reader_end_stream(r);
	ck_assert_int_eq(count_fds(), fds);
	ck_assert_int_eq(cap_reader_next(r, &rec), SN_ENOTFOUND);
	cap_reader_free(r);
	free(gz);
}
END_TEST

/* Merged, gzip files that wait for their turn give the order of the same files read at once:
 * by time, ties in the order of the inputs, whatever the order of their first records. */
START_TEST(test_cap_merge_of_waiting_gzip_files_keeps_the_order)
{
	static const uint32_t a[] = {5, 6, 6, 9};
	static const uint32_t b[] = {1, 2, 5};
	static const uint32_t c[] = {5, 7};
	static const uint32_t e[] = {0, 9};
	const uint32_t *times[] = {a, b, c, e};
	const size_t lens[] = {4, 3, 2, 2};
	char *gz[4];
	struct cap_record want[11];
	size_t n = 0;

	for (int i = 0; i < 4; i++) {
		gz[i] = gz_copy(pcap_with_times(times[i], lens[i], (uint8_t)(10 * i + 10), 0));
	}
	for (int pass = 0; pass < 2; pass++) {
		struct cap_reader *rs[4];
		struct cap_merge *m;
		struct cap_record rec;
		struct sn_diag d = {0};
		size_t k = 0;

		for (int i = 0; i < 4; i++) {
			if (pass == 0) {
				rs[i] = open_ok(gz[i]);
			} else {
				ck_assert_int_eq(cap_reader_open_merged(gz[i], false, &rs[i], &d),
						 SN_OK);
			}
		}
		m = cap_merge_new(rs, 4);
		while (cap_merge_next(m, &rec, NULL, NULL) == SN_OK) {
			ck_assert_uint_lt(k, SN_ARRAY_SIZE(want));
			if (pass == 0) {
				want[k] = rec;
			} else {
				ck_assert_int_eq(rec.ts_ns, want[k].ts_ns);
				ck_assert_uint_eq(rec.file_index, want[k].file_index);
				ck_assert_uint_eq(rec.offset, want[k].offset);
			}
			ck_assert(payload_ok(&rec, (uint8_t)(10 * rec.file_index + 10 +
							     (rec.offset - 24) / 20)));
			k++;
		}
		if (pass == 0) {
			n = k;
		}
		ck_assert_uint_eq(k, n);
		cap_merge_free(m);
	}
	ck_assert_uint_eq(n, 11);
	for (int i = 0; i < 4; i++) {
		free(gz[i]);
	}
}
END_TEST

/* Threads of this process now that are not in @p known[0..@p n) go there (at most @p cap). */
static void note_new_threads(int *known, size_t *n, size_t cap)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;

	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d)) != NULL) {
		int tid = atoi(e->d_name);
		size_t i = 0;

		while (tid > 0 && i < *n && known[i] != tid) {
			i++;
		}
		if (tid > 0 && i == *n) {
			ck_assert_uint_lt(*n, cap);
			known[(*n)++] = tid;
		}
	}
	closedir(d);
}

/*
 * Rotated gzip captures merged (cap_merge_read_windowed(): a window pool) are inflated by
 * the pool's inflater threads, each taken again for a later file, not by a thread of each
 * file's own: twelve files read one after the other start at most two threads (the file
 * being read and the next one, started early), and the records are those of the files read
 * one by one. Once the merge is freed, so are its threads.
 */
#define TEST_ROTATED 12

START_TEST(test_cap_merge_of_rotated_gzip_files_reuses_inflater_threads)
{
	static struct tbuf t;
	struct rec_log *logs[TEST_ROTATED];
	char *gz[TEST_ROTATED];
	struct cap_reader *rs[TEST_ROTATED];
	int tids[64];
	size_t ntids = 0, seen, i = 0, f = 0;
	struct cap_merge *m;
	struct cap_record rec;
	struct sn_diag d = {0};
	int threads = count_threads();

	for (int k = 0; k < TEST_ROTATED; k++) {
		/* 150 records of 200 bytes: more than a probe inflates, so each has an inflater */
		pcap_random_from(&t, 150, 200, (uint32_t)k + 1, 1700000000u + 1000u * (uint32_t)k);
		logs[k] = log_sequential(tmp_write(t.b, t.n));
		gz[k] = strdup(tmp_write_gz(t.b, t.n, 1));
		ck_assert_int_eq(cap_reader_open_merged(gz[k], false, &rs[k], &d), SN_OK);
	}
	note_new_threads(tids, &ntids, SN_ARRAY_SIZE(tids));
	seen = ntids;
	m = cap_merge_new(rs, TEST_ROTATED);
	ck_assert(!cap_merge_read_windowed(m));
	while (cap_merge_next(m, &rec, NULL, NULL) == SN_OK) {
		if (i == logs[f]->n) {
			f++;
			i = 0;
		}
		ck_assert_uint_lt(f, TEST_ROTATED);
		ck_assert_uint_eq(rec.file_index, f);
		rec.file_index = 0; /* as read alone */
		expect_log_rec(logs[f], i++, &rec);
		if (i % 16 == 1) {
			/* a file's thread lives while the file is read: a look every 16 records (each
			 * look reads /proc, slow under the sanitizers) sees every one */
			note_new_threads(tids, &ntids, SN_ARRAY_SIZE(tids));
		}
	}
	ck_assert_uint_eq(f, TEST_ROTATED - 1);
	ck_assert_uint_eq(i, logs[f]->n);
	ck_assert_msg(ntids - seen >= 1 && ntids - seen <= 2, "%zu inflater threads for %d files",
		      ntids - seen, TEST_ROTATED);
	cap_merge_free(m);
	ck_assert_int_eq(threads_settle(threads), threads);
	for (int k = 0; k < TEST_ROTATED; k++) {
		free(logs[k]);
		free(gz[k]);
	}
}
END_TEST

/* @p len bytes of @p data into a gzip file whose header carries a comment of @p comment_len
 * bytes (its path, to be freed). */
static char *gz_with_comment(const uint8_t *data, size_t len, size_t comment_len)
{
	static uint8_t out[1u << 17];
	char *comment = malloc(comment_len + 1);
	gz_header head;
	z_stream zs;
	char *path;

	ck_assert_ptr_nonnull(comment);
	memset(comment, 'c', comment_len);
	comment[comment_len] = '\0';
	memset(&zs, 0, sizeof(zs));
	memset(&head, 0, sizeof(head));
	head.comment = (Bytef *)comment;
	ck_assert_int_eq(deflateInit2(&zs, 1, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY), Z_OK);
	ck_assert_int_eq(deflateSetHeader(&zs, &head), Z_OK);
	zs.next_in = (Bytef *)(uintptr_t)data;
	zs.avail_in = (uInt)len;
	zs.next_out = out;
	zs.avail_out = sizeof(out);
	ck_assert_int_eq(deflate(&zs, Z_FINISH), Z_STREAM_END);
	path = strdup(tmp_write(out, sizeof(out) - zs.avail_out));
	deflateEnd(&zs);
	free(comment);
	return path;
}

/* Read @p path opened for a merge without its descriptor kept: the records and end of @p log,
 * with @p fds_reading descriptors open meanwhile. */
static void read_merged_gz(const char *path, const struct rec_log *log, int fds_reading)
{
	struct cap_reader *r = NULL;
	struct cap_record rec;
	struct sn_diag d = {0};
	enum sn_status st;
	size_t i = 0;

	ck_assert_int_eq(cap_reader_open_merged(path, false, &r, &d), SN_OK);
	while ((st = cap_reader_next(r, &rec)) == SN_OK) {
		expect_log_rec(log, i++, &rec);
		ck_assert_int_eq(count_fds(), fds_reading);
	}
	ck_assert_uint_eq(i, log->n);
	ck_assert_int_eq(st, log->end);
	if (st != SN_ENOTFOUND) {
		ck_assert_uint_eq(cap_reader_error(r)->offset, log->err.offset);
		ck_assert_str_eq(cap_reader_error(r)->msg, log->err.msg);
	}
	cap_reader_free(r);
}

/* What its first page does not settle: a gzip header longer than a page (a 5,000-byte
 * comment) is read as cap_reader_open() reads it, not refused; a large file corrupt early is
 * read by its inflater (holding its descriptor) when it is reached, not inflated whole. */
START_TEST(test_cap_reader_open_merged_gzip_with_a_long_header_or_early_damage)
{
	static struct tbuf t;
	struct rec_log *log = log_new();
	struct cap_reader *r;
	struct cap_record rec;
	enum sn_status st;
	int fds = count_fds();
	char *plain, *gz;
	uint8_t *bytes;
	FILE *f;

	pcap_random(&t, 150, 200, 5);
	plain = strdup(tmp_write(t.b, t.n));
	free(log);
	log = log_sequential(plain);
	gz = gz_with_comment(t.b, t.n, 5000);
	read_merged_gz(gz, log, fds + 1);
	free(gz);

	/* corrupt 1,000 bytes into the compressed data: what cap_reader_open() reads of it */
	gz = gz_copy(plain);
	f = fopen(gz, "r+b");
	ck_assert_ptr_nonnull(f);
	bytes = calloc(1, 64);
	ck_assert_int_eq(fseek(f, 1000, SEEK_SET), 0);
	memset(bytes, 0xff, 64);
	ck_assert_uint_eq(fwrite(bytes, 1, 64, f), 64);
	ck_assert_int_eq(fclose(f), 0);
	free(bytes);
	free(log);
	log = log_new();
	r = open_ok(gz);
	while ((st = cap_reader_next(r, &rec)) == SN_OK) {
		log_add(log, &rec);
	}
	log->end = st;
	log->err = *cap_reader_error(r);
	cap_reader_free(r);
	ck_assert_int_eq(log->end, SN_ETRUNC);
	read_merged_gz(gz, log, fds + 1);
	free(gz);
	free(log);
	free(plain);
}
END_TEST

START_TEST(test_cap_cursor_ranges_chained_by_position_give_the_reader_records)
{
	struct tbuf t = {.be = false};
	struct png_layout lay;
	const char *paths[3];

	pcap_many(&t, 60);
	paths[0] = tmp_write(t.b, t.n);
	build_pcap(&t, true, 0xa1b23c4du);
	t.b[t.n - 5] = 9; /* record 3: origlen 4 -> 9, a valid record */
	paths[1] = tmp_write(t.b, t.n);
	build_pcapng(&t, false, &lay); /* two sections, other byte order, SPB, OPB */
	paths[2] = tmp_write(t.b, t.n);
	for (size_t p = 0; p < SN_ARRAY_SIZE(paths); p++) {
		struct rec_log *log = log_sequential(paths[p]);

		ck_assert_int_eq(log->end, SN_ENOTFOUND);
		ck_assert_uint_ge(log->n, 3);
		for (size_t k = 0; k < SN_ARRAY_SIZE(range_lens); k++) {
			read_chained(paths[p], range_lens[k], log);
		}
		free(log);
	}
}
END_TEST

START_TEST(test_cap_reader_split_begin_refuses_what_cannot_be_read_in_ranges)
{
	struct tbuf t = {.be = false};
	struct cap_reader *r;
	struct cap_cursor *c;
	struct cap_record rec;
	size_t first = 1;
	size_t end = 1;

	build_pcap(&t, false, 0xa1b2c3d4u);
	r = open_ok(tmp_write_gz(t.b, t.n, 1));
	ck_assert_ptr_null(cap_reader_split_begin(r, &first, &end));
	cap_reader_free(r);

	memset(&t, 0, sizeof(t));
	png_shb(&t);
	png_idb(&t, 1, 0, -1, false, 0);
	png_isb(&t, 3);
	r = open_ok(tmp_write(t.b, t.n));
	ck_assert_ptr_null(cap_reader_split_begin(r, &first, &end));
	cap_reader_free(r);

	memset(&t, 0, sizeof(t));
	pcap_hdr(&t, 0xa1b2c3d4u, 0, 1);
	r = open_ok(tmp_write(t.b, t.n));
	c = cap_reader_split_begin(r, &first, &end);
	ck_assert_ptr_nonnull(c);
	ck_assert_uint_eq(first, 24);
	ck_assert_uint_eq(end, 24);
	cap_cursor_seek(c, first, end, false);
	ck_assert_int_eq(cap_cursor_next(c, &rec), SN_ENOTFOUND);
	cap_cursor_free(c);
	cap_reader_free(r);
}
END_TEST

/* cap_reader_mapped() of a capture given on standard input through a pipe, in a child */
static int child_mapped_from_pipe(const void *data, size_t len)
{
	int fds[2];
	pid_t pid;
	int status;

	ck_assert_int_eq(pipe(fds), 0);
	ck_assert_uint_lt(len, 4096); /* fits the pipe's buffer: written before the child reads */
	ck_assert_int_eq(write(fds[1], data, len), (ssize_t)len);
	close(fds[1]);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct cap_reader *r = NULL;

		if (dup2(fds[0], 0) < 0 || cap_reader_open("-", &r, NULL) != SN_OK) {
			_exit(99);
		}
		_exit(cap_reader_mapped(r) ? 1 : 0);
	}
	close(fds[0]);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status));
	return WEXITSTATUS(status);
}

/* only a regular uncompressed file is read through a mapping of itself; gzip input and a
 * pipe are not */
START_TEST(test_cap_reader_mapped_only_for_an_uncompressed_file)
{
	struct tbuf t = {.be = false};
	struct png_layout lay;
	struct cap_reader *r;

	build_pcap(&t, false, 0xa1b2c3d4u);
	r = open_ok(tmp_write(t.b, t.n));
	ck_assert(cap_reader_mapped(r));
	cap_reader_free(r);
	r = open_ok(tmp_write_gz(t.b, t.n, 1));
	ck_assert(!cap_reader_mapped(r));
	cap_reader_free(r);
	ck_assert_int_eq(child_mapped_from_pipe(t.b, t.n), 0);

	build_pcapng(&t, false, &lay);
	r = open_ok(tmp_write(t.b, t.n));
	ck_assert(cap_reader_mapped(r));
	cap_reader_free(r);
}
END_TEST

/*
 * A read lease holds a mapped file still for --cores 2 and up (eng_split.c): it is had only
 * while nobody has the file open for writing, and a process that then cuts the file waits,
 * which cap_reader_lease_wanted() tells, until cap_reader_unlease(), so the mapping's pages
 * stay readable meanwhile. The holder gets no signal of it (SIGIO would end it). A reader
 * that is not a mapped file's (gzip, windows) has none.
 */
/* Whether this process can take a read lease on a file of the temp directory: not on a file
 * system without leases (NFS, some FUSE), nor with /proc/sys/fs/leases-enable at 0. Where it
 * cannot, sipnab copies the file (tests/read_lease.sh), and the lease tests say so and pass. */
static bool leases_here(void)
{
	const char *path = tmp_write("x", 1);
	int fd = open(path, O_RDONLY);
	bool ok;

	ck_assert_int_ge(fd, 0);
	ok = fcntl(fd, F_SETLEASE, F_RDLCK) == 0;
	close(fd);
	if (!ok) {
		fprintf(stderr, "no read lease in %s (%s): lease test skipped\n", tmpdir,
			strerror(errno));
	}
	return ok;
}

START_TEST(test_cap_reader_lease_holds_the_file_until_let_go)
{
	static struct tbuf t;
	struct cap_reader *r;
	struct cap_record rec;
	struct stat st;
	const char *path;
	int wfd, status = -1, waited;
	pid_t pid;

	if (!leases_here()) {
		return;
	}
	memset(&t, 0, sizeof(t));
	pcap_many(&t, 60);
	path = tmp_write(t.b, t.n);
	r = open_ok(path);
	wfd = open(path, O_WRONLY);
	ck_assert_int_ge(wfd, 0);
	ck_assert(!cap_reader_lease(r)); /* open for writing */
	close(wfd);
	ck_assert(cap_reader_lease(r));
	ck_assert(!cap_reader_lease_wanted(r));
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		_exit(truncate(path, 100) == 0 ? 0 : 1);
	}
	for (waited = 0; waited < 5000 && !cap_reader_lease_wanted(r); waited++) {
		usleep(1000);
	}
	ck_assert_msg(cap_reader_lease_wanted(r), "the cut never waited for the lease");
	usleep(20000);
	ck_assert_int_eq(waitpid(pid, &status, WNOHANG), 0); /* still waiting */
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_uint_eq((size_t)st.st_size, t.n);
	for (int i = 0; i < 60; i++) {
		ck_assert_int_eq(cap_reader_next(r, &rec), SN_OK); /* the mapping, whole */
	}
	cap_reader_unlease(r);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_int_eq(st.st_size, 100);
	cap_reader_free(r);

	r = open_ok(tmp_write_gz(t.b, t.n, 1));
	ck_assert(!cap_reader_lease(r));
	cap_reader_free(r);
	r = open_ok(tmp_write(t.b, t.n));
	ck_assert(cap_reader_read_windowed(r, 0));
	ck_assert(!cap_reader_lease(r));
	cap_reader_free(r);
}
END_TEST

struct merge_err {
	enum sn_status st;
	struct sn_diag diag;
};

static void note_merge_err(void *user, uint32_t file_index, enum sn_status st,
			   const struct sn_diag *diag)
{
	struct merge_err *e = user;

	(void)file_index;
	e->st = st;
	e->diag = *diag;
}

/*
 * One core's reading under the lease (eng_run.c): the only input is read through its mapping
 * until a process that cuts the file waits for the lease; cap_merge_lease_yield() then reads
 * on in windows and lets go, the cut goes through, and the reading ends at the record that
 * was cut with every record before it, as a reader in windows does (and nothing reads the
 * lost pages of the mapping: SIGBUS).
 */
START_TEST(test_cap_merge_lease_yields_to_a_cut_and_reads_on_in_windows)
{
	static struct tbuf t;
	struct cap_record recs[8];
	struct merge_err err = {SN_OK, {0}};
	struct cap_reader *r;
	struct cap_merge *m;
	struct rec_log *log, *want;
	const char *path;
	size_t cut, i = 0;
	uint32_t n;
	int status = -1, waited;
	pid_t pid;

	if (!leases_here()) {
		return;
	}
	log = log_cut_capture(&t, &cut);
	path = tmp_write(t.b, t.n);
	r = open_ok(path);
	m = cap_merge_new(&r, 1);
	ck_assert(cap_merge_lease(m));
	n = cap_merge_next_batch(m, recs, 5, note_merge_err, &err);
	ck_assert_uint_eq(n, 5);
	for (; i < n; i++) {
		expect_log_rec(log, i, &recs[i]);
		ck_assert(!recs[i].transient); /* in the mapping */
	}
	ck_assert(!cap_merge_lease_yield(m)); /* nobody waits */
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		_exit(truncate(path, (off_t)cut) == 0 ? 0 : 1);
	}
	for (waited = 0; waited < 5000 && !cap_merge_lease_yield(m); waited++) {
		usleep(1000);
	}
	ck_assert_msg(waited < 5000, "the cut never waited for the lease");
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	while ((n = cap_merge_next_batch(m, recs, 8, note_merge_err, &err)) > 0) {
		for (uint32_t k = 0; k < n; k++) {
			expect_log_rec(log, i++, &recs[k]);
			ck_assert(recs[k].transient); /* in a window */
		}
	}
	ck_assert_uint_eq(i, log->n);
	ck_assert_int_eq(err.st, SN_ETRUNC);
	want = log_cut_under(log, cut);
	ck_assert_uint_eq(err.diag.offset, want->err.offset);
	ck_assert_str_eq(err.diag.msg, want->err.msg);
	free(want);
	free(log);
	cap_merge_free(m);

	/* nothing to lease: several inputs, or one read already */
	r = open_ok(tmp_write(t.b, t.n));
	m = cap_merge_new(&r, 1);
	ck_assert_uint_eq(cap_merge_next_batch(m, recs, 1, NULL, NULL), 1);
	ck_assert(!cap_merge_lease(m));
	cap_merge_free(m);
}
END_TEST

START_TEST(test_cap_cursor_resync_finds_every_record_boundary_of_an_ordinary_file)
{
	struct tbuf t = {.be = false};
	size_t blocks[64];
	size_t nblocks = 0;
	const char *paths[2];
	size_t *want[2];
	size_t nwant[2];
	struct rec_log *log;

	pcap_many(&t, 60);
	paths[0] = tmp_write(t.b, t.n);
	log = log_sequential(paths[0]);
	want[0] = calloc(log->n, sizeof(size_t));
	ck_assert_ptr_nonnull(want[0]);
	for (size_t i = 0; i < log->n; i++) {
		want[0][i] = log->rec[i].offset;
	}
	nwant[0] = log->n;
	free(log);

	/* one pcapng section: EPBs, an ISB, an SPB and an OPB are all block boundaries */
	memset(&t, 0, sizeof(t));
	png_shb(&t);
	png_idb(&t, 1, 0, -1, false, 0);
	for (uint32_t i = 0; i < 40; i++) {
		if (i == 10) {
			blocks[nblocks++] = png_isb(&t, 21);
		}
		if (i == 20) {
			blocks[nblocks++] = png_spb(&t, 30, 30, 7);
		}
		if (i == 30) {
			blocks[nblocks++] = png_opb(&t, 0, 5000000, 9, 9, 8);
		}
		blocks[nblocks++] = png_epb(&t, 0, 1700000000000000ULL + i * 20000, 1 + i * 13 % 40,
					    60, (uint8_t)i);
	}
	paths[1] = tmp_write(t.b, t.n);
	want[1] = blocks;
	nwant[1] = nblocks;

	for (size_t p = 0; p < 2; p++) {
		struct cap_reader *r = open_ok(paths[p]);
		size_t first, end, at;
		struct cap_cursor *c = cap_reader_split_begin(r, &first, &end);
		size_t next = 0;

		ck_assert_ptr_nonnull(c);
		ck_assert_uint_eq(first, want[p][0]);
		for (size_t lo = first; lo < end; lo++) {
			while (next < nwant[p] && want[p][next] < lo) {
				next++;
			}
			if (next == nwant[p]) {
				ck_assert_int_eq(cap_cursor_resync(c, lo, end, &at), SN_ENOTFOUND);
				continue;
			}
			ck_assert_int_eq(cap_cursor_resync(c, lo, end, &at), SN_OK);
			ck_assert_msg(at == want[p][next],
				      "file %zu: resync from %zu: %zu, not %zu", p, lo, at,
				      want[p][next]);
			/* the limit is exclusive */
			ck_assert_int_eq(cap_cursor_resync(c, lo, at + 1, &at), SN_OK);
			if (at > lo) {
				ck_assert_int_eq(cap_cursor_resync(c, lo, at, &at), SN_ENOTFOUND);
			}
		}
		cap_cursor_free(c);
		cap_reader_free(r);
	}
	free(want[0]);
}
END_TEST

START_TEST(test_cap_cursor_resync_is_fooled_by_a_pcap_inside_a_packet_and_the_chain_catches_it)
{
	struct tbuf t = {.be = false};
	struct cap_reader *r;
	struct cap_cursor *tmpl;
	struct cap_cursor *a;
	struct cap_cursor *b;
	struct cap_record rec;
	struct rec_log *log;
	size_t first, end, at, lo;
	size_t carrier = 0;
	size_t inner = 0;
	const char *path;
	size_t i = 0;

	pcap_hdr(&t, 0xa1b2c3d4u, 65535, 1);
	for (uint32_t k = 0; k < 12; k++) {
		if (k == 5) {
			carrier = t.n;
			inner = pcap_rec_with_pcap(&t, 1700000000 + k);
		} else {
			pcap_rec(&t, 1700000000 + k, k * 1000, 20 + k, 20 + k, (uint8_t)k);
		}
	}
	path = tmp_write(t.b, t.n);
	log = log_sequential(path);
	ck_assert_uint_eq(log->n, 12);
	ck_assert_uint_eq(log->rec[5].offset, carrier);

	r = open_ok(path);
	tmpl = cap_reader_split_begin(r, &first, &end);
	ck_assert_ptr_nonnull(tmpl);
	/* from inside the stored file's header, its records chain: resync lands on the first */
	lo = carrier + 16 + 4;
	ck_assert_int_eq(cap_cursor_resync(tmpl, lo, end, &at), SN_OK);
	ck_assert_uint_eq(at, inner);
	for (size_t k = 0; k < log->n; k++) {
		ck_assert_uint_ne(log->rec[k].offset, at);
	}
	/* read speculatively from there: a record no sequential reader returns */
	b = cap_cursor_new(tmpl);
	cap_cursor_seek(b, at, end, true);
	ck_assert_int_eq(cap_cursor_next(b, &rec), SN_OK);
	ck_assert_uint_eq(rec.offset, inner);
	ck_assert_uint_eq(rec.caplen, 4);
	/* the range before, read from the start, ends at the real boundary: the check fails */
	a = cap_cursor_new(tmpl);
	cap_cursor_seek(a, first, lo, false);
	while (cap_cursor_next(a, &rec) == SN_OK) {
		expect_log_rec(log, i++, &rec);
	}
	ck_assert_uint_eq(i, 6);
	ck_assert_uint_eq(cap_cursor_pos(a), log->rec[6].offset);
	ck_assert_uint_ne(cap_cursor_pos(a), at);
	/* read again from there with that state: the reader's records */
	cap_cursor_copy_state(b, a);
	cap_cursor_seek(b, cap_cursor_pos(a), end, false);
	while (cap_cursor_next(b, &rec) == SN_OK) {
		expect_log_rec(log, i++, &rec);
	}
	ck_assert_uint_eq(i, log->n);
	cap_cursor_free(a);
	cap_cursor_free(b);
	cap_cursor_free(tmpl);
	cap_reader_free(r);

	/* the whole protocol: ranges read again where needed, the reader's records */
	ck_assert_uint_ge(read_verified(path, lo - first, log), 1);
	for (size_t k = 0; k < SN_ARRAY_SIZE(range_lens); k++) {
		read_verified(path, range_lens[k], log);
	}
	free(log);
}
END_TEST

START_TEST(test_cap_cursor_needs_prev_when_a_speculative_range_starts_with_spbs)
{
	struct tbuf t = {.be = false};
	struct cap_reader *r;
	struct cap_cursor *tmpl;
	struct cap_cursor *c;
	struct cap_record rec;
	size_t first, end, spb1, epb3;

	png_shb(&t);
	png_idb(&t, 1, 0, -1, false, 0);
	png_epb(&t, 0, 1000, 4, 4, 0);
	spb1 = png_spb(&t, 4, 4, 1);
	png_spb(&t, 4, 4, 2);
	epb3 = png_epb(&t, 0, 5000, 4, 4, 3);
	png_spb(&t, 4, 4, 4);
	png_epb(&t, 0, 9000, 4, 4, 5);
	r = open_ok(tmp_write(t.b, t.n));
	tmpl = cap_reader_split_begin(r, &first, &end);
	ck_assert_ptr_nonnull(tmpl);
	c = cap_cursor_new(tmpl);

	/* starts at an SPB: its time is the packet's before the range */
	cap_cursor_seek(c, spb1, end, true);
	ck_assert(!cap_cursor_needs_prev(c));
	ck_assert_int_eq(cap_cursor_next(c, &rec), SN_OK);
	ck_assert_uint_eq(rec.offset, spb1);
	ck_assert(cap_cursor_needs_prev(c));

	/* starts at an EPB: the SPB after it takes its time from inside the range */
	cap_cursor_seek(c, epb3, end, true);
	ck_assert(!cap_cursor_needs_prev(c));
	ck_assert_int_eq(cap_cursor_next(c, &rec), SN_OK);
	ck_assert_int_eq(cap_cursor_next(c, &rec), SN_OK);
	ck_assert_int_eq(rec.ts_ns, 5000000);
	ck_assert_int_eq(cap_cursor_next(c, &rec), SN_OK);
	ck_assert_int_eq(cap_cursor_next(c, &rec), SN_ENOTFOUND);
	ck_assert(!cap_cursor_needs_prev(c));

	/* chained from the range before, not speculative: the time is known */
	cap_cursor_copy_state(c, tmpl);
	cap_cursor_seek(c, first, spb1, false);
	ck_assert_int_eq(cap_cursor_next(c, &rec), SN_OK);
	ck_assert_int_eq(cap_cursor_next(c, &rec), SN_ENOTFOUND);
	ck_assert_uint_eq(cap_cursor_pos(c), spb1);
	cap_cursor_seek(c, spb1, end, false);
	ck_assert_int_eq(cap_cursor_next(c, &rec), SN_OK);
	ck_assert_uint_eq(rec.offset, spb1);
	ck_assert_int_eq(rec.ts_ns, 1000000);
	ck_assert(!cap_cursor_needs_prev(c));
	cap_cursor_free(c);
	cap_cursor_free(tmpl);
	cap_reader_free(r);
}
END_TEST

START_TEST(test_cap_cursor_changed_after_an_idb_or_a_section_header)
{
	struct tbuf t = {.be = false};
	struct cap_reader *r;
	struct cap_cursor *tmpl;
	struct cap_cursor *c;
	struct cap_cursor *d;
	struct cap_record rec;
	size_t first, end, idb1, epb2, shb2;

	png_shb(&t);
	png_idb(&t, 1, 0, -1, false, 0);
	png_epb(&t, 0, 1000, 4, 4, 0);
	png_epb(&t, 0, 2000, 4, 4, 1);
	idb1 = t.n;
	png_idb(&t, 101, 0, -1, false, 0);
	epb2 = png_epb(&t, 1, 3000, 4, 4, 2);
	shb2 = t.n;
	t.be = true;
	png_shb(&t);
	png_idb(&t, 113, 0, -1, false, 0);
	png_epb(&t, 0, 4000, 4, 4, 3);
	r = open_ok(tmp_write(t.b, t.n));
	tmpl = cap_reader_split_begin(r, &first, &end);
	ck_assert_ptr_nonnull(tmpl);
	c = cap_cursor_new(tmpl);

	/* a range that stops right at the IDB does not read it */
	cap_cursor_seek(c, first, idb1, false);
	ck_assert_int_eq(cap_cursor_next(c, &rec), SN_OK);
	ck_assert_int_eq(cap_cursor_next(c, &rec), SN_OK);
	ck_assert_int_eq(cap_cursor_next(c, &rec), SN_ENOTFOUND);
	ck_assert_uint_eq(cap_cursor_pos(c), idb1);
	ck_assert(!cap_cursor_changed(c));
	/* one that holds only its start reads it, and stops before the packet after it */
	cap_cursor_seek(c, idb1, idb1 + 1, false);
	ck_assert_int_eq(cap_cursor_next(c, &rec), SN_ENOTFOUND);
	ck_assert_uint_eq(cap_cursor_pos(c), epb2);
	ck_assert(cap_cursor_changed(c));
	/* the next range uses the new interface; changed is per range */
	cap_cursor_seek(c, epb2, epb2 + 1, false);
	ck_assert(!cap_cursor_changed(c));
	ck_assert_int_eq(cap_cursor_next(c, &rec), SN_OK);
	ck_assert_uint_eq(rec.linktype, 101);
	ck_assert_uint_eq(rec.ifindex, 1);
	ck_assert_int_eq(cap_cursor_next(c, &rec), SN_ENOTFOUND);
	ck_assert(!cap_cursor_changed(c));
	ck_assert_uint_eq(cap_cursor_pos(c), shb2);
	/* a section header in the other byte order */
	cap_cursor_seek(c, shb2, end, false);
	ck_assert_int_eq(cap_cursor_next(c, &rec), SN_OK);
	ck_assert_uint_eq(rec.linktype, 113);
	ck_assert_int_eq(rec.ts_ns, 4000000);
	ck_assert(cap_cursor_changed(c));
	ck_assert_int_eq(cap_cursor_next(c, &rec), SN_ENOTFOUND);

	/* why a range after a change must be read again: with the state of the start, the
	 * packet block names an interface that does not exist */
	d = cap_cursor_new(tmpl);
	cap_cursor_seek(d, epb2, end, true);
	ck_assert_int_eq(cap_cursor_next(d, &rec), SN_EPARSE);
	ck_assert_uint_eq(cap_cursor_error(d)->offset, epb2);
	cap_cursor_free(d);
	cap_cursor_free(c);
	cap_cursor_free(tmpl);
	cap_reader_free(r);
}
END_TEST

START_TEST(test_cap_cursor_reports_truncation_and_corruption_like_the_reader)
{
	struct rec_log *log;
	const char *paths[5];

	damaged_captures(paths);
	for (size_t p = 0; p < SN_ARRAY_SIZE(paths); p++) {
		log = damaged_log(paths, p);
		for (size_t k = 0; k < SN_ARRAY_SIZE(range_lens); k++) {
			read_chained(paths[p], range_lens[k], log);
			read_verified(paths[p], range_lens[k], log);
		}
		/* ranges that start exactly at the damaged record, and inside it */
		read_verified(paths[p], log->err.offset - log->rec[0].offset, log);
		read_verified(paths[p], (log->err.offset - log->rec[0].offset + 5) / 2, log);
		free(log);
	}
}
END_TEST

START_TEST(test_cap_cursor_ranges_read_from_buffers_give_the_reader_records)
{
	/* ranges of 1 and 3 bytes are read without buffers above; here every range length meets
	 * every tail, which the sanitizer build must do within the test's time */
	static const size_t lens[] = {16, 17, 64, 100, 256, 1000};
	static const size_t tails[] = {0, 1, 16, 4096};
	static struct tbuf t;
	struct png_layout lay;
	const char *paths[10];

	memset(&t, 0, sizeof(t));
	pcap_many(&t, 60);
	paths[0] = tmp_write(t.b, t.n);
	/* records of 50 bytes: ranges of 100 end where a buffer without a tail ends, on a
	 * record's boundary */
	memset(&t, 0, sizeof(t));
	pcap_hdr(&t, 0xa1b2c3d4u, 65535, 1);
	for (uint32_t k = 0; k < 40; k++) {
		pcap_rec(&t, 1700000000 + k, k, 34, 34, (uint8_t)k);
	}
	paths[9] = tmp_write(t.b, t.n);
	build_pcapng(&t, true, &lay);
	paths[1] = tmp_write(t.b, t.n);
	png_mid_idb(&t, true, 7);
	paths[2] = tmp_write(t.b, t.n);
	/* a pcap stored in a packet: resynchronisation lands on it, verification corrects it */
	memset(&t, 0, sizeof(t));
	pcap_hdr(&t, 0xa1b2c3d4u, 65535, 1);
	for (uint32_t k = 0; k < 12; k++) {
		if (k == 5) {
			(void)pcap_rec_with_pcap(&t, 1700000000 + k);
		} else {
			pcap_rec(&t, 1700000000 + k, k * 1000, 20 + k, 20 + k, (uint8_t)k);
		}
	}
	paths[3] = tmp_write(t.b, t.n);
	damaged_captures(&paths[4]);
	for (size_t p = 0; p < SN_ARRAY_SIZE(paths); p++) {
		struct rec_log *log = log_sequential(paths[p]);

		for (size_t k = 0; k < SN_ARRAY_SIZE(lens); k++) {
			for (size_t j = 0; j < SN_ARRAY_SIZE(tails); j++) {
				read_verified_filled(paths[p], lens[k], log, tails[j]);
			}
		}
		free(log);
	}
}
END_TEST

START_TEST(test_cap_cursor_verified_ranges_give_the_reader_records)
{
	static struct tbuf inner;
	struct tbuf t = {.be = false};
	struct png_layout lay;
	const char *paths[4];

	pcap_many(&t, 60);
	paths[0] = tmp_write(t.b, t.n);
	build_pcapng(&t, true, &lay);
	paths[1] = tmp_write(t.b, t.n);
	/* an IDB in the middle, SPBs after EPBs */
	png_mid_idb(&t, false, 1);
	paths[2] = tmp_write(t.b, t.n);
	/* a pcapng stored in a packet (aligned: resynchronisation can land on it) */
	png_shb(&inner);
	png_idb(&inner, 1, 0, -1, false, 0);
	for (uint32_t j = 0; j < 9; j++) {
		png_epb(&inner, 0, 1000 + j, 4, 4, (uint8_t)j);
	}
	memset(&t, 0, sizeof(t));
	png_shb(&t);
	png_idb(&t, 1, 0, -1, false, 0);
	for (uint32_t i = 0; i < 20; i++) {
		png_epb(&t, 0, 1700000000000000ULL + i * 1000, 7 + i, 7 + i, (uint8_t)i);
		if (i == 8) {
			size_t s = blk_begin(&t, 6);

			put32(&t, 0);
			put32(&t, 0);
			put32(&t, 1);
			put32(&t, (uint32_t)inner.n);
			put32(&t, (uint32_t)inner.n);
			put_bytes(&t, inner.b, inner.n);
			blk_end(&t, s);
		}
	}
	paths[3] = tmp_write(t.b, t.n);
	for (size_t p = 0; p < SN_ARRAY_SIZE(paths); p++) {
		struct rec_log *log = log_sequential(paths[p]);

		ck_assert_int_eq(log->end, SN_ENOTFOUND);
		for (size_t k = 0; k < SN_ARRAY_SIZE(range_lens); k++) {
			read_verified(paths[p], range_lens[k], log);
		}
		free(log);
	}
}
END_TEST

/*
 * An SPB takes the time of the packet before it, which can be two ranges back: here the
 * range before the SPB's holds nothing but an ISB. That range starts where the one before it
 * ended and reads no SPB, so it is kept as read speculatively; the SPB's range, read again
 * with its state, must still give the SPB the time of the EPB before the ISB.
 */
START_TEST(test_cap_cursor_verified_ranges_keep_the_spb_time_across_a_range_without_packets)
{
	struct tbuf t = {.be = false};
	struct rec_log *log;
	size_t epb0, isb, spb;
	const char *path;

	png_shb(&t);
	png_idb(&t, 1, 0, -1, false, 0);
	epb0 = png_epb(&t, 0, 1700000000000001ULL, 4, 4, 0);
	png_epb(&t, 0, 1700000000000002ULL, 4, 4, 1);
	isb = png_isb(&t, 60);
	spb = png_spb(&t, 4, 4, 2);
	png_epb(&t, 0, 1700000000000003ULL, 4, 4, 3);
	ck_assert_uint_ge(spb - isb, isb - epb0); /* the ISB fills the range after the EPBs */
	path = tmp_write(t.b, t.n);
	log = log_sequential(path);
	ck_assert_uint_eq(log->n, 4);
	ck_assert_int_eq(log->rec[2].ts_ns, 1700000000000002000LL);
	read_chained(path, isb - epb0, log);
	read_verified(path, isb - epb0, log);
	free(log);
}
END_TEST

/* ---------------------------------------------------------------- real captures */

struct known_count {
	const char *name;
	size_t count;
};

/* Reference counts from `capinfos -c`. */
static const struct known_count known_counts[] = {
	{"heplify-FAX-Call-t38-CA-TDM-SIP-FB-1.pcap", 7217},
	{"heplify-ipip0.pcap", 8},
	{"heplify-sip_ipv4_tcp.pcap", 84},
	{"heplify-sip_ipv4_tcp_fragmented.pcap", 1542},
	{"heplify-sip_ipv4_tcp_retrans.pcap", 196},
	{"heplify-sip_ipv6_udp.pcap", 6},
	{"heplify-sip_sctp.pcap", 5},
	{"heplify-sip_tcp_websocket.pcap", 61},
	{"sngrep-aaa.pcap", 691},
	{"sngrep-ipip.pcap", 4},
	{"sngrep-ipv6frag.pcap", 34},
	{"g711a.pcap", 236},
	{"dtmf_2833_0.pcap", 10},
};

/* Read every .pcap in @p dir and check the known counts; returns the file count, -1 if absent. */
static int read_dir_captures(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int files = 0;

	if (!d) {
		return -1; /* absent: skipped */
	}
	while ((e = readdir(d)) != NULL) {
		size_t nl = strlen(e->d_name);
		struct cap_reader *r;
		enum sn_status end;
		char p[1024];
		size_t n;

		if (nl < 5 || strcmp(e->d_name + nl - 5, ".pcap") != 0) {
			continue;
		}
		snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
		r = open_ok(p);
		n = count_records(r, &end);
		ck_assert_msg(end == SN_ENOTFOUND, "%s: %s", p, cap_reader_error(r)->msg);
		for (size_t i = 0; i < SN_ARRAY_SIZE(known_counts); i++) {
			if (strcmp(known_counts[i].name, e->d_name) == 0) {
				ck_assert_msg(n == known_counts[i].count, "%s: %zu records", p, n);
			}
		}
		if (strncmp(e->d_name, "dtmf_2833_", 10) == 0) {
			ck_assert_msg(n == 10, "%s: %zu records", p, n);
		}
		cap_reader_free(r);
		files++;
	}
	closedir(d);
	return files;
}

START_TEST(test_cap_reader_counts_records_of_shared_public_captures)
{
	const char *base = getenv("SIPNAB_SHARED");
	char dir[512];

	snprintf(dir, sizeof(dir), "%s/pcaps/public", base && *base ? base : "/work/shared");
	ck_assert_int_ne(read_dir_captures(dir), 0);
	ck_assert_int_ne(read_dir_captures("/usr/share/sip-tester"), 0);
}
END_TEST

static Suite *cap_reader_suite(void)
{
	Suite *s = suite_create("cap_reader");
	TCase *tc;

#define CAP_TCASE(name)                                                 \
	do {                                                            \
		tc = tcase_create(name);                                \
		tcase_add_checked_fixture(tc, tmp_setup, tmp_teardown); \
		suite_add_tcase(s, tc);                                 \
	} while (0)

	CAP_TCASE("pcap");
	tcase_add_test(tc, test_cap_reader_reads_pcap_in_both_byte_orders_and_resolutions);
	tcase_add_test(tc, test_cap_reader_reads_kuznetzov_pcap_with_long_record_headers);
	tcase_add_test(tc, test_cap_reader_reads_header_only_pcap_as_empty);
	CAP_TCASE("pcapng");
	tcase_add_test(tc, test_cap_reader_reads_pcapng_with_two_sections_and_all_packet_blocks);
	tcase_add_test(tc, test_cap_reader_converts_fine_and_coarse_pcapng_resolutions);
	tcase_add_test(tc, test_cap_reader_rejects_packet_block_for_undefined_interface);
	tcase_add_test(tc, test_cap_reader_rejects_simple_packet_block_without_interface);
	CAP_TCASE("gzip");
	tcase_add_test(tc, test_cap_reader_inflates_gzip_pcap_and_concatenated_members);
	tcase_add_test(tc, test_cap_reader_inflates_gzip_pcapng);
	tcase_add_test(tc, test_cap_reader_release_floor_keeps_mapped_give_backs_to_whole_blocks);
	tcase_add_test(tc, test_cap_reader_reports_cut_gzip_stream_as_truncation);
	CAP_TCASE("truncation");
	tcase_add_test(tc, test_cap_reader_returns_complete_records_then_truncation_offset);
	tcase_add_test(tc, test_cap_reader_reports_truncated_pcapng_block);
	CAP_TCASE("corruption");
	tcase_add_test(tc, test_cap_reader_rejects_corrupt_block_lengths_with_offset);
	tcase_add_test(tc, test_cap_reader_rejects_huge_pcap_record_length);
	tcase_add_test(tc, test_cap_reader_rejects_files_that_are_not_captures);
	CAP_TCASE("open_errors");
	tcase_add_test(tc, test_cap_reader_reports_system_errors_for_missing_file_and_directory);
	CAP_TCASE("stdin");
	tcase_add_test(tc, test_cap_reader_reads_standard_input_plain_and_gzip);
	CAP_TCASE("merge");
	tcase_add_test(tc, test_cap_merge_orders_records_by_time_and_keeps_file_order_on_ties);
	tcase_add_test(tc, test_cap_merge_reports_a_truncated_input_once_and_goes_on);
	tcase_add_test(tc, test_cap_merge_batches_equal_records_one_by_one);
	tcase_add_test(tc, test_cap_merge_batches_keep_streamed_records_of_two_inputs);
	tcase_add_test(tc, test_cap_reader_batch_ends_after_a_span);
	CAP_TCASE("windows");
	tcase_add_test(tc, test_cap_reader_read_in_windows_gives_the_mapped_records);
	tcase_add_test(tc,
		       test_cap_reader_read_in_windows_reports_truncation_and_corruption_like_mapped);
	tcase_add_test(tc, test_cap_reader_read_in_windows_survives_a_file_cut_under_it);
	tcase_add_test(tc, test_cap_reader_fenced_windows_keep_the_last_windows_records);
	tcase_add_test(tc, test_cap_cursor_ranges_from_buffers_survive_a_file_cut_under_them);
	tcase_add_test(tc, test_cap_cursor_range_after_a_cut_ends_where_the_range_before_ended);
	tcase_add_test(tc, test_cap_reader_open_reads_the_header_without_the_mapping);
	tcase_add_test(tc, test_cap_reader_read_in_windows_only_for_a_mapped_file);
	tcase_add_test(tc, test_cap_reader_open_merged_gives_the_mapped_records);
	tcase_add_test(tc, test_cap_reader_open_merged_ends_when_its_file_is_replaced);
	tcase_add_test(tc, test_cap_reader_open_merged_opens_gzip_and_rejects_like_open);
	tcase_add_test(tc, test_cap_reader_open_merged_gzip_waits_until_read);
	tcase_add_test(tc, test_cap_reader_open_merged_gzip_replaced_before_it_is_read);
	tcase_add_test(tc, test_cap_reader_gzip_merged_retires_its_stream_through_the_hooks);
	tcase_add_test(tc, test_cap_merge_of_waiting_gzip_files_keeps_the_order);
	tcase_add_test(tc, test_cap_merge_of_rotated_gzip_files_reuses_inflater_threads);
	tcase_add_test(tc, test_cap_reader_open_merged_gzip_with_a_long_header_or_early_damage);
	CAP_TCASE("cursor");
	tcase_add_test(tc, test_cap_reader_split_begin_refuses_what_cannot_be_read_in_ranges);
	tcase_add_test(tc, test_cap_reader_mapped_only_for_an_uncompressed_file);
	tcase_add_test(tc, test_cap_reader_lease_holds_the_file_until_let_go);
	tcase_add_test(tc, test_cap_merge_lease_yields_to_a_cut_and_reads_on_in_windows);
	tcase_add_test(tc, test_cap_cursor_ranges_chained_by_position_give_the_reader_records);
	tcase_add_test(tc, test_cap_cursor_resync_finds_every_record_boundary_of_an_ordinary_file);
	tcase_add_test(
		tc,
		test_cap_cursor_resync_is_fooled_by_a_pcap_inside_a_packet_and_the_chain_catches_it);
	tcase_add_test(tc, test_cap_cursor_needs_prev_when_a_speculative_range_starts_with_spbs);
	tcase_add_test(tc, test_cap_cursor_changed_after_an_idb_or_a_section_header);
	tcase_add_test(tc, test_cap_cursor_reports_truncation_and_corruption_like_the_reader);
	tcase_add_test(tc, test_cap_cursor_verified_ranges_give_the_reader_records);
	tcase_add_test(tc, test_cap_cursor_ranges_read_from_buffers_give_the_reader_records);
	tcase_add_test(
		tc,
		test_cap_cursor_verified_ranges_keep_the_spb_time_across_a_range_without_packets);
	CAP_TCASE("real_captures");
	tcase_add_test(tc, test_cap_reader_counts_records_of_shared_public_captures);
	tcase_set_timeout(tc, 60);
#undef CAP_TCASE
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(cap_reader_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
