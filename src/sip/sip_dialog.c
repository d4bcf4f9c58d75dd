/*
 * sip_dialog.c - the INVITE dialogs of one Call-ID and the outcome of the call.
 *
 * What it does: consumes fact records plus transaction events (sip_txn.c) in timestamp order,
 * keeps the dialogs the initial INVITE created (RFC 3261 §12.1: id = Call-ID, caller tag,
 * callee tag), the attempts of the call (auth retries, §22.2) and the timestamps a call report
 * needs. What it does not do: match transactions (the events say what a message was), keep
 * route sets, remote targets or CSeq checks (a proxy/B2BUA dialog layer will add those), or
 * track SUBSCRIBE/REFER dialogs.
 *
 * A capture may show one call on several hops (UA -> proxy -> UA): the same INVITE, responses
 * and BYE then arrive once per hop as new transactions. Every rule below is idempotent for
 * that: a message that repeats what is known changes nothing, and timestamps keep the first.
 *
 * Dialog state machine (struct sip_dialog; function behind each transition on the right):
 *
 *   (none)     --101-199 with To tag--> EARLY       on_invite_response()
 *   (none)     --2xx-->                 CONFIRMED   on_invite_response()
 *   EARLY      --2xx-->                 CONFIRMED   on_invite_response()
 *   EARLY      --3xx-6xx-->             TERMINATED  on_invite_response() (end FAILURE/CANCEL)
 *   EARLY      --BYE from caller-->     TERMINATED  on_bye() (RFC 3261 §15)
 *   CONFIRMED  --BYE (either side)-->   TERMINATED  on_bye()
 *   EARLY      --last confirmed ended-> TERMINATED  on_bye() (end ABANDONED)
 *   (none)     --in-dialog request-->   CONFIRMED   dialog_implied() (capture began mid-call)
 *
 * Call (attempt) progress, per set:
 *
 *   (none)   --INVITE without To tag-->            attempt 1       on_invite()
 *   attempt  --INVITE, no To tag, higher CSeq-->   attempt n+1     on_invite()
 *            (after a final failure or with no final: auth retry when it was 401/407)
 *   attempt  --CANCEL-->                           cancelled       on_cancel()
 *   attempt  --1xx/2xx/3xx-6xx-->                  ringing/answered/failed  on_invite_response()
 *   answered --BYE ending the last confirmed dialog--> ended       on_bye()
 *
 * The report state (enum sip_dialog_call_state) is computed from these facts by call_state(),
 * never stored, so the rules for it are in one place.
 *
 * Ownership: the set owns the dialog array (heap) and the arena holding the Call-ID and tags.
 * Thread: one owner thread; no locks, no global state.
 * Limits: SIP_DIALOG_SET_MAX_DIALOGS dialogs and SIP_DIALOG_SET_BUDGET arena bytes; past
 * them the set is marked truncated.
 */
#include "config.h"

#include "sipnab/sip_dialog.h"

#include <stdlib.h>
#include <string.h>

#include "sipnab/sn_arena.h"

#define DLG_ARENA_BLOCK 256u

struct sip_dialog_set {
	struct sn_arena arena;	    /* Call-ID and tags */
	struct sn_slice call_id;    /* arena */
	struct sn_slice caller_tag; /* arena; valid when has_caller */
	bool has_caller;
	bool caller_guessed; /* taken from an in-dialog request: parties are not known */
	bool has_invite;
	bool partial;
	bool truncated;

	uint32_t invite_cseq; /* CSeq of the current attempt's INVITE */
	uint32_t attempt_count;
	uint32_t auth_retry_count;
	uint32_t reinvite_count;

	int64_t invite_ns;
	int64_t first_prov_ns;
	int64_t first_18x_ns;
	int64_t answer_ns;
	int64_t end_ns;
	int64_t attempt_ns; /* INVITE of the current attempt */

	/* The current attempt: */
	uint16_t final_status; /* last final failure, or the first 2xx; 0 = none */
	bool att_response;     /* any response */
	bool att_ringing;      /* 18x */
	bool att_cancelled;    /* CANCEL, 487, or BYE on an early dialog */
	bool answered;	       /* 2xx (or implied by in-dialog requests) */
	enum sip_dialog_party hangup_by;

	struct sip_dialog *dialogs; /* heap, owned; dialog_cap entries */
	uint32_t dialog_count;
	uint32_t dialog_cap;
};

