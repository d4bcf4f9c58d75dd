#!/bin/bash
# Under a capture file's read lease sipnab reads it stretch by stretch (--cores 1: 2 MiB, or a
# window of its own; more cores: a chunk) the way that has cost least so far: through the
# mapping, or copied with pread() (src/engine/eng_ways.c; tests/check_eng_ways.c tests the
# choice itself with made-up costs). Whatever the ways, the report is the same:
# - SIPNAB_MAPPED=alternate switches way at every stretch, with stretches as small as
#   SIPNAB_READ_STRETCH (--cores 1, the window too) and SIPNAB_SPLIT_CHUNK (more cores) make
#   them, over the corpus, a generated carrier capture and the public captures (when
#   ../shared is there);
# - the default reads the first stretches copied, then tries the mapping, and reads on either
#   way, on a carrier capture of 40 MiB;
# and SIPNAB_TIMING=1 says how many stretches went each way.
. "$(dirname "$0")/lib.sh"
need_python3

need_read_lease
unset SIPNAB_SPLIT_CHUNK SIPNAB_READ_STRETCH SIPNAB_MAPPED SIPNAB_NO_SPLIT

python3 "$SIPNAB_SRCDIR/bench/carrier.py" --calls 1500 --call-ids 0 --stream-pairs 0 \
	--out "$TMPD/c1500.pcap" 2>/dev/null || { echo "FAIL: carrier.py"; exit 1; }
python3 "$SIPNAB_SRCDIR/bench/carrier.py" --calls 20 --out "$TMPD/c20.pcap" 2>/dev/null ||
	{ echo "FAIL: carrier.py"; exit 1; }

# ways FILE UNIT: "M C S" from the ways line of the timing in FILE (M stretches or chunks
# through the mapping, C copied, S switches); empty when there is none
ways() {
	sed -n "s/^sipnab: timing: ways: \([0-9]*\) $2 through the mapping, \([0-9]*\) copied, \([0-9]*\) switches.*/\1 \2 \3/p" "$1"
}

# run FILE CORES WHAT ENV...: the report of FILE at CORES with ENV, against the one copied
# at one core ($TMPD/ref.json); sets m, c and s from the ways line
run() {
	local f=$1 cores=$2 what=$3 unit=stretches rc

	shift 3
	[ "$cores" = 1 ] || unit=chunks
	env "$@" SIPNAB_TIMING=1 "$SIPNAB_BIN" -N -I "$f" --cores "$cores" --report=json \
		>"$TMPD/out.json" 2>"$TMPD/out.err"
	rc=$?
	read -r m c s < <(ways "$TMPD/out.err" "$unit")
	checks=$((checks + 1))
	if [ "$rc" != 0 ]; then
		fail "$what: exit status $rc ($(grep -v timing: "$TMPD/out.err" | head -c 300))"
	elif ! cmp -s "$TMPD/ref.json" "$TMPD/out.json"; then
		fail "$what: the report differs from the one copied at --cores 1"
		diff "$TMPD/ref.json" "$TMPD/out.json" | head -6
	elif [ -z "${m:-}" ]; then
		fail "$what: no ways line in the timing ($(grep timing: "$TMPD/out.err" | head -c 300))"
	else
		pass "$what: same report ($m $unit through the mapping, $c copied, $s switches)"
		return 0
	fi
	m= c= s=
	return 1
}

# alternate FILE STRETCH...: the ways in turn at one to three cores, against copying only
alternate() {
	local f=$1 name k cores env

	name=$(basename "$f")
	shift
	SIPNAB_MAPPED=0 "$SIPNAB_BIN" -N -I "$f" --cores 1 --report=json >"$TMPD/ref.json" \
		2>/dev/null
	for k in "$@"; do
		for cores in 1 2 3; do
			env=SIPNAB_READ_STRETCH=$k
			[ "$cores" = 1 ] || env=SIPNAB_SPLIT_CHUNK=$k
			run "$f" "$cores" "$name, alternate, --cores $cores, stretches of $k" \
				SIPNAB_MAPPED=alternate "$env" || continue
			# both ways where the file holds more than two stretches (at one core a
			# stretch through the mapping is a batch of records at least: up to 1,024)
			if [ "$(stat -c %s "$f")" -gt $((2 * k)) ]; then
				checks=$((checks + 1))
				if [ "$m" -lt 1 ] || [ "$c" -lt 1 ]; then
					fail "$name, alternate, --cores $cores, stretches of $k: $m through the mapping, $c copied"
				fi
			fi
		done
	done
}

alternate "$SIPNAB_CORPUS/pcap/sipp-g711-dtmf.pcap" 4096 65536
alternate "$SIPNAB_CORPUS/pcap/sipp-tcp-g711-dtmf.pcap" 4096 65536
alternate "$TMPD/c20.pcap" 4096 65536
alternate "$TMPD/c1500.pcap" 1048576
# 39 MiB in stretches of 1 MiB: many of each way at every core count
checks=$((checks + 1))
if [ "$m" -lt 8 ] || [ "$c" -lt 8 ]; then
	fail "c1500.pcap, alternate, --cores 3: $m through the mapping, $c copied"
fi
if [ -d "$PUBLIC" ]; then
	for f in "$PUBLIC"/*.pcap "$PUBLIC"/*.pcapng; do
		[ -f "$f" ] || continue
		alternate "$f" 4096
	done
else
	echo "note: $PUBLIC not present: the public captures are not read"
fi

# the default: 19 stretches of 2 MiB, the first four copied and the fifth through the mapping
SIPNAB_MAPPED=0 "$SIPNAB_BIN" -N -I "$TMPD/c1500.pcap" --cores 1 --report=json \
	>"$TMPD/ref.json" 2>/dev/null
for cores in 1 2 3; do
	for i in 1 2; do
		if run "$TMPD/c1500.pcap" "$cores" "c1500.pcap, the default, --cores $cores, run $i"; then
			checks=$((checks + 1))
			if [ "$m" -lt 1 ] || [ "$c" -lt 4 ] || [ $((m + c)) -lt 18 ]; then
				fail "c1500.pcap, the default, --cores $cores: $m through the mapping, $c copied"
			fi
		fi
	done
done
finish
