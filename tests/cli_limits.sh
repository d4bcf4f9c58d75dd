#!/bin/sh
# Memory bounds as a user sets them: -l/--limit (Call-IDs kept per worker; with -R/--rotate the
# oldest is evicted for a new one instead of the new one being dropped),
# --max-call-messages (messages kept per Call-ID) and --max-streams (RTP streams tracked per
# worker). What a bound keeps out is counted in the report's capture.dropped, never silently
# lost.
. "$(dirname "$0")/lib.sh"
S="$SIPNAB_CORPUS/pcap/sipp-g711-dtmf.pcap"
get() { # file options... -> "calls streams dropped.calls dropped.sip dropped.streams dropped.rtp"
	f=$1
	shift
	"$SIPNAB_BIN" -N -I "$f" --cores 1 --report=json "$@" | python3 -c '
import json, sys
d = json.load(sys.stdin)
x = d["capture"]["dropped"]
print(d["summary"]["calls"], d["summary"]["streams"], x["calls"], x["sip_messages"],
      x["streams"], x["rtp_packets"])'
}
expect_eq "no bound reached" "$(get "$S")" "2 8 0 0 0 0"
# every stream of the sample was announced by SDP: --no-rtp-heuristic keeps all 8
expect_eq "--no-rtp-heuristic on announced streams" "$(get "$S" --no-rtp-heuristic)" "2 8 0 0 0 0"
# one call kept: the second Call-ID (6 messages) is dropped and counted
expect_eq "-l 1" "$(get "$S" -l 1)" "1 8 1 6 0 0"
expect_eq "--max-call-messages 4" "$(get "$S" --max-call-messages 4)" "2 8 0 4 0 0"
# one RTP stream tracked: 7 candidate streams and their 748 packets counted as dropped
expect_eq "--max-streams 1" "$(get "$S" --max-streams 1)" "2 1 0 0 7 748"
if [ -d "$PUBLIC" ]; then
	# 6 Call-IDs of 26, 18, 14, 8, 8 and 7 messages
	# its one RTP stream is still found, by the RTP heuristic: the call whose SDP announced it
	# was dropped, and the calls kept that announced the same endpoint ended long before
	expect_eq "sngrep-aaa -l 2" "$(get "$PUBLIC/sngrep-aaa.pcap" -l 2)" "2 1 4 37 0 0"
	"$SIPNAB_BIN" -N -I "$PUBLIC/sngrep-aaa.pcap" -l 2 --cores 1 --report=json >"$TMPD/h.json"
	expect_eq "heuristic stream has no call" "$(json_get "$TMPD/h.json" streams.0.call_id)" None
	expect_eq "heuristic stream not announced" "$(json_get "$TMPD/h.json" streams.0.announced)" False
	# --no-rtp-heuristic keeps only streams an SDP announced
	expect_eq "sngrep-aaa -l 2 --no-rtp-heuristic" \
		"$(get "$PUBLIC/sngrep-aaa.pcap" -l 2 --no-rtp-heuristic)" "2 0 4 37 0 0"
fi

# -R/--rotate: at the limit the worker evicts its oldest kept Call-ID (first seen earliest) for
# the new one. The evicted call counts in dropped.calls, the messages it had kept in
# dropped.sip_messages, and dropped.calls_rotated counts evictions.
rot() { # file options... -> "calls_rotated call_id:messages ..." (kept calls in report order)
	f=$1
	shift
	"$SIPNAB_BIN" -N -I "$f" --cores 1 --report=json "$@" | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(" ".join([str(d["capture"]["dropped"]["calls_rotated"])] +
               ["%s:%d" % (c["call_id"], c["messages"]) for c in d["calls"]]))'
}
# without -l the default limit applies, which the sample does not reach
expect_eq "-R alone" "$(get "$S" -R)" "2 8 0 0 0 0"
expect_eq "-R alone rotates nothing" "$(rot "$S" --rotate)" \
	"0 1-9428@127.0.0.1:6 2-9428@127.0.0.1:6"
# 1-9428 (frames 1-498, 6 messages) is evicted when 2-9428 appears (frame 499): the opposite
# of -l 1. All 8 streams are still found (the first call's RTP by the heuristic).
expect_eq "-l 1 -R" "$(get "$S" -l 1 -R)" "1 8 1 6 0 0"
expect_eq "-l 1 -R keeps the later call" "$(rot "$S" -l 1 -R)" "1 2-9428@127.0.0.1:6"
if [ -d "$PUBLIC" ]; then
	# SIP messages by Call-ID in capture order (tshark -Y sip): A=578222729-4665d775 frames
	# 19-182 (18), B=105090259 223-274 (18), C=85216695 321-349 (8), A again 421-454 (8),
	# D=29858147 515-539 (7), E=24487391 548-551 (3), D 558-560 (2), E 578-582 (4),
	# F=11894297 602-622 (8), D 639-650 (5).
	# -l 3 -R: D evicts A (26 messages), E evicts B (18), F evicts C (8); D, E and F are
	# kept whole: 3 evictions, 52 messages dropped, 14 + 7 + 8 kept (81 in all)
	A=sngrep-aaa.pcap
	expect_eq "sngrep-aaa -l 3 -R" "$(get "$PUBLIC/$A" -l 3 -R)" "3 1 3 52 0 0"
	D=29858147-465b0752@29858051-465b07b2
	E=24487391-449bf2a0@192.168.1.2
	F=11894297-4432a9f8@192.168.1.2
	expect_eq "sngrep-aaa -l 3 -R keeps D, E, F" "$(rot "$PUBLIC/$A" -l 3 -R)" \
		"3 $D:14 $E:7 $F:8"
	# -l 2 -R: C evicts A (18), A's return at frame 421 evicts B (18), D evicts C (8), E
	# evicts A (8), F evicts D (9), D's return at frame 639 evicts E (7): 6 evictions, 68
	# messages. F (8) and the D that started again at frame 639 (5) are kept: 13 + 68 = 81.
	expect_eq "sngrep-aaa -l 2 -R" "$(get "$PUBLIC/$A" -l 2 -R)" "2 1 6 68 0 0"
	expect_eq "sngrep-aaa -l 2 -R keeps F and the returned D" "$(rot "$PUBLIC/$A" -l 2 -R)" \
		"6 $F:8 $D:5"
