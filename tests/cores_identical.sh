#!/bin/sh
# The multi-core engine gives the same report as one core, byte for byte: --report=json for
# --cores 1, 2, 3, 4 and 8 on every capture the tests use (corpus, public captures when
# present, and a generated carrier capture whose RTP streams continue across calls).
. "$(dirname "$0")/lib.sh"
python3 "$SIPNAB_SRCDIR/bench/carrier.py" --calls 300 --call-ids 30 --stream-pairs 20 \
	--loss 1 --jitter-ms 3 --reorder 1 --seed 5 --out "$TMPD/carrier.pcap" 2>/dev/null ||
	fail "carrier.py"
set -- "$SIPNAB_CORPUS"/pcap/*.pcap "$TMPD/carrier.pcap"
if [ -d "$PUBLIC" ]; then
	set -- "$@" "$PUBLIC"/*.pcap
fi
for f in "$@"; do
	"$SIPNAB_BIN" -N -I "$f" --report=json --cores 1 >"$TMPD/c1.json" || fail "$f: exit $?"
	for n in 2 3 4 8; do
		"$SIPNAB_BIN" -N -I "$f" --report=json --cores $n >"$TMPD/cn.json" || fail "$f --cores $n: exit $?"
		checks=$((checks + 1))
		if cmp -s "$TMPD/c1.json" "$TMPD/cn.json"; then
			pass "$(basename "$f") --cores $n = --cores 1"
		else
			fail "$(basename "$f") --cores $n differs from --cores 1"
			diff "$TMPD/c1.json" "$TMPD/cn.json" | head -10
		fi
	done
done
finish
