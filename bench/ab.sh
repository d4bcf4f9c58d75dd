#!/usr/bin/env bash
# bench/ab.sh - two sipnab binaries against each other on one capture: the comparison to make
# for a change (two commits, or two builds of one commit such as a plain one and `make pgo`).
#
# usage: bench/ab.sh BIN_A BIN_B PCAP PACKETS [--cores 1] [--runs 21] [--keep-cache] [--huge-folios]
#
# One discarded warm-up of each, then RUNS rounds of one timed run of each (interleaved, the
# order swapped every other round: bench_run_rows in lib.sh) of
#     BIN -N -I PCAP --report=json --cores N > /dev/null
# PCAP is first put in the page cache as a file read from disk (bench_cache_file) unless
# --keep-cache. This machine's speed drifts from minute to minute, so the figure to read is
# the paired one: the median over the rounds of B's run / A's run in that round, with the
# quartiles of those ratios. The warm-ups' JSON reports are compared: binaries that report
# differently are not two builds of the same thing, and the script says so and exits 1.
# Prints a Markdown table: binary | median s | min s | max s | pkts/s | peak RSS MiB, then the
# paired line.
# Exit status: 0 ok, 1 a run failed or the reports differ, 2 bad arguments or no C compiler for
# bench/runone.c.

usage() {
	cat >&2 <<'EOF'
usage: bench/ab.sh BIN_A BIN_B PCAP PACKETS [--cores 1] [--runs 21] [--keep-cache] [--huge-folios]
  BIN_A, BIN_B  the sipnab binaries to compare (A is the reference)
  PCAP          capture file (e.g. /tmp/c5k.pcap from: python3 bench/carrier.py --calls 5000 --out /tmp/c5k.pcap)
  PACKETS       packets in PCAP (107 per carrier.py call: 535000 for --calls 5000)
  --cores N     worker count of every run (default 1)
  --runs N      timed runs of each binary after one warm-up (default 21)
  --keep-cache  measure PCAP as the page cache holds it, instead of reading it back from disk
                first (see bench_cache_file in bench/lib.sh)
  --huge-folios read it back through a mapping advised MADV_HUGEPAGE instead of with cat, as
                sipnab's own first read of a file leaves it (2 MiB folios from the start)
EOF
	exit 2
}

HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh" || exit 2
BENCH_ME=ab.sh

CORES=1
RUNS=21
POS=()
while [ $# -gt 0 ]; do
	case $1 in
	--cores) [ $# -ge 2 ] || bench_die "--cores needs a value" 2; CORES=$2; shift 2 ;;
	--cores=*) CORES=${1#*=}; shift ;;
	--runs) [ $# -ge 2 ] || bench_die "--runs needs a value" 2; RUNS=$2; shift 2 ;;
	--runs=*) RUNS=${1#*=}; shift ;;
	--keep-cache) BENCH_KEEP_CACHE=1; shift ;;
	--huge-folios) BENCH_HUGE_FOLIOS=1; shift ;;
	-h | --help) usage ;;
	--) shift; POS+=("$@"); break ;;
	-*) echo "ab.sh: unknown option '$1'" >&2; usage ;;
	*) POS+=("$1"); shift ;;
	esac
