/*
 * check_sip_torture.c - RFC 4475 torture messages against the SIP parser.
 *
 * Reads corpus/sip/rfc4475/INDEX (name, section, verdict, expected facts). Every valid message
 * must parse with no invalid flag and give the expected method/status, Request-URI, Call-ID,
 * CSeq, Via count, Content-Length and body length; every invalid one must be rejected
 * (SN_EPARSE, SN_ETRUNC) or carry an invalid flag with a reason. Every prefix of every message
 * must parse without crashing.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "sipnab/sip_msg.h"
#include "sipnab/sn_arena.h"

#define MAX_CASES 128

struct tcase_def {
	char name[64];
	char verdict[16];
	char expected[1024];
};

static struct tcase_def cases[MAX_CASES];
static int case_count;

static const char *corpus_dir(void)
{
	const char *d = getenv("SIPNAB_CORPUS");
	return d && *d ? d : "corpus";
}

static uint8_t *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	long n;

	if (!f) {
		return NULL;
	}
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc((size_t)n + 1);
	if (fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		fclose(f);
		return NULL;
	}
	fclose(f);
	*len = (size_t)n;
	return buf;
}

static void load_index(void)
{
	char path[512];
	char line[2048];
	FILE *f;

	snprintf(path, sizeof(path), "%s/sip/rfc4475/INDEX", corpus_dir());
	f = fopen(path, "r");
	if (!f) {
		return;
	}
	while (fgets(line, sizeof(line), f) && case_count < MAX_CASES) {
		char *save = NULL;
		char *name;
		char *verdict;
		char *exp;

		if (line[0] == '#' || line[0] == '\n') {
			continue;
		}
		line[strcspn(line, "\r\n")] = '\0';
		name = strtok_r(line, "\t", &save);
		(void)strtok_r(NULL, "\t", &save);
		verdict = strtok_r(NULL, "\t", &save);
		exp = strtok_r(NULL, "\t", &save);
		if (!name || !verdict || !exp) {
			continue;
		}
		snprintf(cases[case_count].name, sizeof(cases[0].name), "%s", name);
		snprintf(cases[case_count].verdict, sizeof(cases[0].verdict), "%s", verdict);
		snprintf(cases[case_count].expected, sizeof(cases[0].expected), "%s", exp);
		case_count++;
	}
	fclose(f);
}

/* Value of key in the ';'-separated expected list ("\;" is a literal ';'). */
static bool expected_get(const char *exp, const char *key, char *out, size_t out_len)
{
	size_t klen = strlen(key);
	const char *p = exp;

	while (*p) {
		const char *item = p;
		size_t n = 0;
		/* find the end of this item */
		while (p[0] && !(p[0] == ';' && (p == exp || p[-1] != '\\'))) {
			p++;
		}
		if (strncmp(item, key, klen) == 0 && item[klen] == '=') {
			for (const char *s = item + klen + 1; s < p && n + 1 < out_len; s++) {
				if (s[0] == '\\' && s + 1 < p && s[1] == ';') {
					continue;
				}
				out[n++] = *s;
			}
			out[n] = '\0';
			return true;
		}
		if (*p) {
			p++;
		}
	}
	return false;
}

static bool slice_is(struct sn_slice s, const char *str)
{
	return s.len == strlen(str) && memcmp(s.ptr, str, s.len) == 0;
}

START_TEST(test_sip_torture_index_is_present)
{
	ck_assert_int_ge(case_count, 49);
}
END_TEST

