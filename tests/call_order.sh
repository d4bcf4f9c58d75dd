#!/bin/sh
# The report lists calls in order of their first message's time, and calls that start at the
# same instant in order of their Call-ID (sngrep lists them as they come; a script comparing
# two reports needs one order). The build finds its calls in time order already, and sorts
# them only when two start together: this checks both ways, at --cores 1 and, with the
# grouping by Call-ID in parts (SIPNAB_GROUP_MIN), at --cores 2 to 4. Cases:
#   1. three calls whose INVITEs carry the same timestamp, written as c-3, c-1, c-2, each
#      between another pair of hosts (each host pair may go to another worker);
#   2. then two calls one after the other whose Call-IDs go the other way (z-late before
#      a-later): time first, the Call-ID only between equal times;
#   3. a call whose first message is a 200 to an INVITE not captured, at the same instant
#      as a call with a lower Call-ID that starts with its INVITE;
#   4. -c (INVITE calls only) on OPTIONS and REGISTER exchanges merged with three INVITE
#      calls and their RTP: the calls left move up in the list, and each stream still names
#      its own call (the build marks every message with its call's place in the list).
. "$(dirname "$0")/lib.sh"

need_python3

PYTHONPATH="$SIPNAB_SRCDIR/tests" python3 - "$TMPD/order.pcap" <<'EOF' ||
import sys
from sip_pcap import SipPcap

cap = SipPcap(sys.argv[1])
packet = cap.packet

def msg(src, dst, first, cid, ftag, ttag, cseq, method, dt):
    packet(src, dst, "%s\nVia: SIP/2.0/UDP %s:5060;branch=z9hG4bK%s%d\n"
           "From: <sip:alice@%s>;tag=%s\nTo: <sip:bob@%s>%s\nCall-ID: %s\n"
           "CSeq: %d %s\nContent-Length: 0\n\n"
           % (first, src, cid, cseq, src, ftag, dst, ";tag=" + ttag if ttag else "", cid,
              cseq, method), dt)

def invite(src, dst, cid, dt):
    msg(src, dst, "INVITE sip:bob@%s SIP/2.0" % dst, cid, "f" + cid, None, 1, "INVITE", dt)

def ok(src, dst, cid, dt):
    # the 200 goes from dst back to src
    msg(dst, src, "SIP/2.0 200 OK", cid, "f" + cid, "t" + cid, 1, "INVITE", dt)

# 1: three INVITEs at one instant, Call-IDs out of order, three host pairs
invite("10.0.7.1", "10.0.7.2", "c-3", 0.01)
invite("10.0.8.1", "10.0.8.2", "c-1", 0.0)
invite("10.0.9.1", "10.0.9.2", "c-2", 0.0)
for cid, a, b in (("c-3", "10.0.7.1", "10.0.7.2"), ("c-1", "10.0.8.1", "10.0.8.2"),
                  ("c-2", "10.0.9.1", "10.0.9.2")):
    ok(a, b, cid, 0.01)
# 2: later calls whose Call-IDs fall as time rises
invite("10.0.7.1", "10.0.7.2", "z-late", 0.01)
invite("10.0.8.1", "10.0.8.2", "a-later", 0.01)
# 3: a 200 without its INVITE, then at the same instant an INVITE of a lower Call-ID
ok("10.0.9.1", "10.0.9.2", "m-answered", 0.01)
invite("10.0.7.1", "10.0.7.2", "l-same", 0.0)
cap.close()
EOF
	{ echo "FAIL: generating the capture"; exit 1; }

calls() {
	python3 -c 'import json,sys
print(" ".join(c["call_id"] for c in json.load(open(sys.argv[1]))["calls"]))' "$1"
}

"$SIPNAB_BIN" -N -I "$TMPD/order.pcap" --cores 1 --report=json >"$TMPD/c1.json" 2>"$TMPD/c1.err"
expect_eq "exit status" "$?" 0
expect_eq "calls in report order" "$(calls "$TMPD/c1.json")" \
	"c-1 c-2 c-3 z-late a-later l-same m-answered"

expect_same_report "$TMPD/order.pcap" "$TMPD/c1.json" ", grouping in parts" SIPNAB_GROUP_MIN=2

# 4: two non-INVITE exchanges, then carrier.py's calls (a second after them) in another file
PYTHONPATH="$SIPNAB_SRCDIR/tests" python3 - "$TMPD/other.pcap" <<'EOF' ||
import sys
from sip_pcap import SipPcap

cap = SipPcap(sys.argv[1])
for i, method in enumerate(("OPTIONS", "REGISTER")):
    for first, dt in (("%s sip:pbx.example SIP/2.0" % method, 0.01), ("SIP/2.0 200 OK", 0.01)):
        cap.packet("10.0.6.1", "10.0.6.2", "%s\nVia: SIP/2.0/UDP 10.0.6.1:5060;branch=z9hG4bKo%d\n"
                   "From: <sip:ua@pbx.example>;tag=o%d\nTo: <sip:ua@pbx.example>\n"
                   "Call-ID: other-%d\nCSeq: 1 %s\nContent-Length: 0\n\n"
                   % (first, i, i, i, method), dt)
cap.close()
EOF
	fail "generating the OPTIONS and REGISTER capture"
python3 "$SIPNAB_SRCDIR/bench/carrier.py" --calls 3 --call-ids 0 --stream-pairs 0 \
	--start 1800000001 --out "$TMPD/inv.pcap" >/dev/null 2>&1 || fail "carrier.py failed"
# each call: Call-ID and the Call-IDs its streams name
links() {
	python3 -c 'import json,sys
d = json.load(open(sys.argv[1]))
print(" ".join("%s:%s" % (c["call_id"], "+".join(d["streams"][s]["call_id"] for s in c["streams"]) or "-")
               for c in d["calls"]))' "$1"
}
for cores in 1 2 3; do
	for opt in "" -c; do
		SIPNAB_GROUP_MIN=2 "$SIPNAB_BIN" -N $opt -I "$TMPD/other.pcap" -I "$TMPD/inv.pcap" \
			--cores "$cores" --report=json >"$TMPD/m$opt$cores.json" 2>/dev/null ||
			fail "sipnab $opt --cores $cores failed"
	done
	all=$(links "$TMPD/m$cores.json")
	expect_eq "no -c, --cores $cores: the two exchanges first" \
		"$(echo "$all" | cut -d' ' -f1-2)" "other-0:- other-1:-"
	expect_eq "-c, --cores $cores: the INVITE calls, each with its streams" \
		"$(links "$TMPD/m-c$cores.json")" "$(echo "$all" | cut -d' ' -f3-)"
	expect_eq "-c, --cores $cores: three calls, two streams each" \
		"$(links "$TMPD/m-c$cores.json" | tr ' ' '\n' | grep -c -E '^([^:]+):\1\+\1$')" 3
done

echo "$checks checks, $fails failed"
[ "$fails" -eq 0 ]