fi

# Many calls, against an independent model of the rule: 600 generated calls with a Call-ID each,
# overlapping in time, so that messages of evicted calls keep arriving (each starts its call
# again) and the worker compacts its array of messages while it runs.
python3 "$SIPNAB_SRCDIR/bench/carrier.py" --calls 600 --call-ids 0 --seed 3 \
	--out "$TMPD/c.pcap" 2>/dev/null || fail "carrier.py"
cat >"$TMPD/model.py" <<'PY'
import struct, sys
from collections import OrderedDict
data = open(sys.argv[1], "rb").read()
limit = int(sys.argv[2])
off, kept, evictions, dropped, total = 24, OrderedDict(), 0, 0, 0
while off < len(data):
    sec, usec, caplen, _ = struct.unpack_from("<IIII", data, off)
    pkt = data[off + 16:off + 16 + caplen]
    off += 16 + caplen
    if pkt[12:14] != b"\x08\x00" or pkt[23] != 17:
        continue
    head = pkt[14 + (pkt[14] & 15) * 4 + 8:].split(b"\r\n\r\n", 1)[0].split(b"\r\n")
    if not (head[0].startswith(b"SIP/2.0 ") or head[0].endswith(b" SIP/2.0")):
        continue
    cid = next(h.split(b":", 1)[1].strip().decode() for h in head[1:]
               if h.lower().startswith((b"call-id:", b"i:")))
    total += 1
    if cid not in kept:
        if len(kept) == limit:
            evictions += 1
            dropped += kept.popitem(last=False)[1][0]
        kept[cid] = [0, "%d.%06d" % (sec, usec)]
    kept[cid][0] += 1
for cid, (n, t) in sorted(kept.items(), key=lambda kv: (kv[1][1], kv[0])):
    print(t, cid, n)
print("sip", total, "rotated", evictions, "calls", evictions, "messages", dropped)
PY
cat >"$TMPD/got.py" <<'PY'
import json, sys
d = json.load(sys.stdin)
for c in d["calls"]:
    print("%.6f" % c["start_ts"], c["call_id"], c["messages"])
x = d["capture"]["dropped"]
print("sip", d["capture"]["sip_messages"], "rotated", x["calls_rotated"], "calls", x["calls"],
      "messages", x["sip_messages"])
PY
for l in 1 20 300; do
	python3 "$TMPD/model.py" "$TMPD/c.pcap" $l >"$TMPD/model.txt"
	"$SIPNAB_BIN" -N -I "$TMPD/c.pcap" --cores 1 --report=json -l $l -R |
		python3 "$TMPD/got.py" >"$TMPD/got.txt"
	checks=$((checks + 1))
	if diff -u "$TMPD/model.txt" "$TMPD/got.txt"; then
		pass "carrier -l $l -R: $(tail -n 1 "$TMPD/got.txt")"
	else
		fail "carrier -l $l -R differs from the model"
	fi
done
# several workers: each rotates on its own, the same way on every run, and every SIP message is
# either in a kept call or counted as dropped
"$SIPNAB_BIN" -N -I "$TMPD/c.pcap" --cores 3 --report=json -l 20 -R >"$TMPD/r1.json"
"$SIPNAB_BIN" -N -I "$TMPD/c.pcap" --cores 3 --report=json -l 20 -R >"$TMPD/r2.json"
checks=$((checks + 1))
if cmp -s "$TMPD/r1.json" "$TMPD/r2.json"; then
	pass "--cores 3 -l 20 -R gives the same report twice"
else
	fail "--cores 3 -l 20 -R differs between runs"
fi
expect_eq "--cores 3 -l 20 -R: kept + dropped messages, all drops rotations" "$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
x = d["capture"]["dropped"]
print(sum(c["messages"] for c in d["calls"]) + x["sip_messages"], d["capture"]["sip_messages"],
      x["calls"] == x["calls_rotated"] > 0)' "$TMPD/r1.json")" "4200 4200 True"
"$SIPNAB_BIN" -N -I "$S" -l 1 -R --cores 1 --report >"$TMPD/t.txt"
checks=$((checks + 1))
if grep -q "rotated  *1 of the dropped calls" "$TMPD/t.txt"; then
	pass "the text report says a call was rotated out"
else
	fail "the text report lacks the rotated line: $(grep -i dropped "$TMPD/t.txt")"
fi

"$SIPNAB_BIN" -N -I "$S" -l 0 >/dev/null 2>&1
expect_eq "-l 0 is a usage error" "$?" 2
finish
