/*
 * fuzz_sip.c - libFuzzer target for the SIP parser: detection, framing, parsing, every
 * accessor (Via/Contact/Route lists, From/To, URIs, multipart, SDP lookup) and a
 * serialize/re-parse round trip through the builder.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "sipnab/sip_build.h"
#include "sipnab/sip_msg.h"
#include "sipnab/sip_uri.h"
#include "sipnab/sn_arena.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void poke(struct sn_slice s)
{
	volatile uint8_t x = 0;

	for (uint32_t i = 0; i < s.len; i++) {
		x ^= s.ptr[i];
	}
	(void)x;
}

static void use_uri(struct sn_slice text)
{
	struct sip_uri u;
	struct sip_uri v;
	struct sn_slice val;

	if (sip_uri_parse(text, &u) != SN_OK) {
		return;
	}
	poke(u.user);
	poke(u.host);
	sip_param_find(u.params, "transport", &val);
	sip_uri_header_find(&u, "Replaces", &val);
	if (sip_uri_parse(text, &v) == SN_OK && !sip_uri_eq(&u, &v)) {
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sn_arena arena;
	struct sip_msg msg;
	struct sip_via *vias;
	struct sip_contact *cts;
	struct sip_name_addr *nas;
	struct sip_name_addr na;
	struct sip_mime_part parts[8];
	struct sn_slice sdp;
	size_t n;
	size_t off;
	uint32_t u;

	(void)sip_msg_is_start(data, size);
	off = sip_msg_skip_keepalive(data, size);
	if (sip_msg_frame(data + off, size - off, &n) == SN_OK && n > size - off) {
		abort();
	}

	sn_arena_init(&arena, 1u << 20);
	enum sn_status st = sip_msg_parse(&msg, &arena, data, size);
	if (st == SN_OK || st == SN_ETRUNC) {
		if (msg.msg_len > size) {
			abort();
		}
		poke(msg.body);
		poke(msg.call_id);
		poke(msg.from_uri);
		poke(msg.to_uri);
		(void)sip_msg_validate(&msg, &arena);
		(void)sip_msg_invalid_reason(&msg);
		if (msg.is_request) {
			use_uri(msg.ruri);
		}
		if (sip_msg_vias(&msg, &arena, &vias, &n) == SN_OK) {
			for (size_t i = 0; i < n; i++) {
				poke(vias[i].branch);
			}
		}
		if (sip_msg_contacts(&msg, &arena, &cts, &n) == SN_OK) {
			for (size_t i = 0; i < n; i++) {
				if (!cts[i].star) {
					use_uri(cts[i].addr.uri_text);
				}
			}
		}
		(void)sip_msg_name_addrs(&msg, SIP_HDR_ROUTE, &arena, &nas, &n);
		(void)sip_msg_name_addrs(&msg, SIP_HDR_RECORD_ROUTE, &arena, &nas, &n);
		if (sip_msg_from(&msg, &na) == SN_OK) {
			use_uri(na.uri_text);
		}
		(void)sip_msg_to(&msg, &na);
		(void)sip_msg_expires(&msg, &u);
		poke(sip_msg_user_agent(&msg));
		(void)sip_multipart_split(msg.content_type, msg.body, parts, 8, &n);
		if (sip_msg_find_sdp(&msg, &sdp) == SN_OK) {
			poke(sdp);
		}
		for (uint32_t i = 0; i < msg.hdr_count; i++) {
			struct sn_slice rest = msg.hdrs[i].value;
			struct sn_slice pn;
			struct sn_slice pv;
			while (sip_param_next(&rest, ';', &pn, &pv)) {
				poke(pn);
			}
		}

		struct sip_build b;
		struct sip_buf out;
		struct sip_msg again;
		sip_build_init(&b, &arena);
		sip_buf_init(&out);
		sip_build_from_msg(&b, &msg);
		(void)sip_build_max_forwards_dec(&b);
		sip_build_hdr_prepend(&b, "Via",
				      sn_slice_make("SIP/2.0/UDP fuzz;branch=z9hG4bKf", 32));
		if (sip_build_serialize(&b, &out) == SN_OK) {
			(void)sip_msg_parse(&again, &arena, out.ptr, out.len);
		}
		sip_buf_cleanup(&out);
		sip_build_cleanup(&b);
	}
	sn_arena_cleanup(&arena);
	return 0;
}
