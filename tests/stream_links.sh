#!/bin/sh
# Calls and RTP streams are linked through the SDP endpoints that announced them: a call lists
# every stream sent to or from an endpoint it announced while it lasted, and a stream names the
# call whose announcement was in force when it began. Endpoints reused call after call (one
# RTP stream pair continued by several calls) link each stream to every call on its pair.
# Exit 0 pass, 1 fail, 77 skip.
. "$(dirname "$0")/lib.sh"
GEN="$SIPNAB_SRCDIR/bench/carrier.py"
need_python3

# links.py REPORT: checks the report's call <-> stream links; prints "links ok" or why not
cat >"$TMPD/links.py" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
calls, streams = d["calls"], d["streams"]
errors = []
listed_by = {i: [] for i in range(len(streams))}
for ci, c in enumerate(calls):
    ids = c["streams"]
    if ids != sorted(set(ids)):
        errors.append("call %d: streams %s not sorted and unique" % (ci, ids))
    for s in ids:
        listed_by[s].append(ci)
    if len(ids) != 2:
        errors.append("call %d lists %d streams" % (ci, len(ids)))
        continue
    a, b = streams[ids[0]], streams[ids[1]]
    if (a["src"], a["dst"]) != (b["dst"], b["src"]):
        errors.append("call %d: streams %s are not one pair" % (ci, ids))
for si, s in enumerate(streams):
    owners = listed_by[si]
    if not owners:
        errors.append("stream %d listed by no call" % si)
        continue
    first = min(owners, key=lambda ci: (float(calls[ci]["start_ts"]), ci))
    if s["call_id"] != calls[first]["call_id"]:
        errors.append("stream %d names %s, its first call is %s"
                      % (si, s["call_id"], calls[first]["call_id"]))
print("calls=%d streams=%d per_stream=%s" % (len(calls), len(streams),
      sorted(set(len(v) for v in listed_by.values()))))
print("links ok" if not errors else "\n".join(errors))
EOF

# 10 calls, each with its own Call-ID, continuing 2 stream pairs (5 calls a pair)
python3 "$GEN" --calls 10 --call-ids 0 --stream-pairs 2 --out "$TMPD/shared.pcap" 2>/dev/null ||
	fail "carrier.py --stream-pairs 2 failed"
for cores in 1 2; do
	"$SIPNAB_BIN" -N -I "$TMPD/shared.pcap" --report=json --cores "$cores" \
		>"$TMPD/shared$cores.json" || fail "sipnab --cores $cores failed"
	python3 "$TMPD/links.py" "$TMPD/shared$cores.json" >"$TMPD/shared$cores.out"
	cat "$TMPD/shared$cores.out"
	expect_eq "shared pairs, $cores core(s): shape" "$(head -1 "$TMPD/shared$cores.out")" \
		"calls=10 streams=4 per_stream=[5]"
	expect_eq "shared pairs, $cores core(s): links" "$(tail -1 "$TMPD/shared$cores.out")" \
		"links ok"
done

# 30 calls, each its own Call-ID and its own two streams
python3 "$GEN" --calls 30 --call-ids 0 --stream-pairs 0 --out "$TMPD/own.pcap" 2>/dev/null ||
	fail "carrier.py --stream-pairs 0 failed"
"$SIPNAB_BIN" -N -I "$TMPD/own.pcap" --report=json >"$TMPD/own.json" || fail "sipnab failed"
python3 "$TMPD/links.py" "$TMPD/own.json" >"$TMPD/own.out"
cat "$TMPD/own.out"
expect_eq "own pairs: shape" "$(head -1 "$TMPD/own.out")" "calls=30 streams=60 per_stream=[1]"
expect_eq "own pairs: links" "$(tail -1 "$TMPD/own.out")" "links ok"

# 700 calls on 40 pairs (17 or 18 calls a pair): 4,900 SIP messages, more than one block of
# the announcement index (eng_merge.c: ANN_BLOCK), collected on several threads at --cores 2, 3
python3 "$GEN" --calls 700 --call-ids 0 --stream-pairs 40 --seed 4 --out "$TMPD/many.pcap" \
	2>/dev/null || fail "carrier.py --calls 700 failed"
for cores in 1 2 3; do
	"$SIPNAB_BIN" -N -I "$TMPD/many.pcap" --report=json --cores "$cores" \
		>"$TMPD/many$cores.json" || fail "sipnab --cores $cores failed"
	python3 "$TMPD/links.py" "$TMPD/many$cores.json" >"$TMPD/many$cores.out"
	cat "$TMPD/many$cores.out"
	expect_eq "700 calls on 40 pairs, $cores core(s): shape" \
		"$(head -1 "$TMPD/many$cores.out")" "calls=700 streams=80 per_stream=[17, 18]"
	expect_eq "700 calls on 40 pairs, $cores core(s): links" \
		"$(tail -1 "$TMPD/many$cores.out")" "links ok"
done

finish
