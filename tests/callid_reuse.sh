#!/bin/sh
# A Call-ID reused by calls one after the other (phones and PBXs that count Call-IDs, old
# RFC 2543 user agents): each INVITE without a To tag whose From tag is new starts a new
# call, and every other message joins the call whose caller's tag is its From or To tag (else
# the newest). The report must show each call with its own messages, at --cores 1 and, with
# the grouping by Call-ID cut into parts (SIPNAB_GROUP_MIN), at --cores 2 to 4. Cases, all on
# one Call-ID:
#   1. a call whose From has no tag at all (RFC 2543), then a call with From tag u2: two
#      calls (the second INVITE has no To tag either, and must not join the first call,
#      whose caller's tag is as empty as the INVITE's To tag);
#   2. a third call (From tag u3) while the second is up, whose BYE comes after the second's:
#      each BYE and its 200 go to the call of their tags, not to the newest;
#   3. a re-INVITE of the first caller's partner after all of them (From: the callee's tag,
#      To: the caller's, both seen before): it joins the call whose caller it names.
. "$(dirname "$0")/lib.sh"

need_python3

# the capture, written with tests/sip_pcap.py
PYTHONPATH="$SIPNAB_SRCDIR/tests" python3 - "$TMPD/reuse.pcap" <<'EOF' ||
import sys
from sip_pcap import SipPcap

cap = SipPcap(sys.argv[1])
packet = cap.packet
CID = "u@pbx"

def hdrs(src, dst, ftag, ttag):
    f = "From: <sip:alice@%s>%s\n" % (src, ";tag=" + ftag if ftag is not None else "")
    t = "To: <sip:bob@%s>%s\n" % (dst, ";tag=" + ttag if ttag else "")
    return f + t + "Call-ID: %s\n" % CID

def req(src, dst, method, branch, ftag, ttag, cseq):
    packet(src, dst, "%s sip:bob@%s SIP/2.0\nVia: SIP/2.0/UDP %s:5060;branch=%s\n"
           % (method, dst, src, branch) + hdrs(src, dst, ftag, ttag)
           + "CSeq: %d %s\nContent-Length: 0\n\n" % (cseq, method), 0.01)

def resp(src, dst, code, reason, method, branch, ftag, ttag, cseq):
    # a response goes from dst back to src; its From and To are the request's
    packet(dst, src, "SIP/2.0 %d %s\nVia: SIP/2.0/UDP %s:5060;branch=%s\n"
           % (code, reason, src, branch) + hdrs(src, dst, ftag, ttag)
           + "CSeq: %d %s\nContent-Length: 0\n\n" % (cseq, method), 0.01)

def setup(src, dst, ftag, ttag, b):
    """INVITE, 180, 200, ACK: four messages"""
    req(src, dst, "INVITE", b + "i", ftag, None, 1)
    resp(src, dst, 180, "Ringing", "INVITE", b + "i", ftag, ttag, 1)
    resp(src, dst, 200, "OK", "INVITE", b + "i", ftag, ttag, 1)
    req(src, dst, "ACK", b + "a", ftag, ttag, 1)

def bye(src, dst, ftag, ttag, b):
    """BYE and its 200: two messages"""
    req(src, dst, "BYE", b + "b", ftag, ttag, 2)
    resp(src, dst, 200, "OK", "BYE", b + "b", ftag, ttag, 2)

A, B = "10.0.5.1", "10.0.5.2"
# 1: no From tag at all, then a new call with From tag u2 (its INVITE has no To tag)
setup(A, B, None, "t1", "z9hG4bK1")
bye(A, B, None, "t1", "z9hG4bK1")
setup(A, B, "u2", "t2", "z9hG4bK2")
# 2: a third call while the second is up; the second's BYE after the third's INVITE
setup(A, B, "u3", "t3", "z9hG4bK3")
bye(A, B, "u2", "t2", "z9hG4bK2")
bye(A, B, "u3", "t3", "z9hG4bK3")
# 3: the second call's callee sends a re-INVITE after all of that (its From tag is the
# callee's t2, its To tag the caller's u2): 200 and ACK with it, three messages more
packet(B, A, "INVITE sip:alice@%s SIP/2.0\nVia: SIP/2.0/UDP %s:5060;branch=z9hG4bK4i\n"
       "From: <sip:bob@%s>;tag=t2\nTo: <sip:alice@%s>;tag=u2\nCall-ID: %s\n"
       "CSeq: 7 INVITE\nContent-Length: 0\n\n" % (A, B, B, A, CID), 0.01)
packet(A, B, "SIP/2.0 200 OK\nVia: SIP/2.0/UDP %s:5060;branch=z9hG4bK4i\n"
       "From: <sip:bob@%s>;tag=t2\nTo: <sip:alice@%s>;tag=u2\nCall-ID: %s\n"
       "CSeq: 7 INVITE\nContent-Length: 0\n\n" % (B, B, A, CID), 0.01)
packet(B, A, "ACK sip:alice@%s SIP/2.0\nVia: SIP/2.0/UDP %s:5060;branch=z9hG4bK4a\n"
       "From: <sip:bob@%s>;tag=t2\nTo: <sip:alice@%s>;tag=u2\nCall-ID: %s\n"
       "CSeq: 7 ACK\nContent-Length: 0\n\n" % (A, B, B, A, CID), 0.01)
cap.close()
EOF
	{ echo "FAIL: generating the capture"; exit 1; }

# each call in report order: its caller's From tag (- when none), state and message count
calls() {
	python3 -c 'import json,sys
for c in json.load(open(sys.argv[1]))["calls"]:
    print("%s:%s:%s:%d" % (c["call_id"], c["from_tag"] or "-", c["state"], c["messages"]))' "$1" | tr '\n' ' '
}

"$SIPNAB_BIN" -N -I "$TMPD/reuse.pcap" --cores 1 --report=json >"$TMPD/c1.json" 2>"$TMPD/c1.err"
expect_eq "exit status" "$?" 0
expect_eq "calls (Call-ID:From tag:state:messages)" "$(calls "$TMPD/c1.json")" \
	"u@pbx:-:COMPLETED:6 u@pbx:u2:COMPLETED:9 u@pbx:u3:COMPLETED:6 "
expect_eq "dialogs" "$(json_get "$TMPD/c1.json" summary.dialogs)" 3

# the grouping by Call-ID in parts (one per thread) whatever the capture's size, under four
# hash keys (which part a Call-ID falls to): the same report
expect_same_report "$TMPD/reuse.pcap" "$TMPD/c1.json" ", grouping in parts" SIPNAB_GROUP_MIN=2

echo "$checks checks, $fails failed"
[ "$fails" -eq 0 ]