static const char *const call_state_names[] = {
	[SIP_DIALOG_CALL_SETUP] = "CALL_SETUP",	   [SIP_DIALOG_CALL_RINGING] = "RINGING",
	[SIP_DIALOG_CALL_IN_CALL] = "IN_CALL",	   [SIP_DIALOG_CALL_COMPLETED] = "COMPLETED",
	[SIP_DIALOG_CALL_CANCELLED] = "CANCELLED", [SIP_DIALOG_CALL_REJECTED] = "REJECTED",
	[SIP_DIALOG_CALL_BUSY] = "BUSY",	   [SIP_DIALOG_CALL_DIVERTED] = "DIVERTED",
	[SIP_DIALOG_CALL_FAILED] = "FAILED",
};

static const char *const dialog_state_names[] = {
	[SIP_DIALOG_ST_EARLY] = "EARLY",
	[SIP_DIALOG_ST_CONFIRMED] = "CONFIRMED",
	[SIP_DIALOG_ST_TERMINATED] = "TERMINATED",
};

const char *sip_dialog_call_state_name(enum sip_dialog_call_state st)
{
	if ((size_t)st >= SN_ARRAY_SIZE(call_state_names)) {
		return "?";
	}
	return call_state_names[st];
}

const char *sip_dialog_state_name(enum sip_dialog_state st)
{
	if ((size_t)st >= SN_ARRAY_SIZE(dialog_state_names)) {
		return "?";
	}
	return dialog_state_names[st];
}

struct sip_dialog_set *sip_dialog_set_new(struct sn_slice call_id)
{
	struct sip_dialog_set *s = sn_xcalloc(1, sizeof(*s));

	sn_arena_init(&s->arena, SIP_DIALOG_SET_BUDGET);
	s->arena.block_size = DLG_ARENA_BLOCK;
	if (sn_arena_dup(&s->arena, call_id, &s->call_id) != SN_OK) {
		/* A Call-ID longer than the budget: compare against nothing, keep going. */
		s->truncated = true;
		s->call_id = SN_SLICE_NULL;
	}
	return s;
}

void sip_dialog_set_free(struct sip_dialog_set *s)
{
	if (!s) {
		return;
	}
	free(s->dialogs);
	sn_arena_cleanup(&s->arena);
	free(s);
}

uint32_t sip_dialog_set_dialog_count(const struct sip_dialog_set *s)
{
	return s->dialog_count;
}

const struct sip_dialog *sip_dialog_set_dialog(const struct sip_dialog_set *s, uint32_t i)
{
	return i < s->dialog_count ? &s->dialogs[i] : NULL;
}

struct sn_slice sip_dialog_set_caller_tag(const struct sip_dialog_set *s)
{
	return s->has_caller ? s->caller_tag : SN_SLICE_NULL;
}

static struct sip_dialog *dialog_find(const struct sip_dialog_set *s, struct sn_slice tag)
{
	for (uint32_t i = 0; i < s->dialog_count; i++) {
		if (sn_slice_eq(s->dialogs[i].callee_tag, tag)) {
			return &s->dialogs[i];
		}
	}
	return NULL;
}

const struct sip_dialog *sip_dialog_set_find(const struct sip_dialog_set *s,
					     struct sn_slice callee_tag)
{
	return dialog_find(s, callee_tag);
}

/* A new dialog with callee tag @p tag; NULL (and truncated) past the limits. */
static struct sip_dialog *dialog_add(struct sip_dialog_set *s, struct sn_slice tag,
				     enum sip_dialog_state st, int64_t ts)
{
	struct sip_dialog *d;
	struct sn_slice copy;

	if (s->dialog_count >= SIP_DIALOG_SET_MAX_DIALOGS ||
	    sn_arena_dup(&s->arena, tag, &copy) != SN_OK) {
		s->truncated = true;
		return NULL;
	}
	if (s->dialog_count == s->dialog_cap) {
		s->dialog_cap = s->dialog_cap ? s->dialog_cap * 2 : 2;
		s->dialogs = sn_xrealloc(s->dialogs, s->dialog_cap * sizeof(*s->dialogs));
	}
	d = &s->dialogs[s->dialog_count++];
	memset(d, 0, sizeof(*d));
	d->state = st;
	d->callee_tag = copy;
	d->created_ns = ts;
	d->attempt = s->attempt_count;
	if (st == SIP_DIALOG_ST_CONFIRMED) {
		d->confirmed_ns = ts;
	}
	return d;
}

static void dialog_end(struct sip_dialog *d, int64_t ts, enum sip_dialog_party by,
		       enum sip_dialog_end how, uint16_t status)
{
	d->state = SIP_DIALOG_ST_TERMINATED;
	d->terminated_ns = ts;
	d->terminated_by = by;
	d->end = how;
	d->end_status = status;
}

