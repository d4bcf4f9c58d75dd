#!/bin/sh
# Malformed SIP is counted and skipped: a message without a Call-ID (mandatory, RFC 3261
# §8.1.1.4) or with an empty one belongs to no call. Each counts in capture.sip_errors
# ("malformed SIP" in the text report) and never becomes a call of its own (sngrep drops such
# messages too); the well-formed call around them is reported whole, at one and two cores. A
# datagram to port 5060 whose first line is no SIP start line is not SIP at all. All three
# packets count as other packets (every packet is SIP, RTP, RTCP or other).
. "$(dirname "$0")/lib.sh"

need_python3

cat >"$TMPD/gen.py" <<'PY'
import sys

sys.path.insert(0, sys.argv[2])
from sip_pcap import SipPcap

packet = SipPcap(sys.argv[1]).packet

A, B = "10.0.0.1", "10.0.0.2"
via = "Via: SIP/2.0/UDP %s:5060;branch=z9hG4bKm1\n" % A
ft = "From: <sip:alice@%s>;tag=f1\nTo: <sip:bob@%s>%%s\n" % (A, B)
cid = "Call-ID: ok@pbx\n"
packet(A, B, "INVITE sip:bob@%s SIP/2.0\n" % B + via + ft % "" + cid
       + "CSeq: 1 INVITE\nContent-Length: 0\n\n")
# a 100 Trying whose Call-ID header was damaged in transit: no Call-ID
packet(B, A, "SIP/2.0 100 Trying\n" + via + ft % "" + "Xall-ID: ok@pbx\n"
       + "CSeq: 1 INVITE\nContent-Length: 0\n\n")
# an OPTIONS with an empty Call-ID
packet(A, B, "OPTIONS sip:bob@%s SIP/2.0\n" % B + via + ft % "" + "Call-ID: \n"
       + "CSeq: 7 OPTIONS\nContent-Length: 0\n\n")
# starts like a response, but its first line is not a status line
packet(B, A, "SIP/2.0 OK\n" + via + ft % "" + cid + "CSeq: 1 INVITE\nContent-Length: 0\n\n")
for code, reason in ((180, "Ringing"), (200, "OK")):
    packet(B, A, "SIP/2.0 %d %s\n" % (code, reason) + via + ft % ";tag=t1" + cid
           + "CSeq: 1 INVITE\nContent-Length: 0\n\n")
packet(A, B, "ACK sip:bob@%s SIP/2.0\n" % B + via.replace("m1", "m2") + ft % ";tag=t1" + cid
       + "CSeq: 1 ACK\nContent-Length: 0\n\n")
packet(A, B, "BYE sip:bob@%s SIP/2.0\n" % B + via.replace("m1", "m3") + ft % ";tag=t1" + cid
       + "CSeq: 2 BYE\nContent-Length: 0\n\n")
packet(B, A, "SIP/2.0 200 OK\n" + via.replace("m1", "m3") + ft % ";tag=t1" + cid
       + "CSeq: 2 BYE\nContent-Length: 0\n\n")
PY
python3 "$TMPD/gen.py" "$TMPD/m.pcap" "$SIPNAB_SRCDIR/tests" || fail "generating the capture"

for cores in 1 2; do
	"$SIPNAB_BIN" -N -I "$TMPD/m.pcap" --cores $cores --report=json >"$TMPD/m$cores.json"
	expect_eq "--cores $cores: exit status" "$?" 0
	expect_eq "--cores $cores: malformed SIP" "$(json_get "$TMPD/m$cores.json" capture.sip_errors)" 2
	expect_eq "--cores $cores: SIP messages" "$(json_get "$TMPD/m$cores.json" capture.sip_messages)" 6
	expect_eq "--cores $cores: other packets" "$(json_get "$TMPD/m$cores.json" capture.other_packets)" 3
	expect_eq "--cores $cores: calls" "$(json_get "$TMPD/m$cores.json" summary.calls)" 1
	expect_eq "--cores $cores: the call" "$(json_get "$TMPD/m$cores.json" calls.0.call_id)" ok@pbx
	expect_eq "--cores $cores: its state" "$(json_get "$TMPD/m$cores.json" calls.0.state)" COMPLETED
	expect_eq "--cores $cores: its messages" "$(json_get "$TMPD/m$cores.json" calls.0.messages)" 6
done
"$SIPNAB_BIN" -N -I "$TMPD/m.pcap" >"$TMPD/m.txt"
expect_eq "text report: malformed SIP" "$(grep -c '^  malformed SIP  *2$' "$TMPD/m.txt")" 1
finish
