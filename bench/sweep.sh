#!/usr/bin/env bash
# bench/sweep.sh - sipnab's throughput and memory against the size of the capture.
#
# usage: bench/sweep.sh BIN [--runs 3] [--calls 500,2000,8000,20000] [--dir /tmp/sipnab-sweep] [--keep-cache] [--huge-folios]
#
# For each call count N, a capture with one Call-ID and one RTP stream pair per call is generated
# once (cached in --dir) by
#     python3 bench/carrier.py --calls N --call-ids 0 --stream-pairs 0 --out DIR/carrier-cN-ids0-pairs0.pcap
# (107 * N packets), put in the page cache as a file read from disk (bench_cache_file in lib.sh;
# not with --keep-cache), then sipnab --cores 1 and --cores $(nproc) are timed like bench/scaling.sh:
# one discarded warm-up per row, then RUNS rounds of one timed run per row (interleaved), medians;
# wall time includes start-up (bench/runone.c: fork to wait4); peak RSS from wait4's rusage.
# Prints a Markdown table and the
# throughput spread from 2,000 to 20,000 calls: of the medians (the issue's figure), and, less
# moved by a slow spell of a shared machine, the median over the rounds of each round's spread
# and the spread of each row's fastest run.
# Exit status: 0 ok, 1 a run or a generation failed, 2 bad arguments or no C compiler for
# bench/runone.c.

usage() {
	cat >&2 <<'EOF'
usage: bench/sweep.sh BIN [--runs 3] [--calls 500,2000,8000,20000] [--dir /tmp/sipnab-sweep] [--keep-cache] [--huge-folios]
  BIN          sipnab binary (e.g. build/sipnab)
  --runs N     timed runs per row after one warm-up; medians are reported (default 3)
  --calls LIST comma-separated call counts; each capture has 107 packets per call (default 500,2000,8000,20000)
  --dir DIR    where the generated captures are cached (default /tmp/sipnab-sweep; 20000 calls = 525 MB)
  --keep-cache measure each capture as the page cache holds it, instead of reading it back
               from disk first (see bench_cache_file in bench/lib.sh)
  --huge-folios read each back through a mapping advised MADV_HUGEPAGE instead of with cat, as
               sipnab's own first read of a file leaves it (2 MiB folios from the start)
EOF
	exit 2
}

HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh" || exit 2
BENCH_ME=sweep.sh

RUNS=3
CALLS=500,2000,8000,20000
DIR=/tmp/sipnab-sweep
POS=()
while [ $# -gt 0 ]; do
	case $1 in
	--runs) [ $# -ge 2 ] || bench_die "--runs needs a value" 2; RUNS=$2; shift 2 ;;
	--runs=*) RUNS=${1#*=}; shift ;;
	--calls) [ $# -ge 2 ] || bench_die "--calls needs a value" 2; CALLS=$2; shift 2 ;;
	--calls=*) CALLS=${1#*=}; shift ;;
	--dir) [ $# -ge 2 ] || bench_die "--dir needs a value" 2; DIR=$2; shift 2 ;;
	--dir=*) DIR=${1#*=}; shift ;;
	--keep-cache) BENCH_KEEP_CACHE=1; shift ;;
	--huge-folios) BENCH_HUGE_FOLIOS=1; shift ;;
	-h | --help) usage ;;
	--) shift; POS+=("$@"); break ;;
	-*) echo "sweep.sh: unknown option '$1'" >&2; usage ;;
	*) POS+=("$1"); shift ;;
	esac