static bool set_caller(struct sip_dialog_set *s, struct sn_slice tag)
{
	if (sn_arena_dup(&s->arena, tag, &s->caller_tag) != SN_OK) {
		s->truncated = true;
		return false;
	}
	s->has_caller = true;
	return true;
}

/* Start attempt n+1 at @p m (an INVITE without To tag). */
static void attempt_start(struct sip_dialog_set *s, const struct sip_txn_msg *m)
{
	if (s->attempt_count && (s->final_status == 401 || s->final_status == 407)) {
		s->auth_retry_count++;
	}
	s->attempt_count++;
	s->invite_cseq = m->cseq;
	s->attempt_ns = m->ts_ns;
	s->final_status = 0;
	s->att_response = false;
	s->att_ringing = false;
	s->att_cancelled = false;
	s->end_ns = 0;
	s->hangup_by = SIP_DIALOG_PARTY_NONE;
	if (!s->invite_ns) {
		s->invite_ns = m->ts_ns;
	}
}

/*
 * The dialog an in-dialog message (@p from_tag, @p to_tag) belongs to, and which party sent
 * it. When capture began mid-call the dialog is created, confirmed and partial.
 */
static struct sip_dialog *dialog_implied(struct sip_dialog_set *s, struct sn_slice from_tag,
					 struct sn_slice to_tag, enum sip_dialog_party *party)
{
	struct sip_dialog *d;
	struct sn_slice callee;

	if (!s->has_caller) {
		/* Nothing seen before this: take the sender as the caller, but say so. */
		if (!set_caller(s, from_tag)) {
			return NULL;
		}
		s->caller_guessed = true;
		s->partial = true;
		s->has_invite = true;
		s->attempt_count = 1;
	}
	if (sn_slice_eq(from_tag, s->caller_tag)) {
		*party = SIP_DIALOG_PARTY_CALLER;
		callee = to_tag;
	} else if (sn_slice_eq(to_tag, s->caller_tag)) {
		*party = SIP_DIALOG_PARTY_CALLEE;
		callee = from_tag;
	} else {
		return NULL;
	}
	if (s->caller_guessed) {
		*party = SIP_DIALOG_PARTY_UNKNOWN;
	}
	d = dialog_find(s, callee);
	if (d) {
		return d;
	}
	d = dialog_add(s, callee, SIP_DIALOG_ST_CONFIRMED, 0);
	if (d) {
		d->partial = true;
		s->partial = true;
		s->answered = true;
	}
	return d;
}

static void on_invite(struct sip_dialog_set *s, const struct sip_txn_msg *m)
{
	enum sip_dialog_party party;
	struct sip_dialog *d;

	s->has_invite = true;
	if (m->to_tag.len) {
		/* §14: an INVITE inside a dialog is a re-INVITE; its fate is not the call's. */
		d = dialog_implied(s, m->from_tag, m->to_tag, &party);
		if (d && d->state != SIP_DIALOG_ST_TERMINATED) {
			d->reinvite_count++;
			s->reinvite_count++;
		}
		return;
	}
	if (!s->has_caller) {
		if (set_caller(s, m->from_tag)) {
			attempt_start(s, m);
		}
		return;
	}
	if (!sn_slice_eq(m->from_tag, s->caller_tag) || s->answered) {
		return; /* not this call, or a second call reusing the Call-ID: ignored */
	}
	if (m->cseq > s->invite_cseq) {
		/* The UAC tries again (§8.1.3.5, §22.2): same From tag, CSeq + n, no To tag. */
		attempt_start(s, m);
	}
	/* Same CSeq: the same INVITE on another hop. Lower: an old one. */
}

static void on_cancel(struct sip_dialog_set *s, const struct sip_txn_msg *m)
{
	if (!s->has_caller || s->answered || m->cseq != s->invite_cseq ||
	    !sn_slice_eq(m->from_tag, s->caller_tag)) {
		return;
	}
	s->att_cancelled = true;
	if (!s->end_ns) {
		s->end_ns = m->ts_ns;
	}
}

/* End the early dialogs of the current attempt (§12.3: a final non-2xx ends all of them). */
static void end_early(struct sip_dialog_set *s, int64_t ts, enum sip_dialog_party by,
		      enum sip_dialog_end how, uint16_t status)
{
	for (uint32_t i = 0; i < s->dialog_count; i++) {
		if (s->dialogs[i].state == SIP_DIALOG_ST_EARLY) {
			dialog_end(&s->dialogs[i], ts, by, how, status);
		}
	}
}

static enum sn_status on_invite_response(struct sip_dialog_set *s, const struct sip_txn_msg *m)
{
	struct sip_dialog *d;
	uint16_t st = m->status;

