/*
 * bench_sip.c - microbenchmark of the SIP parser on the capture hot path: sip_msg_parse() of an
 * INVITE with SDP (about 900 bytes, 12 headers) and of its 200 OK with SDP, the From/To
 * accessors the engine calls on every message, and the full RFC 3261 validation
 * (sip_msg_validate()) that the torture tests and the proxy run; and sdp_parse() of each
 * message's body, which the engine runs on every message that carries SDP.
 * Usage: bench/bench_sip (BENCH_SECONDS sets the time of one repetition).
 */
#include "config.h"

#include <string.h>

#include "sipnab/sdp.h"
#include "sipnab/sip_msg.h"
#include "sipnab/sn_arena.h"

#include "bench_int.h"

static const char invite[] =
	"INVITE sip:+16662004711@10.2.0.17:5060 SIP/2.0\r\n"
	"Via: SIP/2.0/UDP 10.1.0.23:5060;branch=z9hG4bK5f3a9c1e0b27;rport\r\n"
	"Max-Forwards: 70\r\n"
	"From: \"Alice Caller\" <sip:+15551001234@10.1.0.23>;tag=8a3f01c2\r\n"
	"To: <sip:+16662004711@10.2.0.17>\r\n"
	"Call-ID: 3c26700d5a4b1e7f@10.1.0.23\r\n"
	"CSeq: 1 INVITE\r\n"
	"Contact: <sip:+15551001234@10.1.0.23:5060;transport=udp>\r\n"
	"User-Agent: carrier-gw/1.0 (build 4471)\r\n"
	"Allow: INVITE, ACK, BYE, CANCEL, OPTIONS, PRACK, UPDATE, INFO, REFER, NOTIFY\r\n"
	"Supported: 100rel, timer, replaces, norefersub\r\n"
	"Content-Type: application/sdp\r\n"
	"Content-Length: 361\r\n"
	"\r\n"
	"v=0\r\n"
	"o=- 1712345678 1712345678 IN IP4 10.1.0.23\r\n"
	"s=carrier-gw\r\n"
	"c=IN IP4 10.1.0.23\r\n"
	"t=0 0\r\n"
	"m=audio 16384 RTP/AVP 0 8 18 101\r\n"
	"a=rtpmap:0 PCMU/8000\r\n"
	"a=rtpmap:8 PCMA/8000\r\n"
	"a=rtpmap:18 G729/8000\r\n"
	"a=fmtp:18 annexb=no\r\n"
	"a=rtpmap:101 telephone-event/8000\r\n"
	"a=fmtp:101 0-16\r\n"
	"a=ptime:20\r\n"
	"a=maxptime:40\r\n"
	"a=sendrecv\r\n"
	"a=rtcp:16385 IN IP4 10.1.0.23\r\n"
	"a=silenceSupp:off - - - -\r\n";

static const char ok200[] =
	"SIP/2.0 200 OK\r\n"
	"Via: SIP/2.0/UDP 10.1.0.23:5060;branch=z9hG4bK5f3a9c1e0b27;rport=5060;"
	"received=10.1.0.23\r\n"
	"From: \"Alice Caller\" <sip:+15551001234@10.1.0.23>;tag=8a3f01c2\r\n"
	"To: <sip:+16662004711@10.2.0.17>;tag=77c1e09b\r\n"
	"Call-ID: 3c26700d5a4b1e7f@10.1.0.23\r\n"
	"CSeq: 1 INVITE\r\n"
	"Contact: <sip:+16662004711@10.2.0.17:5060>\r\n"
	"Server: carrier-core/1.0\r\n"
	"Allow: INVITE, ACK, BYE, CANCEL, OPTIONS, PRACK, UPDATE, INFO, REFER, NOTIFY\r\n"
	"Supported: timer, replaces\r\n"
	"Content-Type: application/sdp\r\n"
	"Content-Length: 252\r\n"
	"\r\n"
	"v=0\r\n"
	"o=- 998877 998877 IN IP4 10.2.0.17\r\n"
	"s=carrier-core\r\n"
	"c=IN IP4 10.2.0.17\r\n"
	"t=0 0\r\n"
	"m=audio 20000 RTP/AVP 0 101\r\n"
	"a=rtpmap:0 PCMU/8000\r\n"
	"a=rtpmap:101 telephone-event/8000\r\n"
	"a=fmtp:101 0-16\r\n"
	"a=ptime:20\r\n"
	"a=sendrecv\r\n"
	"a=rtcp:20001\r\n"
	"a=silenceSupp:off - - - -\r\n";