done
[ ${#POS[@]} -eq 1 ] || { echo "sweep.sh: expected BIN, got ${#POS[@]} argument(s)" >&2; usage; }
BIN=${POS[0]}
[ -x "$BIN" ] && [ ! -d "$BIN" ] || bench_die "BIN '$BIN' is not an executable file" 2
bench_is_uint "$RUNS" || bench_die "--runs '$RUNS' is not a positive integer" 2
bench_check_list --calls "$CALLS"
[ -n "$DIR" ] || bench_die "--dir is empty" 2
command -v python3 >/dev/null 2>&1 || bench_die "python3 is needed to run bench/carrier.py" 2
[ -r "$HERE/carrier.py" ] || bench_die "$HERE/carrier.py is missing" 2
mkdir -p "$DIR" || bench_die "cannot create --dir '$DIR'" 2

bench_init sweep.sh
NPROC=$(nproc)
CORESET=1
[ "$NPROC" -gt 1 ] && CORESET="1 $NPROC"

# Generate (once) the captures, in the order given.
declare -A FILE
GEN_NOTES=()
for n in ${CALLS//,/ }; do
	f=$DIR/carrier-c$n-ids0-pairs0.pcap
	FILE[$n]=$f
	if [ -s "$f" ]; then
		GEN_NOTES+=("calls $n: cached $f")
		continue
	fi
	echo "  generating $f ($((107 * n)) packets)" >&2
	BENCH_PARTIAL=$DIR/.carrier-c$n.$$.tmp
	python3 "$HERE/carrier.py" --calls "$n" --call-ids 0 --stream-pairs 0 --out "$BENCH_PARTIAL" \
		</dev/null >/dev/null 2>"$BENCH_TMP/gen.err" &
	BENCH_CHILD=$!
	wait "$BENCH_CHILD" || bench_die "carrier.py --calls $n failed: $(tail -c 300 "$BENCH_TMP/gen.err")" 1
	BENCH_CHILD=
	mv -f "$BENCH_PARTIAL" "$f" || bench_die "cannot move the capture to $f" 1
	BENCH_PARTIAL=
	GEN_NOTES+=("calls $n: generated $f: $(tail -n 1 "$BENCH_TMP/gen.err" | sed -e 's/^carrier.py: //' -e 's/ -> .*$//')")
done

echo "## sipnab throughput against capture size"
echo
bench_host
echo "- binary: $BIN ($("$BIN" -V 2>/dev/null | head -n 1))"
echo "- captures: python3 bench/carrier.py --calls N --call-ids 0 --stream-pairs 0 --out FILE"
echo "  (one Call-ID and one RTP stream pair per call, 107 packets per call), cached in $DIR:"
for g in "${GEN_NOTES[@]}"; do echo "    $g"; done
echo "- method: 1 discarded warm-up per row, then $RUNS rounds of one timed run per row (interleaved),"
echo "  wall time including start-up (bench/runone.c: CLOCK_MONOTONIC from just before fork() to just"
echo "  after wait4()), peak RSS from wait4()'s rusage; medians over the runs"
if [ "${BENCH_KEEP_CACHE:-0}" = 1 ]; then
	echo "- page cache: each capture as the page cache held it (--keep-cache)"
else
	if [ "${BENCH_HUGE_FOLIOS:-0}" = 1 ]; then
		echo "- page cache: each capture read back from disk before the warm-ups through a mapping (sync; dd iflag=nocache count=0; python3 mmap with MADV_HUGEPAGE, --huge-folios)"
	else
		echo "- page cache: each capture read back from disk before the warm-ups (sync; dd iflag=nocache count=0; cat)"
	fi
fi
echo "- commands (stdin </dev/null, stdout >/dev/null), for each FILE and C in {${CORESET// /,}}:"
echo "      runone OUTFILE $(bench_quote "$BIN") -N -I FILE --report=json --cores C > /dev/null"
echo

# Every capture is put in the page cache first (unless --keep-cache), then the rows are
# measured together (bench_run_rows: interleaved), so a slow spell of a shared machine falls
# on every capture size alike instead of on one (the spread between sizes is what this script
# measures).
ROWKEYS=()
HUGE=()
for n in ${CALLS//,/ }; do
	bench_cache_file "${FILE[$n]}"
	[ -z "$BENCH_CACHE_HUGE" ] || HUGE+=("$n calls: $BENCH_CACHE_HUGE")
	for c in $CORESET; do
		ROWKEYS+=("$n,$c")
		bench_row "calls $n --cores $c" "$n/c$c" "$RUNS" 1 "$BIN" -N -I "${FILE[$n]}" \
			--report=json --cores "$c"
	done
done
if [ ${#HUGE[@]} -gt 0 ]; then
	# how much of each capture the read-back brought in 2 MiB folios (see bench_cache_file)
	echo "- page cache, in 2 MiB folios after the read-back: $(IFS=';'; echo "${HUGE[*]}" | sed 's/;/; /g')"
	echo
fi
bench_row_warmed() { # I FILE: the one-core rows' reports count 107 packets per call
	local n=${ROWKEYS[$1]%,*} c=${ROWKEYS[$1]#*,}
	[ "$c" != 1 ] || bench_check_packets "$2" "$((107 * n))"
}
bench_run_rows
spread_of() { # PKTS_PER_S...: max / min - 1, in percent
	printf '%s\n' "$@" | awk 'NR == 1 || $1 > mx { mx = $1 } NR == 1 || $1 < mn { mn = $1 }
		END { printf "%.1f", (mx / mn - 1) * 100 }'
}
pps() { awk -v p="$1" -v s="$2" 'BEGIN { printf "%.3f", p / s }'; } # PACKETS SECONDS
ROWS=()
declare -A PPS
for i in "${!ROWKEYS[@]}"; do
	n=${ROWKEYS[$i]%,*} c=${ROWKEYS[$i]#*,}
	pk=$((107 * n))
	size=$(bench_filesize "${FILE[$n]}")
	PPS[$n,$c]=$(pps "$pk" "${BR_MED[$i]}")
	ROWS+=("| $n | $pk | $(bench_fmib "$size") | $c | $(bench_s "${BR_MED[$i]}") | $(bench_s "${BR_MIN[$i]}") | $(bench_s "${BR_MAX[$i]}") | $(bench_pps "$pk" "${BR_MED[$i]}") | $(bench_mib "${BR_RSS[$i]}") |")
done

echo "| calls | packets | file MiB | cores | median s | min s | max s | pkts/s | peak RSS MiB (median) |"
echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
printf '%s\n' "${ROWS[@]}"
echo
echo "pkts/s = packets / median s."
echo
echo "Throughput spread from 2,000 to 20,000 calls (max pkts/s / min pkts/s - 1, over the call counts in that range):"
for c in $CORESET; do
	vals=() used=()
	for n in ${CALLS//,/ }; do
		if [ "$n" -ge 2000 ] && [ "$n" -le 20000 ]; then
			vals+=("${PPS[$n,$c]}")
			used+=("$n")
		fi
	done
	if [ ${#vals[@]} -lt 2 ]; then
		echo "- cores $c: n/a (fewer than two call counts between 2,000 and 20,000)"
	else
		echo "- cores $c: $(spread_of "${vals[@]}") % (calls ${used[*]})"
	fi
done
# The same from the rounds: every round runs each row once, so its rows met the machine in
# about the same state; and from each row's fastest run.
RSPREAD=()
for c in $CORESET; do
	idx=() pk=()
	for i in "${!ROWKEYS[@]}"; do
		n=${ROWKEYS[$i]%,*}
		if [ "${ROWKEYS[$i]#*,}" = "$c" ] && [ "$n" -ge 2000 ] && [ "$n" -le 20000 ]; then
			idx+=("$i")
			pk+=("$((107 * n))")
		fi
	done
	[ ${#idx[@]} -ge 2 ] || continue
	spreads=() fastest=()
	for ((r = 1; r <= RUNS; r++)); do
		vals=()
		for k in "${!idx[@]}"; do
			w=${BR_WALL[${idx[$k]},$r]:-}
			[ -n "$w" ] || continue 2 # a failed run: no spread for this round
			vals+=("$(pps "${pk[$k]}" "$w")")
		done
		spreads+=("$(spread_of "${vals[@]}")")
	done
	for k in "${!idx[@]}"; do
		fastest+=("$(pps "${pk[$k]}" "${BR_MIN[${idx[$k]}]}")")
	done
	if [ ${#spreads[@]} -gt 0 ]; then
		read -r med _ _ <<<"$(bench_stats "${spreads[@]}")"
		med="$(awk -v x="$med" 'BEGIN { printf "%.1f", x }') % (median of ${#spreads[@]} rounds)"
	else
		med="n/a (no round without a failed run)"
	fi
	RSPREAD+=("- cores $c: per round $med; fastest runs $(spread_of "${fastest[@]}") %")
done
if [ ${#RSPREAD[@]} -gt 0 ]; then
	echo
	echo "The same, per round (the median over the rounds of each round's spread) and from each row's fastest run:"
	printf '%s\n' "${RSPREAD[@]}"
fi
# What the spread comes from: a run's time as a fixed part (the process's start and exit,
# the threads' and buffers' set-up: what a capture of any size pays) plus a part per packet,
# fitted to the rows' medians by least squares of the relative error (weights 1 / median^2),
# so that the small captures count as much as the large. A fixed part lowers a small
# capture's throughput only: it sets a floor under the spread however well the rest scales.
FITS=()
for c in $CORESET; do
	pts=()
	for i in "${!ROWKEYS[@]}"; do
		[ "${ROWKEYS[$i]#*,}" = "$c" ] || continue
		pts+=("$((107 * ${ROWKEYS[$i]%,*})) ${BR_MED[$i]}")
	done
	[ ${#pts[@]} -ge 2 ] || continue
	FITS+=("$(printf '%s\n' "${pts[@]}" | awk -v c="$c" '
		$2 > 0 { n++; x[n] = $1; y[n] = $2; w = 1 / ($2 * $2)
			sw += w; sx += w * $1; sy += w * $2; sxx += w * $1 * $1; sxy += w * $1 * $2
			if (n == 1 || $1 < lo) { lo = $1 } if (n == 1 || $1 > hi) { hi = $1 } }
		END {
			d = sw * sxx - sx * sx
			if (n < 2 || d <= 0 || hi < 2 * lo) {
				# sizes this close leave the fit to the noise of the runs
				printf "- cores %s: n/a (capture sizes less than twice apart)", c
				exit
			}
			v = (sw * sxy - sx * sy) / d
			f = (sy - v * sx) / sw
			printf "- cores %s: %.1f ms + %.1f ns per packet; the fixed part is", c, f * 1e3, v * 1e9
			for (i = 1; i <= n; i++) {
				printf "%s %.0f %% of the median at %d packets (the fit: %+.0f %%)", (i > 1 ? "," : ""),
					100 * f / y[i], x[i], 100 * ((f + v * x[i]) / y[i] - 1)
			}
		}')")
done
if [ ${#FITS[@]} -gt 0 ]; then
	# the part of F that no program escapes here: a process that does nothing, timed the same way
	walls=()
	for ((r = 1; r <= (RUNS > 5 ? RUNS : 5); r++)); do
		bench_once /dev/null /dev/null true
		[ "$RUN_RC" -eq 0 ] && walls+=("$RUN_WALL")
	done
	echo
	echo "Median seconds as a fixed part plus a part per packet (least squares of the relative error"
	echo "over the rows; a fixed part lowers a small capture's pkts/s only, and so widens the spread):"
	printf '%s\n' "${FITS[@]}"
	if [ ${#walls[@]} -gt 0 ]; then
		read -r med mn mx <<<"$(bench_stats "${walls[@]}")"
		echo "- a process that does nothing (runone OUTFILE true), the floor under the fixed part:" \
			"$(awk -v m="$med" -v a="$mn" -v b="$mx" 'BEGIN { printf "%.1f ms (%.1f-%.1f)", m * 1e3, a * 1e3, b * 1e3 }')," \
			"median of ${#walls[@]} runs"
	fi
fi
bench_host_end
