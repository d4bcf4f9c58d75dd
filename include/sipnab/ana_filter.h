/*
 * ana_filter.h - which problems a call or stream has, and which calls the report's selections
 * (--problems, --slow-setup, --short-calls, --one-way) pick. Pure functions over a finished
 * struct eng_result: no I/O, no allocation, no state.
 */
#ifndef SIPNAB_ANA_FILTER_H
#define SIPNAB_ANA_FILTER_H

#include "sipnab/eng_result.h"

#define ANA_FILTER_SLOW_SETUP_MS 3000u	      /* --slow-setup without a value */
#define ANA_FILTER_SHORT_CALL_S	 5u	      /* --short-calls without a value */
#define ANA_FILTER_MOS_MIN	 3.6	      /* a stream with a MOS below this is a problem */
#define ANA_FILTER_LOSS_MAX_PCT	 1.0	      /* a stream losing more than this is a problem */
#define ANA_FILTER_ONE_WAY_NS	 1000000000LL /* answered this long without two-way media */

/* Problem bits of a call or a stream. */
enum ana_problem {
	ANA_PROB_FAILED = 1u << 0,     /* REJECTED, BUSY, FAILED, or no final response at all */
	ANA_PROB_LOW_MOS = 1u << 1,    /* a stream with 0 < MOS < ANA_FILTER_MOS_MIN */
	ANA_PROB_LOSS = 1u << 2,       /* a stream with loss > ANA_FILTER_LOSS_MAX_PCT */
	ANA_PROB_ONE_WAY = 1u << 3,    /* answered INVITE, media in one direction or none */
	ANA_PROB_RETRANS = 1u << 4,    /* SIP retransmissions seen */
	ANA_PROB_SLOW_SETUP = 1u << 5, /* setup above the --slow-setup threshold */
	ANA_PROB_SHORT_CALL = 1u << 6, /* answered, shorter than the --short-calls threshold */
};

/* The selections given on the command line. Zero-initialised = nothing selected. */
struct ana_filter {
	bool problems;		/* --problems */
	bool one_way;		/* --one-way */
	bool slow_setup;	/* --slow-setup[=MS] */
	uint32_t slow_setup_ms; /* threshold, ANA_FILTER_SLOW_SETUP_MS by default */
	bool short_calls;	/* --short-calls[=S] */
	uint32_t short_call_s;	/* threshold, ANA_FILTER_SHORT_CALL_S by default */
};

/** Initialise @p f: no selection, default thresholds. */
void ana_filter_init(struct ana_filter *f);

/** True when at least one selection is given (the report then lists selected calls only). */
bool ana_filter_is_active(const struct ana_filter *f);

/** Upper-case name of one problem bit ("FAILED", "LOW_MOS" ...), "UNKNOWN" otherwise. */
const char *ana_problem_name(enum ana_problem p);

/**
 * Setup time (INVITE to the first 18x, else to the first 2xx), in ns.
 * @return the time, or -1 when neither was seen
 */
int64_t ana_call_setup_ns(const struct eng_call *c);

/**
 * Problems of one stream: ANA_PROB_LOW_MOS and ANA_PROB_LOSS bits.
 * @param s the stream
 * @return the bits, 0 when it looks fine
 */
uint32_t ana_filter_stream_problems(const struct eng_stream *s);

/**
 * Number of the call's streams that have no stream in the opposite direction (addresses
 * swapped; ports too when both ends share an address).
 * @param r the result holding the call
 * @param c the call
 * @return the count; 0 for a call without streams
 */
uint32_t ana_filter_one_way_streams(const struct eng_result *r, const struct eng_call *c);

/**
 * Problems of one call: FAILED, RETRANS, ONE_WAY, LOW_MOS and LOSS (from its streams) always;
 * SLOW_SETUP and SHORT_CALL only when @p f enables those selections.
 * "No final response" counts as FAILED only for calls still in CALL_SETUP when the capture
 * ended. One-way needs an answered INVITE call answered for at least ANA_FILTER_ONE_WAY_NS
 * (until its end, else until the last packet of the capture).
 * @param f the selections (thresholds), may be NULL
 * @param r the result holding the call
 * @param c the call
 * @return the problem bits
 */
uint32_t ana_filter_call_problems(const struct ana_filter *f, const struct eng_result *r,
				  const struct eng_call *c);

/**
 * Whether the selections pick the call: OR of the given selections; every call is picked when
 * none is given.
 * @param f the selections, may be NULL (picks everything)
 * @param r the result holding the call
 * @param c the call
 * @return true when the call belongs in the report's call lists
 */
bool ana_filter_match(const struct ana_filter *f, const struct eng_result *r,
		      const struct eng_call *c);

#endif