struct sip_ctx {
	const uint8_t *p;
	size_t len;
	struct sn_arena arena;
	struct sip_msg msg;
};

static uint64_t body_parse(void *arg, uint64_t iters)
{
	struct sip_ctx *c = arg;
	uint64_t sum = 0;

	for (uint64_t i = 0; i < iters; i++) {
		sn_arena_reset(&c->arena);
		bench_keep(c->p);
		if (sip_msg_parse(&c->msg, &c->arena, c->p, c->len) == SN_OK) {
			sum += c->msg.hdr_count + c->msg.body.len + c->msg.cseq + c->msg.flags;
		}
		bench_keep(&c->msg);
	}
	return sum;
}

/* What the engine's keep_fields() asks for beyond the parse: From/To URIs. */
static uint64_t body_from_to(void *arg, uint64_t iters)
{
	struct sip_ctx *c = arg;
	struct sip_name_addr na;
	uint64_t sum = 0;

	for (uint64_t i = 0; i < iters; i++) {
		bench_keep(&c->msg);
		if (sip_msg_from(&c->msg, &na) == SN_OK) {
			sum += na.uri_text.len;
		}
		if (sip_msg_to(&c->msg, &na) == SN_OK) {
			sum += na.uri_text.len;
		}
	}
	return sum;
}

static uint64_t body_validate(void *arg, uint64_t iters)
{
	struct sip_ctx *c = arg;
	uint64_t sum = 0;

	for (uint64_t i = 0; i < iters; i++) {
		bench_keep(&c->msg);
		c->msg.flags &= ~SIP_MSG_F_INVALID;
		if (sip_msg_validate(&c->msg, &c->arena) == SN_OK) {
			sum += c->msg.flags;
		}
	}
	return sum;
}

/* What the engine's keep_sdp() does with the body: sdp_parse() into a reset arena. */
static uint64_t body_sdp(void *arg, uint64_t iters)
{
	struct sip_ctx *c = arg;
	struct sdp_session s;
	uint64_t sum = 0;

	for (uint64_t i = 0; i < iters; i++) {
		sn_arena_reset(&c->arena);
		bench_keep(c->msg.body.ptr);
		if (sdp_parse(&s, &c->arena, c->msg.body.ptr, c->msg.body.len) == SN_OK) {
			sum += s.media_count + s.media[0].format_count + s.media[0].port;
		}
		bench_keep(&s);
	}
	return sum;
}

static int run_one(const char *what, const char *text, size_t len)
{
	struct sip_ctx c;
	char name[64];
	enum sn_status st;

	memset(&c, 0, sizeof(c));
	c.p = (const uint8_t *)text;
	c.len = len;
	sn_arena_init(&c.arena, 0);
	st = sip_msg_parse(&c.msg, &c.arena, c.p, c.len);
	if (st != SN_OK || sip_msg_validate(&c.msg, &c.arena) != SN_OK ||
	    (c.msg.flags & SIP_MSG_F_INVALID)) {
		fprintf(stderr, "bench_sip: %s does not parse cleanly (%s, flags 0x%x)\n", what,
			sn_status_str(st), c.msg.flags);
		sn_arena_cleanup(&c.arena);
		return 1;
	}
	snprintf(name, sizeof(name), "sip_msg_parse %s", what);
	bench_run(name, body_parse, &c);
	sn_arena_reset(&c.arena);
	(void)sip_msg_parse(&c.msg, &c.arena, c.p, c.len);
	snprintf(name, sizeof(name), "sip_msg_from+to %s", what);
	bench_run(name, body_from_to, &c);
	snprintf(name, sizeof(name), "sip_msg_validate %s", what);
	bench_run(name, body_validate, &c);
	snprintf(name, sizeof(name), "sdp_parse %s body", what);
	bench_run(name, body_sdp, &c);
	sn_arena_cleanup(&c.arena);
	return 0;
}

int main(void)
{
	int rc = 0;

	printf("bench_sip: INVITE %zu bytes, 200 OK %zu bytes\n", sizeof(invite) - 1,
	       sizeof(ok200) - 1);
	rc |= run_one("INVITE+SDP", invite, sizeof(invite) - 1);
	rc |= run_one("200 OK+SDP", ok200, sizeof(ok200) - 1);
	return rc;
}
