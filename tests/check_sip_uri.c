/*
 * check_sip_uri.c - sip:, sips:, tel: and opaque URI parsing, parameter lookup and comparison.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "sipnab/sip_uri.h"

#define SL(lit) sn_slice_make((lit), sizeof(lit) - 1)

static bool slice_is(struct sn_slice s, const char *str)
{
	return s.len == strlen(str) && memcmp(s.ptr, str, s.len) == 0;
}

#define ck_slice(s, str)                                                                          \
	ck_assert_msg(slice_is((s), (str)), "expected \"%s\", got \"%.*s\"", (str), (int)(s).len, \
		      (const char *)(s).ptr)

START_TEST(test_sip_uri_parses_full_sip_uri)
{
	struct sip_uri u;
	struct sn_slice v;

	ck_assert_int_eq(sip_uri_parse(SL("sip:alice:secret@atlanta.example.com:5070;transport=tcp;"
					  "lr;maddr=239.255.255.1;ttl=15;user=phone;method=INVITE;"
					  "x-y?subject=project%20x&priority=urgent"),
				       &u),
			 SN_OK);
	ck_assert_int_eq(u.scheme, SIP_URI_SIP);
	ck_slice(u.scheme_name, "sip");
	ck_slice(u.user, "alice");
	ck_slice(u.password, "secret");
	ck_slice(u.host, "atlanta.example.com");
	ck_assert(u.has_port);
	ck_assert_uint_eq(u.port, 5070);
	ck_slice(u.transport, "tcp");
	ck_assert(u.lr);
	ck_slice(u.maddr, "239.255.255.1");
	ck_slice(u.ttl, "15");
	ck_slice(u.user_param, "phone");
	ck_slice(u.method, "INVITE");
	ck_slice(u.headers, "subject=project%20x&priority=urgent");
	ck_assert(sip_uri_header_find(&u, "Priority", &v));
	ck_slice(v, "urgent");
	ck_assert(sip_param_find(u.params, "x-y", &v));
	ck_assert_ptr_null(v.ptr);
	ck_assert(!sip_param_find(u.params, "nope", NULL));
}
END_TEST

START_TEST(test_sip_uri_parses_hosts_and_ports)
{
	struct sip_uri u;

	ck_assert_int_eq(sip_uri_parse(SL("sips:[2001:db8::10]:5061"), &u), SN_OK);
	ck_assert_int_eq(u.scheme, SIP_URI_SIPS);
	ck_assert(u.host_is_ipv6);
	ck_slice(u.host, "[2001:db8::10]");
	ck_assert_uint_eq(u.port, 5061);
	ck_assert_int_eq(sip_uri_parse(SL("SIP:192.0.2.4"), &u), SN_OK);
	ck_slice(u.host, "192.0.2.4");
	ck_assert(!u.has_port);
	ck_assert_uint_eq(u.user.len, 0);
	ck_assert_int_eq(sip_uri_parse(SL("sip:user;par=u%40example.net@example.com"), &u), SN_OK);
	ck_slice(u.user, "user;par=u%40example.net");
	ck_slice(u.host, "example.com");
}
END_TEST

START_TEST(test_sip_uri_rejects_malformed_uris)
{
	static const char *const bad[] = {
		"",
		"sip:",
		"sip:@host",
		"sip:host:",
		"sip:host:99999",
		"sip:host:12a",
		"sip:us er@host",
		"sip:[::1",
		"sip:host;;lr",
		"sip:host;=x",
		"<sip:host>",
		"sip:ho<st",
		"1sip:host",
		"sip:user@",
		"tel:",
		"sip:%zz@host",
		"sip:host;a=",
	};
	struct sip_uri u;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_msg(sip_uri_parse(sn_slice_make(bad[i], strlen(bad[i])), &u) == SN_EPARSE,
			      "case %zu: %s", i, bad[i]);
	}
}
END_TEST

START_TEST(test_sip_uri_parses_tel_uri)
{
	struct sip_uri u;
	struct sn_slice v;

	ck_assert_int_eq(sip_uri_parse(SL("tel:+1-201-555-0123;phone-context=example.com"), &u),
			 SN_OK);
	ck_assert_int_eq(u.scheme, SIP_URI_TEL);
	ck_slice(u.user, "+1-201-555-0123");
	ck_assert(sip_param_find(u.params, "phone-context", &v));
	ck_slice(v, "example.com");
	ck_assert_uint_eq(u.host.len, 0);
}
END_TEST

START_TEST(test_sip_uri_keeps_other_schemes_opaque)
{
	struct sip_uri u;

	ck_assert_int_eq(sip_uri_parse(SL("soap.beep://192.0.2.103:3002"), &u), SN_OK);
	ck_assert_int_eq(u.scheme, SIP_URI_OTHER);
	ck_slice(u.scheme_name, "soap.beep");
	ck_slice(u.opaque, "//192.0.2.103:3002");
	ck_assert_int_eq(sip_uri_parse(SL("isbn:2983792873"), &u), SN_OK);
}
END_TEST

START_TEST(test_sip_uri_param_walker_handles_whitespace_and_quotes)
{
	struct sn_slice rest = SL(" tag = 1918181833n ; x=\"a;b\" ;flag");
	struct sn_slice n;
	struct sn_slice v;

	ck_assert(sip_param_next(&rest, ';', &n, &v));
	ck_slice(n, "tag");
	ck_slice(v, "1918181833n");
	ck_assert(sip_param_next(&rest, ';', &n, &v));
	ck_slice(n, "x");
	ck_slice(v, "\"a;b\"");
	ck_assert(sip_param_next(&rest, ';', &n, &v));
	ck_slice(n, "flag");
	ck_assert_ptr_null(v.ptr);
	ck_assert(!sip_param_next(&rest, ';', &n, &v));
}
END_TEST

START_TEST(test_sip_uri_compares_with_escapes_decoded)
{
	struct sip_uri a;
	struct sip_uri b;

	ck_assert(sip_uri_unescaped_eq(SL("%61lice"), SL("alice"), false));
	ck_assert(sip_uri_unescaped_eq(SL("ALICE"), SL("%61lice"), true));
	ck_assert(!sip_uri_unescaped_eq(SL("ALICE"), SL("%61lice"), false));
	ck_assert(!sip_uri_unescaped_eq(SL("alic"), SL("alice"), false));
	/* RFC 3261 §19.1.4 examples */
	ck_assert_int_eq(sip_uri_parse(SL("sip:%61lice@atlanta.com;transport=TCP"), &a), SN_OK);
	ck_assert_int_eq(sip_uri_parse(SL("sip:alice@AtLanTa.CoM;Transport=tcp"), &b), SN_OK);
	ck_assert(sip_uri_eq(&a, &b));
	ck_assert_int_eq(sip_uri_parse(SL("sip:ALICE@AtLanTa.CoM;Transport=udp"), &a), SN_OK);
	ck_assert_int_eq(sip_uri_parse(SL("sip:alice@AtLanTa.CoM;Transport=UDP"), &b), SN_OK);
	ck_assert(!sip_uri_eq(&a, &b));
	ck_assert_int_eq(sip_uri_parse(SL("sip:bob@biloxi.com"), &a), SN_OK);
	ck_assert_int_eq(sip_uri_parse(SL("sip:bob@biloxi.com:5060"), &b), SN_OK);
	ck_assert(!sip_uri_eq(&a, &b));
	ck_assert_int_eq(sip_uri_parse(SL("sip:bob@biloxi.com;transport=udp"), &b), SN_OK);
	ck_assert(!sip_uri_eq(&a, &b));
	ck_assert_int_eq(sip_uri_parse(SL("sip:carol@chicago.com;newparam=5"), &a), SN_OK);
	ck_assert_int_eq(sip_uri_parse(SL("sip:carol@chicago.com;security=on"), &b), SN_OK);
	ck_assert(sip_uri_eq(&a, &b));
}
END_TEST

static Suite *sip_uri_suite(void)
{
	Suite *s = suite_create("sip_uri");
	TCase *tc;

	tc = tcase_create("sip_uri");
	tcase_add_test(tc, test_sip_uri_parses_full_sip_uri);
	tcase_add_test(tc, test_sip_uri_parses_hosts_and_ports);
	suite_add_tcase(s, tc);
	tc = tcase_create("malformed");
	tcase_add_test(tc, test_sip_uri_rejects_malformed_uris);
	suite_add_tcase(s, tc);
	tc = tcase_create("other_schemes");
	tcase_add_test(tc, test_sip_uri_parses_tel_uri);
	tcase_add_test(tc, test_sip_uri_keeps_other_schemes_opaque);
	suite_add_tcase(s, tc);
	tc = tcase_create("params");
	tcase_add_test(tc, test_sip_uri_param_walker_handles_whitespace_and_quotes);
	suite_add_tcase(s, tc);
	tc = tcase_create("compare");
	tcase_add_test(tc, test_sip_uri_compares_with_escapes_decoded);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(sip_uri_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
