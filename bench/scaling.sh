#!/usr/bin/env bash
# bench/scaling.sh - sipnab's speed and memory against its worker count.
#
# usage: bench/scaling.sh BIN PCAP PACKETS [--cores 1,2,4,8] [--runs 5] [--keep-cache] [--huge-folios] [--no-pair]
#
# For each core count one discarded warm-up run, then RUNS rounds of one timed run per core
# count (interleaved, so a slow period of a shared machine hits every row alike) of
#     BIN -N -I PCAP --report=json --cores N > /dev/null
# PCAP is first put in the page cache as a file read from disk (bench_cache_file in lib.sh)
# unless --keep-cache. Each run goes through bench/runone.c (bench_once in lib.sh): wall seconds
# from fork to wait4, start-up included; peak RSS and CPU time from wait4's rusage.
# With 1 in the core list and nproc >= 2 (unless --no-pair) one more row, "2 x 1 at once": two
# --cores 1 runs started together, timed until both end; its speed-up (twice the work) is
# what this machine gives two independent runs, the ceiling of a 2-core speed-up here.
# Prints a Markdown table: cores | median s | min s | max s | pkts/s | speed-up | paired
# speed-up | peak RSS MiB | CPU s (user + system),
# and, with the pair row and a 2-core row, where the 2-core run's time goes: the CPU time it
# takes against one run alone and against each of the two runs at once, and how many CPUs it
# kept busy.
# Exit status: 0 ok, 1 a run failed, 2 bad arguments or no C compiler for bench/runone.c.

usage() {
	cat >&2 <<'EOF'
usage: bench/scaling.sh BIN PCAP PACKETS [--cores 1,2,4,8] [--runs 5] [--keep-cache] [--huge-folios] [--no-pair]
  BIN      sipnab binary (e.g. build/sipnab)
  PCAP     capture file (e.g. /tmp/c5k.pcap from: python3 bench/carrier.py --calls 5000 --out /tmp/c5k.pcap)
  PACKETS  packets in PCAP (107 per carrier.py call: 535000 for --calls 5000)
  --cores LIST  comma-separated worker counts, each measured (default 1,2,4,8)
  --runs N      timed runs per core count after one warm-up; medians are reported (default 5)
  --keep-cache  measure PCAP as the page cache holds it, instead of reading it back from disk
                first (see bench_cache_file in bench/lib.sh)
  --huge-folios read it back through a mapping advised MADV_HUGEPAGE instead of with cat, as
                sipnab's own first read of a file leaves it (2 MiB folios from the start)
  --no-pair     leave out the row of two --cores 1 runs at once (the machine's ceiling for
                two independent runs; measured when 1 is in --cores and nproc >= 2)
EOF
	exit 2
}

HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh" || exit 2
BENCH_ME=scaling.sh

CORES=1,2,4,8
RUNS=5
PAIR=1
POS=()
while [ $# -gt 0 ]; do
	case $1 in
	--cores) [ $# -ge 2 ] || bench_die "--cores needs a value" 2; CORES=$2; shift 2 ;;
	--cores=*) CORES=${1#*=}; shift ;;
	--runs) [ $# -ge 2 ] || bench_die "--runs needs a value" 2; RUNS=$2; shift 2 ;;
	--runs=*) RUNS=${1#*=}; shift ;;
	--keep-cache) BENCH_KEEP_CACHE=1; shift ;;
	--huge-folios) BENCH_HUGE_FOLIOS=1; shift ;;
	--no-pair) PAIR=0; shift ;;
	-h | --help) usage ;;
	--) shift; POS+=("$@"); break ;;
	-*) echo "scaling.sh: unknown option '$1'" >&2; usage ;;
	*) POS+=("$1"); shift ;;
	esac
