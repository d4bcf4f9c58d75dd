/*
 * ana_ladder.c - layout of a call's message ladder, shared by the text report and the UI.
 *
 * Columns are the distinct (address, port) endpoints of the call's messages, in order of
 * first appearance (sender before receiver). Lane i sits at x = i * col_width + col_width / 2
 * in the lanes area; an arrow's shaft spans the characters strictly between its two lanes
 * (crossing the lanes in between), with the head next to the receiver. A message an endpoint
 * sends to itself gets a short arrow to the right of its lane.
 * Everything is ASCII (labels are sanitised), so a character is one column on any terminal.
 * Ownership: struct ana_ladder owns its two arrays (sn_xcalloc); it borrows nothing.
 * Thread: pure functions; any thread.
 */
#include "config.h"

#include "sipnab/ana_ladder.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void sanitise(char *s)
{
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;
		if (ch < 0x20 || ch >= 0x7f) {
			*s = '?';
		}
	}
}

void ana_ladder_label(const struct eng_msg *m, char *buf, size_t len)
{
	const char *sdp = m->media_count > 0 ? " (SDP)" : "";

	if (m->is_request) {
		snprintf(buf, len, "%s%s", m->method_name ? m->method_name : "?", sdp);
	} else if (m->reason && m->reason[0]) {
		snprintf(buf, len, "%u %s%s", m->status, m->reason, sdp);
	} else {
		snprintf(buf, len, "%u%s", m->status, sdp);
	}
	sanitise(buf);
}

static uint32_t col_find_or_add(struct ana_ladder *l, const struct sn_addr *a, uint16_t port)
{
	struct ana_ladder_col *col;

	for (uint32_t i = 0; i < l->col_count; i++) {
		if (l->cols[i].port == port && sn_addr_cmp(&l->cols[i].addr, a) == 0) {
			return i;
		}
	}
	col = &l->cols[l->col_count];
	col->addr = *a;
	col->port = port;
	eng_endpoint_str(a, port, col->name, sizeof(col->name));
	sanitise(col->name);
	return l->col_count++;
}

void ana_ladder_init(struct ana_ladder *l, const struct eng_result *r, const struct eng_call *c,
		     uint32_t col_width)
{
	uint32_t w = ANA_LADDER_COL_MIN;
	int64_t t0 = c->msg_count ? r->msgs[c->msgs[0]]->ts_ns : 0;

	memset(l, 0, sizeof(*l));
	/* at most two new endpoints per message */
	l->cols = sn_xcalloc(2u * c->msg_count + 1u, sizeof(*l->cols));
	l->arrows = sn_xcalloc(c->msg_count + 1u, sizeof(*l->arrows));
	for (uint32_t i = 0; i < c->msg_count; i++) {
		const struct eng_msg *m = r->msgs[c->msgs[i]];
		struct ana_ladder_arrow *a = &l->arrows[l->arrow_count++];

		a->msg = c->msgs[i];
		a->from = col_find_or_add(l, &m->src, m->sport);
		a->to = col_find_or_add(l, &m->dst, m->dport);
		a->right = a->from <= a->to;
		a->retransmission = m->retransmission;
		a->rel_ns = m->ts_ns - t0;
		ana_ladder_label(m, a->label, sizeof(a->label));
		w = SN_MAX(w, (uint32_t)strlen(a->label) + 6u);
	}
	for (uint32_t i = 0; i < l->col_count; i++) {
		w = SN_MAX(w, (uint32_t)strlen(l->cols[i].name) + 2u);
	}
	l->col_width = col_width ? col_width : SN_MIN(w, ANA_LADDER_COL_MAX);
	if (l->col_width < 4) {
		l->col_width = 4;
	}
	l->width = l->col_count * l->col_width;
	for (uint32_t i = 0; i < l->col_count; i++) {
		l->cols[i].x = i * l->col_width + l->col_width / 2;
	}
	for (uint32_t i = 0; i < l->arrow_count; i++) {
		struct ana_ladder_arrow *a = &l->arrows[i];
		uint32_t xf = l->cols[a->from].x;
		uint32_t xt = l->cols[a->to].x;

		if (a->from == a->to) {
			a->x0 = xf + 1;
			a->x1 = xf + (l->col_width - 1) / 2;
		} else {
			a->x0 = SN_MIN(xf, xt) + 1;
			a->x1 = SN_MAX(xf, xt) - 1;
		}
	}
}

void ana_ladder_cleanup(struct ana_ladder *l)
{
	free(l->cols);
	free(l->arrows);
	memset(l, 0, sizeof(*l));
}

/* Copy @p s into @p line at @p x, within [0, width), at most @p max characters. */
static void put_text(char *line, uint32_t width, uint32_t x, const char *s, size_t max)
{
	for (size_t i = 0; s[i] && i < max && x + i < width; i++) {
		line[x + i] = s[i];
	}
}

/* Blank line with every lane drawn; returns the number of characters used. */
static uint32_t lanes(const struct ana_ladder *l, char *line, size_t len)
{
	uint32_t n = (uint32_t)SN_MIN((size_t)l->width, len - 1);

	memset(line, ' ', n);
	line[n] = '\0';
	for (uint32_t i = 0; i < l->col_count; i++) {
		if (l->cols[i].x < n) {
			line[l->cols[i].x] = '|';
		}
	}
	return n;
}

void ana_ladder_draw_arrow(const struct ana_ladder *l, uint32_t i, char *buf, size_t len)
{
	const struct ana_ladder_arrow *a = &l->arrows[i];
	uint32_t n, shaft;
	size_t lab;

	if (len == 0) {
		return;
	}
	n = lanes(l, buf, len);
	if (a->x1 < a->x0 || a->x0 >= n) {
		return;
	}
	/* clipped to the buffer: a narrow screen shows the left part */
	memset(buf + a->x0, '-', SN_MIN(a->x1, n - 1) - a->x0 + 1);
	if (!a->right) {
		buf[a->x0] = '<';
	} else if (a->x1 < n) {
		buf[a->x1] = '>';
	}
	shaft = a->x1 - a->x0 + 1;
	lab = strlen(a->label);
	if (shaft <= 4) {
		return;
	}
	lab = SN_MIN(lab, (size_t)shaft - 4);
	put_text(buf, n, a->x0 + (uint32_t)(shaft - lab) / 2, a->label, lab);
}

void ana_ladder_draw_header(const struct ana_ladder *l, char *buf, size_t len)
{
	uint32_t n;

	if (len == 0) {
		return;
	}
	n = (uint32_t)SN_MIN((size_t)l->width, len - 1);
	memset(buf, ' ', n);
	buf[n] = '\0';
	for (uint32_t i = 0; i < l->col_count; i++) {
		size_t nl = SN_MIN(strlen(l->cols[i].name), (size_t)l->col_width - 1);
		uint32_t x = l->cols[i].x - (uint32_t)SN_MIN(nl / 2, (size_t)l->cols[i].x);

		put_text(buf, n, x, l->cols[i].name, nl);
	}
}
