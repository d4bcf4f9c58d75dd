/*
 * sdp.h - zero-copy parser for SDP session descriptions (RFC 8866, formerly RFC 4566) and
 * the media helpers the engine and RTP code need (clock rates, codec names, hold detection).
 *
 * Every text field is a struct sn_slice into the caller's buffer (borrowed; promote with
 * sn_arena_dup() before the buffer goes). The media array, each media's format array and the
 * attribute arrays come from the arena passed to sdp_parse(), sized exactly; crypto lines are
 * kept in a bounded array inside struct sdp_media.
 * Thread: no shared state; any thread may parse into its own session and arena.
 */
#ifndef SIPNAB_SDP_H
#define SIPNAB_SDP_H

#include "sipnab/sn_arena.h"
#include "sipnab/sn_base.h"

/*
 * Bounds on one body's work and arena (past one, sdp_parse() fails with SN_ELIMIT and the body
 * gives no media). They are above what browsers send: a WebRTC offer's video line lists 30-40
 * payload types, with an a=rtpmap, a=fmtp and several a=rtcp-fb lines each (150 and more a=
 * lines in the section), and a conference's Unified Plan offer has an m= line per track.
 */
#define SDP_MAX_MEDIA	64  /* m= lines per session */
#define SDP_MAX_FORMATS 128 /* formats on one m= line (the RTP payload-type space) */
#define SDP_MAX_ATTRS	512 /* a= lines per media, and at session level */
#define SDP_MAX_CRYPTO	8   /* a=crypto lines per media (RFC 4568) */

/* Direction attribute (RFC 8866 §6.7). UNSET means no direction line at that level. */
enum sdp_dir {
	SDP_DIR_UNSET = 0,
	SDP_DIR_SENDRECV,
	SDP_DIR_SENDONLY,
	SDP_DIR_RECVONLY,
	SDP_DIR_INACTIVE,
};

/* <media> of an m= line (RFC 8866 §5.14). */
enum sdp_media_type {
	SDP_MEDIA_OTHER = 0,
	SDP_MEDIA_AUDIO,
	SDP_MEDIA_VIDEO,
	SDP_MEDIA_IMAGE,
	SDP_MEDIA_APPLICATION,
	SDP_MEDIA_TEXT,
	SDP_MEDIA_MESSAGE,
};

/* <proto> of an m= line; the exact text stays in sdp_media.proto_text. */
enum sdp_proto {
	SDP_PROTO_OTHER = 0,
	SDP_PROTO_RTP_AVP,
	SDP_PROTO_RTP_SAVP,
	SDP_PROTO_RTP_AVPF,
	SDP_PROTO_RTP_SAVPF,
	SDP_PROTO_UDP_TLS_RTP_SAVP,
	SDP_PROTO_UDP_TLS_RTP_SAVPF,
	SDP_PROTO_UDPTL, /* T.38 fax (ITU-T T.38 Annex D) */
	SDP_PROTO_TCP,	 /* any "TCP..." proto not carrying RTP (TCP/MSRP, TCP/BFCP, ...) */
};

/* A c= line, or the address part of a=rtcp (RFC 8866 §5.7, RFC 3605). */
struct sdp_conn {
	bool present;		  /* the line was there */
	struct sn_slice nettype;  /* "IN" */
	struct sn_slice addrtype; /* "IP4" / "IP6" */
	struct sn_slice address;  /* address text without the /ttl/count suffix */
	struct sn_addr addr;	  /* parsed address; family 0 when not a literal (FQDN) */
	uint32_t ttl;		  /* IP4 multicast TTL; 0 when absent */
	uint32_t count;		  /* multicast address count; 1 when absent */
};

/* o= line (RFC 8866 §5.2). Only filled when all six fields are there. */
struct sdp_origin {
	bool present;
	struct sn_slice username;
	struct sn_slice sess_id;
	struct sn_slice sess_version;
	struct sn_slice nettype;
	struct sn_slice addrtype;
	struct sn_slice address;
};

/* One a= line: a=<name>[:<value>]. value.ptr is NULL for a flag attribute. */
struct sdp_attr {
	struct sn_slice name;
	struct sn_slice value;
};

/* One format of an m= line with what a=rtpmap and a=fmtp said about it. */
struct sdp_format {
	struct sn_slice token;	  /* the format as written ("0", "101", "t38") */
	int pt;			  /* payload type 0..127 for RTP protos, else -1 */
	bool has_rtpmap;	  /* the fields below come from a=rtpmap */
	struct sn_slice encoding; /* "opus", "telephone-event" */
	uint32_t clock_rate;	  /* Hz, 1..INT32_MAX */
	uint32_t channels;	  /* 1 when absent */
	struct sn_slice fmtp;	  /* a=fmtp parameters; empty when absent */
};

/* a=crypto:<tag> <crypto-suite> <key-params> [<session-params>] (RFC 4568 §9.1). */
struct sdp_crypto {
	uint32_t tag;
	struct sn_slice suite;		/* "AES_CM_128_HMAC_SHA1_80" */
	struct sn_slice key_params;	/* "inline:..." (may hold several, ';'-separated) */
	struct sn_slice session_params; /* rest of the line; empty when absent */
};

