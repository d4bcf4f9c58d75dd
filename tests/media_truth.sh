#!/bin/sh
# RTP statistics against a generator's ground truth: bench/carrier.py writes a capture with
# known loss, jitter and reordering (--truth); for every stream sipnab's packets must equal the
# packets the generator wrote and its lost count the RFC 3550 / Wireshark count (expected from
# the first to the last packet received, minus received; losses before the first or after the
# last received packet cannot be seen). Every call must be found and COMPLETED.
. "$(dirname "$0")/lib.sh"
GEN="$SIPNAB_SRCDIR/bench/carrier.py"
python3 "$GEN" --calls 40 --call-ids 0 --stream-pairs 0 --loss 3 --jitter-ms 5 --reorder 2 \
	--seed 11 --out "$TMPD/imp.pcap" --truth "$TMPD/truth.json" 2>/dev/null || { fail "carrier.py"; finish; exit 1; }
"$SIPNAB_BIN" -N -I "$TMPD/imp.pcap" --report=json >"$TMPD/r.json" || fail "sipnab exit $?"
python3 - "$TMPD/r.json" "$TMPD/truth.json" >"$TMPD/cmp.txt" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
t = json.load(open(sys.argv[2]))
ours = {(s["src"], s["dst"], s["ssrc"]): s for s in r["streams"]}
bad = 0
lost_total = 0
for st in t["streams"]:
    k = (st["src"], st["dst"], st["ssrc"])
    s = ours.pop(k, None)
    if s is None:
        print("missing stream", k); bad += 1; continue
    if s["packets"] != st["received"] or s["lost"] != st["lost_wireshark"]:
        print("stream", k, "packets", s["packets"], "truth", st["received"],
              "lost", s["lost"], "truth", st["lost_wireshark"]); bad += 1
    if s["call_id"] is None:
        print("stream", k, "not tied to its call"); bad += 1
    lost_total += s["lost"]
for k in ours:
    print("extra stream", k); bad += 1
states = {c["state"] for c in r["calls"]}
print("streams=%d" % len(t["streams"]))
print("calls=%d" % len(r["calls"]))
print("states=%s" % ",".join(sorted(states)))
print("lost=%d" % lost_total)
print("bad=%d" % bad)
PY
cat "$TMPD/cmp.txt" | grep -v '^[a-z_]*=' | head -20
v() { sed -n "s/^$1=//p" "$TMPD/cmp.txt"; }
expect_eq "streams compared" "$(v streams)" 80
expect_eq "streams disagreeing with the truth" "$(v bad)" 0
expect_eq "calls" "$(v calls)" 40
expect_eq "call states" "$(v states)" COMPLETED
[ "$(v lost)" -gt 0 ] || fail "the impaired capture shows no loss"
# the loss shows up in the problem selection
n=$("$SIPNAB_BIN" -N -I "$TMPD/imp.pcap" --problems --report=json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["calls"]))')
[ "$n" -gt 0 ] || fail "--problems selects no call of a capture with 3 % loss"
finish