START_TEST(test_sip_torture_message_meets_verdict)
{
	const struct tcase_def *c = &cases[_i];
	char path[512];
	char v[1024];
	size_t len = 0;
	uint8_t *buf;
	struct sn_arena arena;
	struct sip_msg msg;
	enum sn_status st;

	snprintf(path, sizeof(path), "%s/sip/rfc4475/%s.sip", corpus_dir(), c->name);
	buf = read_file(path, &len);
	ck_assert_msg(buf != NULL, "%s: cannot read %s", c->name, path);
	sn_arena_init(&arena, 0);
	st = sip_msg_parse(&msg, &arena, buf, len);
	if (st == SN_OK) {
		/* the parse leaves semantic checks to the second pass */
		ck_assert_msg(sip_msg_validate(&msg, &arena) ==
				      ((msg.flags & SIP_MSG_F_INVALID) ? SN_EPARSE : SN_OK),
			      "%s: validate status", c->name);
	}
	if (strcmp(c->verdict, "valid") == 0) {
		ck_assert_msg(st == SN_OK, "%s: status %s", c->name, sn_status_str(st));
		ck_assert_msg((msg.flags & SIP_MSG_F_INVALID) == 0, "%s: flags 0x%x (%s)", c->name,
			      msg.flags, sip_msg_invalid_reason(&msg));
		if (expected_get(c->expected, "method", v, sizeof(v))) {
			ck_assert_msg(msg.is_request && slice_is(msg.method_name, v), "%s: method",
				      c->name);
		}
		if (expected_get(c->expected, "status", v, sizeof(v))) {
			ck_assert_msg(!msg.is_request && msg.status_code == atoi(v), "%s: status",
				      c->name);
		}
		if (expected_get(c->expected, "ruri", v, sizeof(v))) {
			ck_assert_msg(slice_is(msg.ruri, v), "%s: ruri", c->name);
		}
		if (expected_get(c->expected, "call_id", v, sizeof(v))) {
			ck_assert_msg(slice_is(msg.call_id, v), "%s: call_id", c->name);
		}
		if (expected_get(c->expected, "cseq", v, sizeof(v))) {
			char *sp = strchr(v, ' ');
			ck_assert_ptr_nonnull(sp);
			*sp = '\0';
			ck_assert_msg(msg.cseq == strtoul(v, NULL, 10), "%s: cseq %u", c->name,
				      msg.cseq);
			ck_assert_msg(slice_is(msg.cseq_method_name, sp + 1), "%s: cseq method",
				      c->name);
		}
		if (expected_get(c->expected, "vias", v, sizeof(v))) {
			ck_assert_msg(msg.via_count == strtoul(v, NULL, 10), "%s: vias %u", c->name,
				      msg.via_count);
		}
		if (expected_get(c->expected, "clen", v, sizeof(v))) {
			ck_assert_msg(msg.has_content_length &&
					      msg.content_length == strtoul(v, NULL, 10),
				      "%s: clen", c->name);
		}
		if (expected_get(c->expected, "body_len", v, sizeof(v))) {
			ck_assert_msg(msg.body.len == strtoul(v, NULL, 10), "%s: body_len %u",
				      c->name, msg.body.len);
		}
	} else {
		bool rejected = st == SN_EPARSE || st == SN_ETRUNC;
		bool flagged = st == SN_OK && (msg.flags & SIP_MSG_F_INVALID) != 0;
		ck_assert_msg(rejected || flagged, "%s: accepted (status %s, flags 0x%x)", c->name,
			      sn_status_str(st), msg.flags);
		if (flagged) {
			ck_assert_ptr_nonnull(sip_msg_invalid_reason(&msg));
		}
	}
	sn_arena_cleanup(&arena);
	free(buf);
}
END_TEST

START_TEST(test_sip_torture_every_prefix_parses_without_crash)
{
	const struct tcase_def *c = &cases[_i];
	char path[512];
	size_t len = 0;
	uint8_t *buf;
	struct sn_arena arena;
	struct sip_msg msg;
	size_t flen;

	snprintf(path, sizeof(path), "%s/sip/rfc4475/%s.sip", corpus_dir(), c->name);
	buf = read_file(path, &len);
	ck_assert_ptr_nonnull(buf);
	sn_arena_init(&arena, 0);
	for (size_t n = 0; n < len; n++) {
		/* an exact-size copy so ASan catches any read past the prefix */
		uint8_t *cp = malloc(n ? n : 1);
		memcpy(cp, buf, n);
		enum sn_status st = sip_msg_parse(&msg, &arena, cp, n);
		if (st == SN_OK || st == SN_ETRUNC) {
			(void)sip_msg_validate(&msg, &arena);
		}
		if (strcmp(c->verdict, "valid") == 0) {
			ck_assert_msg(st == SN_OK || st == SN_ETRUNC, "%s: prefix %zu gives %s",
				      c->name, n, sn_status_str(st));
		}
		(void)sip_msg_frame(cp, n, &flen);
		(void)sip_msg_is_start(cp, n);
		sn_arena_reset(&arena);
		free(cp);
	}
	sn_arena_cleanup(&arena);
	free(buf);
}
END_TEST

static Suite *sip_torture_suite(void)
{
	Suite *s = suite_create("sip_torture");
	TCase *tc;

	tc = tcase_create("index");
	tcase_add_test(tc, test_sip_torture_index_is_present);
	suite_add_tcase(s, tc);

	tc = tcase_create("verdict");
	tcase_add_loop_test(tc, test_sip_torture_message_meets_verdict, 0, case_count);
	suite_add_tcase(s, tc);

	tc = tcase_create("prefixes");
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, test_sip_torture_every_prefix_parses_without_crash, 0, case_count);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr;
	int failed;

	load_index();
	sr = srunner_create(sip_torture_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