	if (!s->has_caller) {
		/* Capture began after the INVITE: its response tells who called. */
		if (!set_caller(s, m->from_tag)) {
			return SN_ELIMIT;
		}
		s->has_invite = true;
		s->partial = true;
		s->attempt_count = 1;
		s->invite_cseq = m->cseq;
	}
	if (!sn_slice_eq(m->from_tag, s->caller_tag) || m->cseq != s->invite_cseq) {
		return SN_OK; /* a re-INVITE's response (either side), or an older attempt's */
	}
	s->att_response = true;
	d = m->to_tag.len || st >= 200 ? dialog_find(s, m->to_tag) : NULL;
	if (st < 200) {
		if (!s->first_prov_ns) {
			s->first_prov_ns = m->ts_ns;
		}
		if (st >= 180 && st <= 189) {
			s->att_ringing = true;
			if (!s->first_18x_ns) {
				s->first_18x_ns = m->ts_ns;
			}
		}
		/* §12.1: a 101-199 with a To tag creates an early dialog. */
		if (st > 100 && m->to_tag.len && !d &&
		    !dialog_add(s, m->to_tag, SIP_DIALOG_ST_EARLY, m->ts_ns)) {
			return SN_ELIMIT;
		}
		return SN_OK;
	}
	if (st < 300) {
		if (!s->answered) {
			s->answered = true;
			s->answer_ns = m->ts_ns;
			s->final_status = st;
			s->end_ns = 0; /* an earlier fork's failure or a lost CANCEL race */
			s->att_cancelled = false;
		}
		if (!d) {
			d = dialog_add(s, m->to_tag, SIP_DIALOG_ST_CONFIRMED, m->ts_ns);
			return d ? SN_OK : SN_ELIMIT;
		}
		if (d->state == SIP_DIALOG_ST_EARLY) {
			d->state = SIP_DIALOG_ST_CONFIRMED;
			d->confirmed_ns = m->ts_ns;
		}
		return SN_OK;
	}
	/* 3xx-6xx: ends the early dialogs; the call's outcome unless it was answered. */
	if (st == 487) {
		end_early(s, m->ts_ns, SIP_DIALOG_PARTY_CALLER, SIP_DIALOG_END_CANCEL, st);
	} else {
		end_early(s, m->ts_ns, SIP_DIALOG_PARTY_CALLEE, SIP_DIALOG_END_FAILURE, st);
	}
	if (s->answered) {
		return SN_OK;
	}
	s->final_status = st;
	if (st == 487) {
		s->att_cancelled = true;
	}
	if (!s->end_ns) {
		s->end_ns = m->ts_ns;
	}
	return SN_OK;
}

static bool confirmed_active(const struct sip_dialog_set *s)
{
	for (uint32_t i = 0; i < s->dialog_count; i++) {
		if (s->dialogs[i].state == SIP_DIALOG_ST_CONFIRMED) {
			return true;
		}
	}
	return false;
}

/* A BYE from @p from_tag to @p to_tag at @p ts (or the 2xx of a BYE that was not seen). */
static enum sn_status on_bye(struct sip_dialog_set *s, struct sn_slice from_tag,
			     struct sn_slice to_tag, int64_t ts)
{
	enum sip_dialog_party party = SIP_DIALOG_PARTY_NONE;
	struct sip_dialog *d = dialog_implied(s, from_tag, to_tag, &party);
	bool was_confirmed;

	if (!d) {
		return s->truncated ? SN_ELIMIT : SN_OK;
	}
	if (d->state == SIP_DIALOG_ST_TERMINATED) {
		return SN_OK; /* the same BYE on another hop, or a late one */
	}
	was_confirmed = d->state == SIP_DIALOG_ST_CONFIRMED;
	dialog_end(d, ts, party, SIP_DIALOG_END_BYE, 0);
	if (!was_confirmed) {
		/* §15: the caller may end an early dialog with BYE; the call did not connect. */
		if (!s->answered) {
			s->att_cancelled = true;
			if (!s->end_ns) {
				s->end_ns = ts;
			}
		}
		return SN_OK;
	}
	if (!confirmed_active(s)) {
		s->end_ns = ts;
		s->hangup_by = party;
		end_early(s, ts, SIP_DIALOG_PARTY_NONE, SIP_DIALOG_END_ABANDONED, 0);
	}
	return SN_OK;
}