done
[ ${#POS[@]} -eq 4 ] || { echo "ab.sh: expected BIN_A BIN_B PCAP PACKETS, got ${#POS[@]} argument(s)" >&2; usage; }
A=${POS[0]} B=${POS[1]} PCAP=${POS[2]} PACKETS=${POS[3]}
for bin in "$A" "$B"; do
	[ -x "$bin" ] && [ ! -d "$bin" ] || bench_die "'$bin' is not an executable file" 2
done
[ -r "$PCAP" ] && [ -f "$PCAP" ] || bench_die "PCAP '$PCAP' is not a readable file" 2
bench_is_uint "$PACKETS" || bench_die "PACKETS '$PACKETS' is not a positive integer" 2
bench_is_uint "$RUNS" || bench_die "--runs '$RUNS' is not a positive integer" 2
bench_is_uint "$CORES" || bench_die "--cores '$CORES' is not a positive integer" 2

bench_init ab.sh
bench_cache_file "$PCAP"

# how a binary was built, as far as it says: GCC records its switches in the debug
# information (-g), so a profile-guided build shows -fprofile-use
built() {
	local how
	how=$("$1" -V 2>/dev/null | head -n 1)
	if command -v strings >/dev/null 2>&1 && strings -a "$1" | grep -q -- '-fprofile-use'; then
		how="$how, profile-guided (-fprofile-use)"
	fi
	echo "$how"
}

SIZE=$(bench_filesize "$PCAP")
echo "## sipnab A/B"
echo
bench_host
echo "- A: $A ($(built "$A"))"
echo "- B: $B ($(built "$B"))"
echo "- file: $PCAP, $SIZE bytes ($(bench_fmib "$SIZE") MiB), $PACKETS packets"
echo "- method: 1 discarded warm-up of each, then $RUNS rounds of one timed run of each (interleaved,"
echo "  the order swapped every other round), wall time including start-up (bench/runone.c:"
echo "  CLOCK_MONOTONIC from just before fork() to just after wait4()), peak RSS from wait4()'s"
echo "  rusage; median/min/max over the runs"
echo "- page cache: $BENCH_CACHE"
echo "- commands (stdin </dev/null, stdout >/dev/null):"
for bin in "$A" "$B"; do
	echo "      runone OUTFILE $(bench_quote "$bin" -N -I "$PCAP" --report=json --cores "$CORES") > /dev/null"
done
echo

bench_row "A" "A" "$RUNS" 1 "$A" -N -I "$PCAP" --report=json --cores "$CORES"
bench_row "B" "B" "$RUNS" 1 "$B" -N -I "$PCAP" --report=json --cores "$CORES"
bench_row_warmed() {
	[ "$1" != 0 ] || bench_check_packets "$2" "$PACKETS"
	cp "$2" "$BENCH_TMP/report.$1"
}
bench_run_rows
if ! cmp -s "$BENCH_TMP/report.0" "$BENCH_TMP/report.1"; then
	bench_die "A and B write different reports for $PCAP: not two builds of the same thing" 1
fi

echo "| binary | median s | min s | max s | pkts/s | peak RSS MiB (median) |"
echo "|---|---:|---:|---:|---:|---:|"
for i in 0 1; do
	echo "| ${BR_LABEL[$i]} | $(bench_s "${BR_MED[$i]}") | $(bench_s "${BR_MIN[$i]}") | $(bench_s "${BR_MAX[$i]}") | $(bench_pps "$PACKETS" "${BR_MED[$i]}") | $(bench_mib "${BR_RSS[$i]}") |"
done
echo
# B / A round by round; the median and the quartiles (the middle half of the rounds)
for ((r = 1; r <= RUNS; r++)); do
	awk -v a="${BR_WALL[0,$r]}" -v b="${BR_WALL[1,$r]}" 'BEGIN { if (a > 0) printf "%.6f\n", b / a }'
done | sort -g | awk '
	{ v[NR] = $1 }
	function q(p,   x, i) { x = 1 + (NR - 1) * p; i = int(x); return v[i] + (x - i) * (v[i + 1] - v[i]) }
	END {
		if (NR == 0) { print "B / A, paired: n/a"; exit }
		v[NR + 1] = v[NR]
		printf "B / A, paired: %.3f (quartiles %.3f-%.3f, %d rounds)\n", q(0.5), q(0.25), q(0.75), NR
	}'
echo "B / A of the medians: $(awk -v a="${BR_MED[0]}" -v b="${BR_MED[1]}" 'BEGIN { if (a > 0) printf "%.3f", b / a; else print "n/a" }')"
echo
echo "B / A, paired = the median over the rounds of (B's run / A's run in that round); below 1:"
echo "B is faster. The reports of the two warm-ups are the same."
bench_host_end
