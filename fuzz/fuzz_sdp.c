/*
 * fuzz_sdp.c - libFuzzer target for the SDP parser: parses each input with a bounded arena
 * and runs every media helper on each parsed media, so the helpers see hostile sessions too.
 * Not part of the library; built by hand or by the fuzz targets in fuzz/Makefile.inc.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "sipnab/sdp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_sdp_media(const struct sdp_session *s, const struct sdp_media *m)
{
	const struct sdp_conn *c = sdp_media_conn(s, m);
	char tmp[64];
	volatile size_t sink = 0;

	if (c) {
		sink += strlen(sn_addr_str(&c->addr, tmp, sizeof(tmp)));
	}
	sink += (size_t)sdp_media_direction(s, m);
	sink += sdp_media_is_disabled(m);
	sink += sdp_media_is_on_hold(s, m);
	sink += sdp_attr_find(m->attrs, m->attr_count, "rtpmap") != NULL;
	for (uint32_t i = 0; i < m->format_count; i++) {
		int pt = m->formats[i].pt;
		struct sn_slice name = sdp_media_codec_name(m, pt);

		sink += (size_t)sdp_media_clock_rate(m, pt);
		sink += sdp_media_format(m, pt) != NULL;
		sink += name.len ? name.ptr[name.len - 1] : 0;
		sink += m->formats[i].fmtp.len ? m->formats[i].fmtp.ptr[0] : 0;
	}
	for (uint32_t i = 0; i < m->attr_count; i++) {
		sink += m->attrs[i].name.len ? m->attrs[i].name.ptr[0] : 0;
		sink += m->attrs[i].value.len ? m->attrs[i].value.ptr[m->attrs[i].value.len - 1]
					      : 0;
	}
	for (uint32_t i = 0; i < m->crypto_count; i++) {
		sink += m->crypto[i].key_params.len;
	}
	(void)sink;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sn_arena arena;
	struct sdp_session s;
	uint8_t *copy = malloc(size ? size : 1);

	/* an exact-size heap copy so ASan catches a read one past the end */
	memcpy(copy, data, size);
	sn_arena_init(&arena, 64 * 1024);
	if (sdp_parse(&s, &arena, copy, size) == SN_OK) {
		for (uint32_t i = 0; i < s.media_count; i++) {
			fuzz_sdp_media(&s, &s.media[i]);
		}
		(void)sdp_attr_find(s.attrs, s.attr_count, "group");
		(void)sdp_dir_str(s.dir);
	}
	sn_arena_cleanup(&arena);
	free(copy);
	(void)sdp_static_clock_rate((int)size - 1);
	(void)sdp_static_codec_name((int)size - 1);
	return 0;
}
