/*
 * sip_test_msg.h - test helper shared by check_sip_txn.c and check_sip_dialog.c: build a SIP
 * message from a few fields, parse it into the test's arena and convert it to the facts that
 * transaction and dialog matching use. Included by test programs only.
 */
#ifndef SIPNAB_TESTS_SIP_TEST_MSG_H
#define SIPNAB_TESTS_SIP_TEST_MSG_H

#include <stdio.h>
#include <string.h>

#include <check.h>

#include "sipnab/sip_msg.h"
#include "sipnab/sip_txn.h"
#include "sipnab/sn_arena.h"

/* What a test message looks like; unset fields get defaults. */
struct spec {
	const char *method;	 /* request method; NULL for a response */
	uint16_t status;	 /* response status */
	const char *cseq_method; /* default: method */
	uint32_t cseq;		 /* default 1 */
	const char *branch;	 /* NULL: Via without branch */
	const char *via;	 /* sent-by, default "192.0.2.1:5060" */
	const char *from_tag;	 /* default "alice1" */
	const char *to_tag;	 /* NULL: none */
	const char *ruri;	 /* default "sip:bob@192.0.2.2" */
	const char *call_id;	 /* default "call-1@192.0.2.1" */
};

/* Text of the message, parsed into @p ar and converted. */
static inline struct sip_txn_msg sip_test_build(struct sn_arena *ar, const struct spec *sp,
						 int64_t ts, uint32_t hop)
{
	char text[2048];
	char branch[128] = "";
	char to_tag[128] = "";
	const char *cm = sp->cseq_method ? sp->cseq_method : sp->method;
	int n;
	void *buf;
	struct sip_msg msg;
	struct sip_txn_msg out;

	if (sp->branch) {
		snprintf(branch, sizeof(branch), ";branch=%s", sp->branch);
	}
	if (sp->to_tag) {
		snprintf(to_tag, sizeof(to_tag), ";tag=%s", sp->to_tag);
	}
	if (sp->method) {
		n = snprintf(text, sizeof(text), "%s %s SIP/2.0\r\n", sp->method,
			     sp->ruri ? sp->ruri : "sip:bob@192.0.2.2");
	} else {
		n = snprintf(text, sizeof(text), "SIP/2.0 %u Whatever\r\n", sp->status);
	}
	n += snprintf(text + n, sizeof(text) - (size_t)n,
		      "Via: SIP/2.0/UDP %s%s%s\r\n"
		      "Via: SIP/2.0/UDP 198.51.100.9;branch=z9hG4bKlower\r\n"
		      "Max-Forwards: 70\r\n"
		      "From: <sip:alice@192.0.2.1>;tag=%s\r\n"
		      "To: <sip:bob@192.0.2.2>%s\r\n"
		      "Call-ID: %s\r\n"
		      "CSeq: %u %s\r\n"
		      "Content-Length: 0\r\n\r\n",
		      sp->via ? sp->via : "192.0.2.1:5060", branch,
		      sp->method ? "" : ";received=192.0.2.1",
		      sp->from_tag ? sp->from_tag : "alice1", to_tag,
		      sp->call_id ? sp->call_id : "call-1@192.0.2.1", sp->cseq ? sp->cseq : 1, cm);
	ck_assert_int_lt(n, (int)sizeof(text));
	ck_assert_int_eq(sn_arena_alloc(ar, (size_t)n, &buf), SN_OK);
	memcpy(buf, text, (size_t)n);
	ck_assert_int_eq(sip_msg_parse(&msg, ar, buf, (size_t)n), SN_OK);
	sip_txn_msg_from(&msg, &out, ts, hop);
	return out;
}

#endif