/* One m= section. */
struct sdp_media {
	struct sn_slice type_text; /* "audio" */
	enum sdp_media_type type;
	uint16_t port;	     /* 0 = disabled (RFC 3264 §8.2) */
	uint16_t port_count; /* "49170/2" gives 2; 1 when absent */
	struct sn_slice proto_text;
	enum sdp_proto proto;
	bool rtp;		    /* proto carries RTP (…RTP/AVP, …RTP/SAVPF, …) */
	struct sdp_format *formats; /* arena array of format_count */
	uint32_t format_count;
	struct sdp_conn conn;	   /* media-level c=; see sdp_media_conn() for the effective one */
	enum sdp_dir dir;	   /* media-level direction; see sdp_media_direction() */
	uint32_t ptime_ms;	   /* a=ptime; 0 when absent */
	uint32_t maxptime_ms;	   /* a=maxptime; 0 when absent */
	uint16_t rtcp_port;	   /* a=rtcp port; 0 when absent */
	struct sdp_conn rtcp_conn; /* a=rtcp address, when given */
	bool rtcp_mux;		   /* a=rtcp-mux (RFC 5761) */
	struct sn_slice label;	   /* a=label (RFC 4574) */
	struct sn_slice mid;	   /* a=mid (RFC 5888) */
	struct sdp_crypto crypto[SDP_MAX_CRYPTO];
	uint32_t crypto_count;
	struct sdp_attr *attrs; /* every a= line of the section, in order; arena array */
	uint32_t attr_count;
};

/* A parsed session description. Slices borrow the parsed buffer; arrays live in the arena. */
struct sdp_session {
	struct sdp_origin origin;
	struct sn_slice name;	/* s= */
	struct sdp_conn conn;	/* session-level c= */
	struct sn_slice timing; /* first t= value, e.g. "0 0" */
	enum sdp_dir dir;	/* session-level direction */
	struct sdp_attr *attrs; /* session-level a= lines, in order; arena array */
	uint32_t attr_count;
	struct sdp_media *media; /* arena array of media_count */
	uint32_t media_count;
};

/**
 * Parse an SDP body.
 *
 * Lenient about the order of lines, LF or CRLF line ends, blank lines and a missing final line
 * end; unknown line types and attributes are kept or skipped, never rejected. Strict about
 * structure: the first line must be "v=0", every line must be <letter>=<value>, and m=/c= lines
 * must be well formed.
 * @param s receives the result; zeroed first, undefined after an error
 * @param arena supplies the media, format and attribute arrays
 * @param p the SDP bytes (not NUL-terminated; borrowed by the slices in @p s)
 * @param len number of bytes at @p p
 * @return SN_OK; SN_EPARSE when the input is not SDP; SN_ELIMIT when the arena budget or one of
 *         SDP_MAX_MEDIA, SDP_MAX_FORMATS, SDP_MAX_ATTRS, SDP_MAX_CRYPTO is exceeded
 * Thread: any. Ownership: @p s borrows @p p and the arena; neither is freed here.
 */
enum sn_status sdp_parse(struct sdp_session *s, struct sn_arena *arena, const uint8_t *p,
			 size_t len);

/**
 * Effective connection of a media: its own c= line, else the session's.
 * @param s the session
 * @param m a media of @p s
 * @return the connection, or NULL when neither level has one
 */
const struct sdp_conn *sdp_media_conn(const struct sdp_session *s, const struct sdp_media *m);

/**
 * Effective direction of a media: its own, else the session's, else SDP_DIR_SENDRECV.
 * @param s the session
 * @param m a media of @p s
 * @return never SDP_DIR_UNSET
 */
enum sdp_dir sdp_media_direction(const struct sdp_session *s, const struct sdp_media *m);

/**
 * True when the m= line has port 0 (rejected or disabled stream, RFC 3264 §6).
 * @param m the media
 * @return true when disabled
 */
bool sdp_media_is_disabled(const struct sdp_media *m);

/**
 * True when the media is put on hold: effective direction sendonly or inactive, or an
 * effective connection address of 0.0.0.0 (RFC 2543 style hold, RFC 3264 §8.4).
 * @param s the session
 * @param m a media of @p s
 * @return true when on hold
 */
bool sdp_media_is_on_hold(const struct sdp_session *s, const struct sdp_media *m);

/**
 * Format of a media with payload type @p pt.
 * @param m the media
 * @param pt payload type 0..127
 * @return the format, or NULL when the m= line does not list it
 */
const struct sdp_format *sdp_media_format(const struct sdp_media *m, int pt);

/**
 * RTP clock rate for a payload type: a=rtpmap rate, else the RFC 3551 static table.
 * @param m the media, or NULL to use the static table only
 * @param pt payload type
 * @return the rate in Hz, or -1 when unknown
 */
int sdp_media_clock_rate(const struct sdp_media *m, int pt);

/**
 * Codec name for a payload type: a=rtpmap encoding, else the RFC 3551 static name.
 * @param m the media, or NULL to use the static table only
 * @param pt payload type
 * @return the name (borrowed from the SDP or static), or an empty slice when unknown
 */
struct sn_slice sdp_media_codec_name(const struct sdp_media *m, int pt);

/**
 * RFC 3551 §6 static clock rate, for streams no SDP announced.
 * @param pt payload type
 * @return the rate in Hz, or -1 for dynamic, reserved or out-of-range types
 */
int sdp_static_clock_rate(int pt);

/**
 * RFC 3551 §6 static encoding name ("PCMU", "G729", "H263").
 * @param pt payload type
 * @return a static NUL-terminated string, or NULL when the type has no static assignment
 */
const char *sdp_static_codec_name(int pt);

/**
 * First attribute called @p name (ASCII case-insensitive) in an array of attributes.
 * @param attrs the array (session or media attrs)
 * @param count number of entries in @p attrs
 * @param name NUL-terminated attribute name without "a=" or ':'
 * @return the attribute, or NULL when absent
 */
const struct sdp_attr *sdp_attr_find(const struct sdp_attr *attrs, uint32_t count,
				     const char *name);

/**
 * Name of a direction, for display.
 * @param d the direction
 * @return "sendrecv", "sendonly", "recvonly", "inactive" or "" for SDP_DIR_UNSET
 */
const char *sdp_dir_str(enum sdp_dir d);

#endif
