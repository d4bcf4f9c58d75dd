/*
 * ana_filter.c - problem detection and call selection for the report.
 *
 * Rules (one bit of enum ana_problem each):
 *   FAILED      state REJECTED, BUSY or FAILED, or still CALL_SETUP without a final
 *               response when the capture ended;
 *   LOW_MOS     a stream with an E-model MOS below 3.6 (streams without a MOS are skipped);
 *   LOSS        a stream losing more than 1 % of the expected packets (RFC 3550 A.3);
 *   ONE_WAY     an answered INVITE call, answered for at least 1 s, with no media or with a
 *               stream that has no stream in the opposite direction;
 *   RETRANS     SIP retransmissions;
 *   SLOW_SETUP  setup above --slow-setup's threshold (only when that selection is given);
 *   SHORT_CALL  answered and ended, shorter than --short-calls' threshold (likewise).
 * Selections combine with OR: --problems picks the first five, the others their own bit.
 * Pure functions over an immutable struct eng_result: any thread, no allocation.
 */
#include "config.h"

#include "sipnab/ana_filter.h"

#include <string.h>

void ana_filter_init(struct ana_filter *f)
{
	memset(f, 0, sizeof(*f));
	f->slow_setup_ms = ANA_FILTER_SLOW_SETUP_MS;
	f->short_call_s = ANA_FILTER_SHORT_CALL_S;
}

bool ana_filter_is_active(const struct ana_filter *f)
{
	return f && (f->problems || f->one_way || f->slow_setup || f->short_calls);
}

const char *ana_problem_name(enum ana_problem p)
{
	switch (p) {
	case ANA_PROB_FAILED:
		return "FAILED";
	case ANA_PROB_LOW_MOS:
		return "LOW_MOS";
	case ANA_PROB_LOSS:
		return "LOSS";
	case ANA_PROB_ONE_WAY:
		return "ONE_WAY";
	case ANA_PROB_RETRANS:
		return "RETRANSMISSIONS";
	case ANA_PROB_SLOW_SETUP:
		return "SLOW_SETUP";
	case ANA_PROB_SHORT_CALL:
		return "SHORT_CALL";
	}
	return "UNKNOWN";
}

int64_t ana_call_setup_ns(const struct eng_call *c)
{
	int64_t from = c->attempt_ns >= 0 ? c->attempt_ns : c->start_ns;

	if (from < 0) {
		return -1;
	}
	if (c->ring_ns >= from) {
		return c->ring_ns - from;
	}
	if (c->answer_ns >= 0) {
		return c->answer_ns - from;
	}
	return -1;
}

uint32_t ana_filter_stream_problems(const struct eng_stream *s)
{
	uint32_t p = 0;

	if (s->mos > 0 && s->mos < ANA_FILTER_MOS_MIN) {
		p |= ANA_PROB_LOW_MOS;
	}
	if (rtp_stats_loss_pct(&s->rtp) > ANA_FILTER_LOSS_MAX_PCT) {
		p |= ANA_PROB_LOSS;
	}
	return p;
}

static bool streams_opposite(const struct eng_stream *a, const struct eng_stream *b)
{
	if (sn_addr_cmp(&a->src, &b->dst) != 0 || sn_addr_cmp(&a->dst, &b->src) != 0) {
		return false;
	}
	if (sn_addr_cmp(&a->src, &a->dst) == 0) {
		/* both ends on one host: only the ports tell the directions apart */
		return a->sport == b->dport && a->dport == b->sport;
	}
	return true;
}

uint32_t ana_filter_one_way_streams(const struct eng_result *r, const struct eng_call *c)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < c->stream_count; i++) {
		const struct eng_stream *a = &r->streams[c->streams[i]];
		bool found = false;

		for (uint32_t j = 0; j < c->stream_count && !found; j++) {
			found = j != i && streams_opposite(a, &r->streams[c->streams[j]]);
		}
		if (!found) {
			n++;
		}
	}
	return n;
}

static bool call_is_one_way(const struct eng_result *r, const struct eng_call *c)
{
	int64_t until;

	if (!c->is_invite || c->answer_ns < 0) {
		return false;
	}
	until = c->end_ns >= 0 ? c->end_ns : r->stats.last_ts_ns;
	if (until - c->answer_ns < ANA_FILTER_ONE_WAY_NS) {
		return false;
	}
	return c->stream_count == 0 || ana_filter_one_way_streams(r, c) > 0;
}

uint32_t ana_filter_call_problems(const struct ana_filter *f, const struct eng_result *r,
				  const struct eng_call *c)
{
	uint32_t p = 0;
	int64_t setup;

	switch (c->state) {
	case ENG_CALL_REJECTED:
	case ENG_CALL_BUSY:
	case ENG_CALL_FAILED:
		p |= ANA_PROB_FAILED;
		break;
	case ENG_CALL_SETUP:
		if (c->final_code == 0) {
			p |= ANA_PROB_FAILED;
		}
		break;
	default:
		break;
	}
	for (uint32_t i = 0; i < c->stream_count; i++) {
		p |= ana_filter_stream_problems(&r->streams[c->streams[i]]);
	}
	if (call_is_one_way(r, c)) {
		p |= ANA_PROB_ONE_WAY;
	}
	if (c->retransmissions > 0) {
		p |= ANA_PROB_RETRANS;
	}
	if (!f) {
		return p;
	}
	setup = ana_call_setup_ns(c);
	if (f->slow_setup && setup > (int64_t)f->slow_setup_ms * 1000000) {
		p |= ANA_PROB_SLOW_SETUP;
	}
	if (f->short_calls && c->answer_ns >= 0 && c->end_ns >= 0 &&
	    c->end_ns - c->answer_ns < (int64_t)f->short_call_s * 1000000000) {
		p |= ANA_PROB_SHORT_CALL;
	}
	return p;
}

bool ana_filter_match(const struct ana_filter *f, const struct eng_result *r,
		      const struct eng_call *c)
{
	uint32_t want = 0;

	if (!ana_filter_is_active(f)) {
		return true;
	}
	if (f->problems) {
		want |= ANA_PROB_FAILED | ANA_PROB_LOW_MOS | ANA_PROB_LOSS | ANA_PROB_ONE_WAY |
			ANA_PROB_RETRANS;
	}
	if (f->one_way) {
		want |= ANA_PROB_ONE_WAY;
	}
	if (f->slow_setup) {
		want |= ANA_PROB_SLOW_SETUP;
	}
	if (f->short_calls) {
		want |= ANA_PROB_SHORT_CALL;
	}
	return (ana_filter_call_problems(f, r, c) & want) != 0;
}
