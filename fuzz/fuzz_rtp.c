/*
 * fuzz_rtp.c - libFuzzer target for src/rtp: the input is cut into records of
 * [2-byte length][bytes]; each record is tried as RTP (header parse, plausibility, stream
 * update with an arrival time taken from the bytes) and as RTCP (compound parse, summary
 * update), so the stream state machine sees hostile sequences, not just single packets.
 * Not part of the library; built by hand or by the fuzz targets in fuzz/Makefile.inc.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "sipnab/rtcp.h"
#include "sipnab/rtp_mos.h"
#include "sipnab/rtp_stream.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rtp_stream st;
	struct rtp_stats kept;
	struct rtcp_summary sum;
	struct rtcp_compound c;
	struct rtp_hdr h;
	int64_t t = 1767225600000000000LL;
	size_t off = 0;
	volatile double sink;

	rtp_stream_init(&st, 0, size % 2 ? 8000 : 0, size % 3 ? 101 : RTP_PT_NONE);
	rtcp_summary_init(&sum, 0);
	while (off + 2 <= size) {
		size_t n = SN_MIN((size_t)sn_be16(data + off), size - off - 2);
		const uint8_t *p = data + off + 2;

		off += 2 + n;
		if (n >= 1) {
			t += (int64_t)p[0] * 250000 - 10000000;
		}
		(void)rtp_is_plausible(p, n);
		if (rtp_hdr_parse(p, n, &h) == SN_OK) {
			if (st.packets == 0) {
				st.ssrc = h.ssrc;
			}
			rtp_stream_update(&st, t, &h, (uint32_t)n);
		}
		(void)rtcp_is_plausible(p, n);
		if (rtcp_parse(p, n, &c) == SN_OK) {
			rtcp_summary_update(&sum, &c, t, 8000);
		}
	}
	sink = rtp_mos_stream(&st, RTP_MOS_CODEC_G711, 20) + rtp_stream_loss_pct(&st);
	/* what a result keeps of the stream gives the same figures */
	rtp_stream_summarise(&st, &kept);
	if (rtp_stats_lost(&kept) != rtp_stream_lost(&st) || kept.dtmf[RTP_DTMF_MAX] != '\0') {
		abort();
	}
	(void)sink;
	return 0;
}