done
[ ${#POS[@]} -eq 3 ] || { echo "scaling.sh: expected BIN PCAP PACKETS, got ${#POS[@]} argument(s)" >&2; usage; }
BIN=${POS[0]} PCAP=${POS[1]} PACKETS=${POS[2]}
[ -x "$BIN" ] && [ ! -d "$BIN" ] || bench_die "BIN '$BIN' is not an executable file" 2
[ -r "$PCAP" ] && [ -f "$PCAP" ] || bench_die "PCAP '$PCAP' is not a readable file" 2
bench_is_uint "$PACKETS" || bench_die "PACKETS '$PACKETS' is not a positive integer" 2
bench_is_uint "$RUNS" || bench_die "--runs '$RUNS' is not a positive integer" 2
bench_check_list --cores "$CORES"

bench_init scaling.sh
bench_cache_file "$PCAP"

SIZE=$(bench_filesize "$PCAP")
echo "## sipnab scaling"
echo
bench_host
echo "- binary: $BIN ($("$BIN" -V 2>/dev/null | head -n 1))"
echo "- file: $PCAP, $SIZE bytes ($(bench_fmib "$SIZE") MiB), $PACKETS packets"
echo "- method: 1 discarded warm-up per row, then $RUNS rounds of one timed run per row (interleaved),"
echo "  wall time including start-up (bench/runone.c: CLOCK_MONOTONIC from just before fork() to just"
echo "  after wait4()), peak RSS and CPU time (user + system) from wait4()'s rusage; median/min/max"
echo "  over the runs"
echo "- page cache: $BENCH_CACHE"
echo "- commands (stdin </dev/null, stdout >/dev/null):"
for c in ${CORES//,/ }; do
	echo "      runone OUTFILE $(bench_quote "$BIN" -N -I "$PCAP" --report=json --cores "$c") > /dev/null"
done
if [ "$PAIR" = 1 ] && [ "$(nproc)" -ge 2 ] && printf '%s\n' ${CORES//,/ } | grep -qx 1; then
	echo "      and the same --cores 1 command twice at once (the row \"2 x 1 at once\"), timed until both end"
fi
echo

CLIST=(${CORES//,/ })
for c in "${CLIST[@]}"; do
	bench_row "sipnab --cores $c" "c$c" "$RUNS" 1 "$BIN" -N -I "$PCAP" --report=json --cores "$c"
done
# two --cores 1 runs at once: the row's exit status is 0 only if both succeed
PAIRED=
ONE=
for i in "${!CLIST[@]}"; do [ "${CLIST[$i]}" = 1 ] && [ -z "$ONE" ] && ONE=$i; done
if [ "$PAIR" = 1 ] && [ -n "$ONE" ] && [ "$(nproc)" -ge 2 ]; then
	PAIRED=${#CLIST[@]}
	bench_row "2 x sipnab --cores 1 at once" "2x1" "$RUNS" 1 bash -c \
		'"$0" "$@" >/dev/null & p=$!; "$0" "$@" >/dev/null; r=$?; wait "$p" || r=1; exit "$r"' \
		"$BIN" -N -I "$PCAP" --report=json --cores 1
fi
bench_row_warmed() { [ "$1" != 0 ] || bench_check_packets "$2" "$PACKETS"; }
bench_run_rows
ROWS=()
for i in "${!CLIST[@]}"; do
	ROWS+=("| ${CLIST[$i]} | $(bench_s "${BR_MED[$i]}") | $(bench_s "${BR_MIN[$i]}") | $(bench_s "${BR_MAX[$i]}") | $(bench_pps "$PACKETS" "${BR_MED[$i]}") | $(bench_ratio "${BR_MED[0]}" "${BR_MED[$i]}") | $(bench_paired 0 "$i") | $(bench_mib "${BR_RSS[$i]}") | $(bench_s "${BR_CPU[$i]}") |")
done
if [ -n "$PAIRED" ]; then
	i=$PAIRED
	ROWS+=("| 2 x 1 at once | $(bench_s "${BR_MED[$i]}") | $(bench_s "${BR_MIN[$i]}") | $(bench_s "${BR_MAX[$i]}") | $(bench_pps $((2 * PACKETS)) "${BR_MED[$i]}") | $(bench_ratio "$(awk -v x="${BR_MED[$ONE]}" 'BEGIN { print 2 * x }')" "${BR_MED[$i]}") | $(bench_paired "$ONE" "$i" 2) | $(bench_mib "${BR_RSS[$i]}") | $(bench_s "${BR_CPU[$i]}") |")
fi

echo "| cores | median s | min s | max s | pkts/s | speed-up vs first row | paired speed-up | peak RSS MiB (median) | CPU s (median) |"
echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
printf '%s\n' "${ROWS[@]}"
echo
echo "pkts/s = PACKETS / median s; speed-up = first row's median s / this row's median s;"
echo "paired speed-up = the median over the rounds of (first row's run / this row's run in that round)."
if [ -n "$PAIRED" ]; then
	echo "2 x 1 at once: two --cores 1 runs started together, timed until both end; pkts/s and both"
	echo "speed-ups count its twice the work (2 x PACKETS; 2 x the --cores 1 time / its time): what this"
	echo "machine gives two independent runs at that moment, the ceiling for a 2-core speed-up; its"
	echo "peak RSS is one run's; its CPU time is both runs' (and the bash that starts them)."
fi
TWO=
for i in "${!CLIST[@]}"; do [ "${CLIST[$i]}" = 2 ] && [ -z "$TWO" ] && TWO=$i; done
if [ -n "$PAIRED" ] && [ -n "$TWO" ]; then
	# per round: (the pair's time / 2) / the --cores 2 run's time = the 2-core row's paired
	# speed-up over the pair's, round by round: 1.00 means as fast as two separate processes
	echo "--cores 2 against that ceiling: $(bench_paired "$PAIRED" "$TWO" 0.5) (the median over the rounds of half"
	echo "the time of the two --cores 1 runs at once / the --cores 2 run's time; 1.00: --cores 2 does"
	echo "one run's work as fast as this machine runs two independent ones)."
	# where the 2-core run's time goes, from the CPU medians: the machine's own cost of two
	# busy CPUs (each of two runs at once against one alone), what the 2-core run spends
	# beyond that, and the CPUs it kept busy (its CPU time / its wall time)
	awk -v one="${BR_CPU[$ONE]}" -v pair="${BR_CPU[$PAIRED]}" -v two="${BR_CPU[$TWO]}" \
		-v wall="${BR_MED[$TWO]}" 'BEGIN {
		each = pair / 2
		if (one <= 0 || each <= 0 || wall <= 0) { print "CPU time: n/a"; exit }
		printf "CPU time per run of the work (medians): --cores 1 alone %.3f s; each of the two --cores 1\n", one
		printf "runs at once %.3f s (%.2fx alone: what two busy CPUs cost each run here); --cores 2 %.3f s\n", each, each / one, two
		printf "(%.2fx one of the runs at once), with %.2f of 2 CPUs busy on average (its CPU time / its\n", two / each, two / wall
		printf "median wall time).\n" }'
fi
if [ "$(nproc)" -lt "$(printf '%s\n' ${CORES//,/ } | sort -n | tail -n 1)" ]; then
	echo "Note: rows with more cores than nproc ($(nproc)) oversubscribe the CPUs."
fi
bench_host_end
