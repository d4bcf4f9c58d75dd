/*
 * ana_ladder.h - the layout of a call's message ladder (sngrep's call flow): one column per
 * distinct address:port in order of first appearance, one arrow per message. Pure layout: the
 * text report and the ncurses UI both draw from it; nothing here writes to a terminal.
 */
#ifndef SIPNAB_ANA_LADDER_H
#define SIPNAB_ANA_LADDER_H

#include "sipnab/eng_result.h"

#define ANA_LADDER_LABEL_LEN 64u /* bytes kept of an arrow label */
#define ANA_LADDER_COL_MIN   18u /* narrowest column */
#define ANA_LADDER_COL_MAX   48u /* widest column */

/* One column: a SIP endpoint. */
struct ana_ladder_col {
	struct sn_addr addr;
	uint16_t port;
	char name[64]; /* "addr:port" */
	uint32_t x;    /* position of the column's lane '|' from the start of the lanes area */
};

/* One message. The arrow shaft covers [x0, x1] (both inclusive, between the two lanes). */
struct ana_ladder_arrow {
	uint32_t msg;	     /* index into eng_result.msgs */
	uint32_t from, to;   /* column indexes of sender and receiver */
	bool right;	     /* drawn left to right (from < to, or a message to itself) */
	bool retransmission; /* copied from the message */
	int64_t rel_ns;	     /* time since the call's first message */
	uint32_t x0, x1;     /* shaft span in the lanes area */
	char label[ANA_LADDER_LABEL_LEN]; /* "INVITE (SDP)", "200 OK" ..., sanitised */
};

/* A laid-out ladder. Owner: the caller; ana_ladder_cleanup() frees the arrays. */
struct ana_ladder {
	struct ana_ladder_col *cols; /* col_count entries */
	uint32_t col_count;
	struct ana_ladder_arrow *arrows; /* arrow_count entries, the call's messages in order */
	uint32_t arrow_count;
	uint32_t col_width; /* distance between two lanes */
	uint32_t width;	    /* characters of the lanes area */
};

/**
 * Arrow label of a message: the method (requests) or "code reason" (responses), with " (SDP)"
 * when it carried a body with media; control bytes replaced by '?'.
 * @param m the message
 * @param buf destination
 * @param len its size in bytes (at least 1)
 */
void ana_ladder_label(const struct eng_msg *m, char *buf, size_t len);

/**
 * Lay out the ladder of a call.
 * @param l caller storage, filled; release with ana_ladder_cleanup()
 * @param r the result holding the call
 * @param c the call
 * @param col_width distance between lanes, 0 = computed from the labels (clamped to
 *        ANA_LADDER_COL_MIN..ANA_LADDER_COL_MAX)
 * Ownership: @p l owns its arrays; it borrows nothing from @p r.
 */
void ana_ladder_init(struct ana_ladder *l, const struct eng_result *r, const struct eng_call *c,
		     uint32_t col_width);

/** Free the arrays of @p l. */
void ana_ladder_cleanup(struct ana_ladder *l);

/**
 * Draw the lanes line of one arrow in ASCII: '|' for every lane, the shaft in '-', the head
 * '>' or '<' next to the receiver's lane, the label centred in the shaft (cut to fit).
 * @param l the ladder
 * @param i arrow index
 * @param buf destination, l->width + 1 bytes or more (NUL-terminated, cut otherwise)
 * @param len size of @p buf
 */
void ana_ladder_draw_arrow(const struct ana_ladder *l, uint32_t i, char *buf, size_t len);

/**
 * Draw the header line: every column name centred on its lane.
 * @param l the ladder
 * @param buf destination (NUL-terminated, cut when too small)
 * @param len size of @p buf
 */
void ana_ladder_draw_header(const struct ana_ladder *l, char *buf, size_t len);

#endif
