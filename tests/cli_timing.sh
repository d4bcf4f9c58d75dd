#!/bin/sh
# SIPNAB_TIMING=1 (bench/README.md, "Where a run's time goes") prints each phase of a run to
# stderr as "sipnab: timing: NAME W s, C s CPU, B CPUs": wall time, the CPU time of all of
# sipnab's threads in the phase, and B = C / W. Every reading path prints the same phases in
# order, the CPU figures add up (B is C / W, and a phase never keeps more CPUs busy than the
# process has threads), and the report on stdout is the same as without it. Nothing here is
# timed: the numbers are whatever the machine gives; only their shape and arithmetic are
# checked.
. "$(dirname "$0")/lib.sh"
python3 "$SIPNAB_SRCDIR/bench/carrier.py" --calls 300 --out "$TMPD/c300.pcap" 2>/dev/null ||
	fail "carrier.py"
gzip -c "$TMPD/c300.pcap" >"$TMPD/c300.pcap.gz"

# check WHAT CORES PHASES FILE ARGS...: one run with SIPNAB_TIMING=1, one without
check() {
	what=$1 cores=$2 phases=$3 in=$4
	shift 4
	"$SIPNAB_BIN" -N -I "$in" --report=json --cores "$cores" "$@" >"$TMPD/ref.json" ||
		fail "$what: exit status without SIPNAB_TIMING"
	SIPNAB_TIMING=1 "$SIPNAB_BIN" -N -I "$in" --report=json --cores "$cores" "$@" \
		>"$TMPD/out.json" 2>"$TMPD/err" || fail "$what: exit status"
	expect_eq "$what: the report is the one without SIPNAB_TIMING" \
		"$(cmp -s "$TMPD/out.json" "$TMPD/ref.json" && echo same)" same
	# the phase lines, in order
	expect_eq "$what: phases" \
		"$(sed -n 's/^sipnab: timing: \([a-z]*\) *[0-9.]* s, [0-9.]* s CPU, [0-9.]* CPUs$/\1/p' "$TMPD/err" |
			tr '\n' ,)" "$phases"
	# B = C / W (to the printed rounding, or 0 for a phase too short to time), and at most
	# the process's threads: the run's, plus gzip's inflater
	expect_eq "$what: CPUs busy = CPU time / wall time, within the threads" \
		"$(awk -v threads="$cores" -v gz="$(case $in in *.gz) echo 1 ;; *) echo 0 ;; esac)" '
			/^sipnab: timing: [a-z]* *[0-9.]* s, / {
				w = $4; c = $6; b = $9; n++
				want = (w > 0) ? c / w : 0
				d = b - want; if (d < 0) d = -d
				# (W and C are printed to 0.1 ms: their ratio is checked where that
				# rounding moves it by 2 % at most)
				if (w >= 0.005 && d > 0.01 + 0.03 * want) bad++
				if (w >= 0.005 && b > threads + gz + 0.05) bad++
				if (c < 0 || w < 0) bad++
			}
			END { print (n > 0 && bad == 0) ? "yes" : "no (" bad " of " n " lines)" }' "$TMPD/err")" yes
}

check "one core" 1 "open,analyse,build,engfree,report,free," "$TMPD/c300.pcap"
check "two cores, the sharded reader" 2 "open,analyse,build,engfree,report,free," \
	"$TMPD/c300.pcap"
# the single reader handing batches to workers (the path of gzip and pipes) adds its "read"
SIPNAB_NO_SPLIT=1
export SIPNAB_NO_SPLIT
check "two cores, one reading thread" 2 "open,read,analyse,build,engfree,report,free," \
	"$TMPD/c300.pcap"
unset SIPNAB_NO_SPLIT
check "two cores, gzip" 2 "open,read,analyse,build,engfree,report,free," "$TMPD/c300.pcap.gz"

# the thread lines of the sharded reader are still there, and name both threads
SIPNAB_TIMING=1 "$SIPNAB_BIN" -N -I "$TMPD/c300.pcap" --report=json --cores 2 \
	>/dev/null 2>"$TMPD/err" || fail "--cores 2: exit status"
expect_eq "two cores: a line per thread" \
	"$(sed -n 's/^sipnab: timing: thread \([0-9]\): [0-9.]* s cpu, [0-9]* records, [0-9]* scanned$/\1/p' \
		"$TMPD/err" | sort | tr '\n' ,)" "0,1,"
finish