enum sn_status sip_dialog_set_observe(struct sip_dialog_set *s, const struct sip_txn_msg *m,
				      enum sip_txn_event ev)
{
	if (s->call_id.ptr && !sn_slice_eq(m->call_id, s->call_id)) {
		return SN_ENOTFOUND; /* (no Call-ID kept when it exceeded the budget) */
	}
	switch (ev) {
	case SIP_TXN_EV_NEW_REQUEST:
		if (m->method == SIP_METHOD_INVITE) {
			on_invite(s, m);
		} else if (m->method == SIP_METHOD_BYE && m->to_tag.len) {
			return on_bye(s, m->from_tag, m->to_tag, m->ts_ns);
		}
		return SN_OK;
	case SIP_TXN_EV_CANCEL:
		on_cancel(s, m);
		return SN_OK;
	case SIP_TXN_EV_PROVISIONAL:
	case SIP_TXN_EV_FINAL:
	case SIP_TXN_EV_STRAY_RESPONSE:
		if (m->method == SIP_METHOD_INVITE) {
			return on_invite_response(s, m);
		}
		if (ev == SIP_TXN_EV_STRAY_RESPONSE && m->method == SIP_METHOD_BYE &&
		    m->status >= 200 && m->status < 300 && m->to_tag.len) {
			/* The BYE itself was not captured; its 2xx shows it happened. */
			return on_bye(s, m->from_tag, m->to_tag, m->ts_ns);
		}
		return SN_OK;
	case SIP_TXN_EV_REQUEST_RETRANSMISSION:
	case SIP_TXN_EV_RESPONSE_RETRANSMISSION:
	case SIP_TXN_EV_ACK_NON2XX:
	case SIP_TXN_EV_ACK_2XX:
		break;
	}
	return SN_OK;
}

/* Report state of a final failure (the contract in sip_dialog.h). */
static enum sip_dialog_call_state failure_state(uint16_t st)
{
	if (st == 487) {
		return SIP_DIALOG_CALL_CANCELLED;
	}
	if (st < 400) {
		return SIP_DIALOG_CALL_DIVERTED;
	}
	if (st == 486 || st == 600) {
		return SIP_DIALOG_CALL_BUSY;
	}
	if (st == 408) {
		return SIP_DIALOG_CALL_FAILED;
	}
	if (st < 500 || st == 603) {
		return SIP_DIALOG_CALL_REJECTED;
	}
	return SIP_DIALOG_CALL_FAILED;
}

static bool timed_out(const struct sip_dialog_set *s, int64_t now_ns)
{
	return now_ns && s->attempt_ns && !s->answered && !s->final_status && !s->att_cancelled &&
	       !s->att_response && now_ns - s->attempt_ns > SIP_TXN_64T1_NS;
}

static enum sip_dialog_call_state call_state(const struct sip_dialog_set *s, int64_t now_ns)
{
	if (s->answered) {
		return confirmed_active(s) ? SIP_DIALOG_CALL_IN_CALL : SIP_DIALOG_CALL_COMPLETED;
	}
	/* the caller's CANCEL decides even when the server then answers 408 or 500 instead of
	 * 487 (seen in real traffic): the call ended because the caller gave up */
	if (s->att_cancelled) {
		return SIP_DIALOG_CALL_CANCELLED;
	}
	if (s->final_status >= 300) {
		return failure_state(s->final_status);
	}
	if (timed_out(s, now_ns)) {
		return SIP_DIALOG_CALL_FAILED;
	}
	if (s->att_ringing) {
		return SIP_DIALOG_CALL_RINGING;
	}
	return SIP_DIALOG_CALL_SETUP;
}

void sip_dialog_set_summary(const struct sip_dialog_set *s, int64_t now_ns,
			    struct sip_dialog_summary *out)
{
	memset(out, 0, sizeof(*out));
	out->state = call_state(s, now_ns);
	out->invite_ns = s->invite_ns;
	out->attempt_ns = s->attempt_ns;
	out->first_provisional_ns = s->first_prov_ns;
	out->first_18x_ns = s->first_18x_ns;
	out->answer_ns = s->answer_ns;
	out->end_ns = s->end_ns;
	out->final_status = s->final_status;
	out->cancelled = s->att_cancelled && !s->answered;
	out->timed_out = timed_out(s, now_ns);
	out->partial = s->partial;
	out->truncated = s->truncated;
	out->has_invite = s->has_invite;
	out->hangup_by = s->hangup_by;
	out->dialog_count = s->dialog_count;
	for (uint32_t i = 0; i < s->dialog_count; i++) {
		if (s->dialogs[i].confirmed_ns || s->dialogs[i].partial ||
		    s->dialogs[i].state == SIP_DIALOG_ST_CONFIRMED) {
			out->confirmed_count++;
		}
	}
	out->attempt_count = s->attempt_count;
	out->auth_retry_count = s->auth_retry_count;
	out->reinvite_count = s->reinvite_count;
}
