/*
 * fuzz_decode.c - libFuzzer entry for the L2-L4 decoder, the fragment reassembler and the
 * host-pair key the sharded reader deals records by (cap_record_host_hash()).
 *
 * Input: byte 0 picks the link type (low 4 bits, modulo the list below) and whether records
 * are cut by a snap length (bit 4). The rest is split into records, each prefixed by a 1-byte
 * length (the last record takes what remains). One decoder lives across inputs, with small
 * reassembly bounds, so fragments from one input can complete, collide with or be evicted by
 * those of the next; timestamps advance a little per record so the timeout fires too.
 */
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sipnab/cap_decode.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const uint32_t fuzz_links[] = {0, 1, 101, 108, 113, 228, 229, 276, 147};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct cap_decoder *d;
	static int64_t now_ns;
	struct cap_decode_limits lim = {
		.frag_max_bytes = 256 * 1024,
		.frag_max_datagrams = 32,
		.frag_timeout_ns = 1000000000,
		.max_tunnel_depth = 4,
	};
	uint32_t link;
	bool cut;
	size_t pos = 1;

	if (!d) {
		d = cap_decoder_new(&lim);
	}
	if (size < 1) {
		return 0;
	}
	link = fuzz_links[(data[0] & 0x0f) % (sizeof(fuzz_links) / sizeof(fuzz_links[0]))];
	cut = (data[0] & 0x10) != 0;
	while (pos < size) {
		struct cap_record rec;
		struct cap_packet pkt;
		size_t len = size - pos - 1;
		uint8_t *copy;

		if (len > data[pos]) {
			len = data[pos];
		}
		pos++;
		/* An exact-size copy, so any read past the record is caught. */
		copy = malloc(len ? len : 1);
		memcpy(copy, data + pos, len);
		now_ns += 10000000;
		memset(&rec, 0, sizeof(rec));
		rec.ts_ns = now_ns;
		rec.caplen = (uint32_t)len;
		rec.origlen = (uint32_t)len + (cut ? 64 : 0);
		rec.linktype = link;
		rec.data = copy;
		(void)cap_record_host_hash(&rec);
		if (cap_decoder_run(d, &rec, &pkt) == SN_OK && pkt.payload_len) {
			volatile uint8_t last = pkt.payload[pkt.payload_len - 1];

			(void)last;
		}
		free(copy);
		pos += len;
	}
	return 0;
}
