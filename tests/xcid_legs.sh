#!/bin/sh
# Calls joined by X-Call-ID / X-CID: a B2BUA's outgoing leg names its incoming leg's Call-ID
# in an X-Call-ID (or X-CID) header, and the report shows one call with both legs, as
# sngrep's extended call flow does. The legs run between different host pairs, so at
# --cores 2 and up they are analysed by different workers; the report must not change.
# Cases:
#   1. INVITE leg a@pbx, then b@pbx naming it in X-Call-ID: one call, legs [a, b];
#   2. the same with X-CID: one call;
#   3. X-Call-ID naming a Call-ID not seen before it: two calls;
#   4. a Call-ID reused by two calls (r@pbx), then a leg naming it while the second is up: it
#      joins the newest of them, the first stays alone.
. "$(dirname "$0")/lib.sh"

need_python3

cat >"$TMPD/gen.py" <<'EOF'
import sys

sys.path.insert(0, sys.argv[2])
from sip_pcap import SipPcap

cap = SipPcap(sys.argv[1])
packet = cap.packet

def call(src, dst, cid, ftag, extra="", branch="z9hG4bK", dt=0.01):
    """One INVITE dialog from src to dst: INVITE, 180, 200, ACK, BYE, 200."""
    b = branch + cid.split("@")[0] + ftag
    common = ("From: <sip:alice@%s>;tag=%s\nTo: <sip:bob@%s>%%s\nCall-ID: %s\n"
              % (src, ftag, dst, cid))
    inv = ("INVITE sip:bob@%s SIP/2.0\nVia: SIP/2.0/UDP %s:5060;branch=%s1\n" % (dst, src, b)
           + common % "" + "CSeq: 1 INVITE\n" + extra + "Content-Length: 0\n\n")
    packet(src, dst, inv, dt)
    for code, reason in ((180, "Ringing"), (200, "OK")):
        packet(dst, src, "SIP/2.0 %d %s\nVia: SIP/2.0/UDP %s:5060;branch=%s1\n" % (code, reason, src, b)
               + common % ";tag=t" + ftag + "CSeq: 1 INVITE\nContent-Length: 0\n\n", dt)
    packet(src, dst, "ACK sip:bob@%s SIP/2.0\nVia: SIP/2.0/UDP %s:5060;branch=%s2\n" % (dst, src, b)
           + common % ";tag=t" + ftag + "CSeq: 1 ACK\nContent-Length: 0\n\n", dt)
    return lambda: (
        packet(src, dst, "BYE sip:bob@%s SIP/2.0\nVia: SIP/2.0/UDP %s:5060;branch=%s3\n" % (dst, src, b)
               + common % ";tag=t" + ftag + "CSeq: 2 BYE\nContent-Length: 0\n\n", 1.0),
        packet(dst, src, "SIP/2.0 200 OK\nVia: SIP/2.0/UDP %s:5060;branch=%s3\n" % (src, b)
               + common % ";tag=t" + ftag + "CSeq: 2 BYE\nContent-Length: 0\n\n"))

# 800 ordinary calls first (4,800 messages), so that the legs to join are found among many
for k in range(800):
    call("10.0.9.%d" % (1 + k % 200), "10.0.8.%d" % (1 + k % 100), "fill-%d@pbx" % k, "g%d" % k, dt=0.001)()
# 1: caller -> B2BUA (a@pbx), B2BUA -> callee (b@pbx, X-Call-ID: a@pbx)
bye_a = call("10.0.0.1", "10.0.0.2", "a@pbx", "fa")
bye_b = call("10.0.0.2", "10.0.0.3", "b@pbx", "fb", "X-Call-ID: a@pbx\n")
bye_b(); bye_a()
# 2: the same with X-CID
bye_c = call("10.0.1.1", "10.0.1.2", "c@pbx", "fc")
bye_d = call("10.0.1.2", "10.0.1.3", "d@pbx", "fd", "X-CID: c@pbx\n")
bye_d(); bye_c()
# 3: X-Call-ID naming a Call-ID that comes only later: not joined
bye_f = call("10.0.2.2", "10.0.2.3", "f@pbx", "ff", "X-Call-ID: e@pbx\n")
bye_e = call("10.0.2.1", "10.0.2.2", "e@pbx", "fe")
bye_f(); bye_e()
# 4: r@pbx used by two calls one after the other; a leg naming it during the second
bye_r1 = call("10.0.3.1", "10.0.3.2", "r@pbx", "r1")
bye_r1()
bye_r2 = call("10.0.3.1", "10.0.3.2", "r@pbx", "r2")
bye_s = call("10.0.3.2", "10.0.3.3", "s@pbx", "fs", "X-Call-ID: r@pbx\n")
bye_s(); bye_r2()
EOF
python3 "$TMPD/gen.py" "$TMPD/xcid.pcap" "$SIPNAB_SRCDIR/tests" || { echo "FAIL: generating the capture"; exit 1; }

# call_id:state:legs:messages of every call but the 800 ordinary ones, in report order, and
# how many of those there are, each alone and COMPLETED
calls() {
	python3 -c 'import json,sys
fill = 0
for c in json.load(open(sys.argv[1]))["calls"]:
    if c["call_id"].startswith("fill-"):
        fill += c["legs"] == [c["call_id"]] and c["state"] == "COMPLETED" and c["messages"] == 6
    else:
        print("%s:%s:%s:%d" % (c["call_id"], c["state"], ",".join(c["legs"]), c["messages"]))
print("fill=%d" % fill)' "$1" | tr '\n' ' '
}

"$SIPNAB_BIN" -N -I "$TMPD/xcid.pcap" --cores 1 --report=json >"$TMPD/c1.json" 2>"$TMPD/c1.err"
expect_eq "exit status" "$?" 0
expect_eq "calls (Call-ID:state:legs:messages)" "$(calls "$TMPD/c1.json")" \
	"a@pbx:COMPLETED:a@pbx,b@pbx:12 c@pbx:COMPLETED:c@pbx,d@pbx:12 f@pbx:COMPLETED:f@pbx:6 e@pbx:COMPLETED:e@pbx:6 r@pbx:COMPLETED:r@pbx:6 r@pbx:COMPLETED:r@pbx,s@pbx:12 fill=800 "
expect_eq "dialogs" "$(json_get "$TMPD/c1.json" summary.dialogs)" 809

# the legs of a call are analysed by different workers from --cores 2 on: the same report,
# under four hash keys too (the Call-ID tables are keyed per run), with chunk boundaries inside
# the capture (split reader) and with one reading thread
expect_same_report "$TMPD/xcid.pcap" "$TMPD/c1.json" ""
SIPNAB_SPLIT_CHUNK=1024 "$SIPNAB_BIN" -N -I "$TMPD/xcid.pcap" --cores 2 --report=json >"$TMPD/cs.json" 2>/dev/null
expect_eq "--cores 2, 1 KiB chunks: same report" "$(cmp -s "$TMPD/c1.json" "$TMPD/cs.json" && echo same)" same
SIPNAB_NO_SPLIT=1 "$SIPNAB_BIN" -N -I "$TMPD/xcid.pcap" --cores 2 --report=json >"$TMPD/cr.json" 2>/dev/null
expect_eq "--cores 2, one reading thread: same report" "$(cmp -s "$TMPD/c1.json" "$TMPD/cr.json" && echo same)" same

echo "$checks checks, $fails failed"
[ "$fails" -eq 0 ]
