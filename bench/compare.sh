#!/usr/bin/env bash
# bench/compare.sh - sipnab against its peers (sngrep, sipgrep, tshark, voipmonitor) and
# libpcap's bare read loop (bench/floor.c) on the same capture, by the same method.
#
# usage: bench/compare.sh BIN PCAP PACKETS [--runs 5] [--tshark-runs 3] [--keep-cache] [--huge-folios]
#
# Every tool: one discarded warm-up run, then RUNS rounds of one timed run per tool, interleaved
# (tshark: its first --tshark-runs rounds); stdin </dev/null, stdout >/dev/null; wall seconds
# include start-up (bench/runone.c: fork to wait4); peak RSS from wait4's rusage. PCAP is first
# put in the page cache as a file read from disk (bench_cache_file in lib.sh) unless
# --keep-cache. A peer that is not installed or fails is reported as such.
# Exit status: 0 ok, 1 sipnab failed, 2 bad arguments or no C compiler for bench/runone.c.

usage() {
	cat >&2 <<'EOF'
usage: bench/compare.sh BIN PCAP PACKETS [--runs 5] [--tshark-runs 3] [--keep-cache] [--huge-folios]
  BIN      sipnab binary (e.g. build/sipnab); bench/floor.c is compiled against BIN's directory
  PCAP     capture file (e.g. /tmp/c5k.pcap from: python3 bench/carrier.py --calls 5000 --out /tmp/c5k.pcap)
  PACKETS  packets in PCAP (107 per carrier.py call: 535000 for --calls 5000)
  --runs N         timed runs per tool after one warm-up; medians are reported (default 5)
  --tshark-runs N  timed runs for tshark, which is slow (default 3, or --runs if smaller)
  --keep-cache     measure PCAP as the page cache holds it, instead of reading it back from
                   disk first (see bench_cache_file in bench/lib.sh)
  --huge-folios    read it back through a mapping advised MADV_HUGEPAGE instead of with cat,
                   as sipnab's own first read of a file leaves it (2 MiB folios from the start)
EOF
	exit 2
}

HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh" || exit 2
BENCH_ME=compare.sh

RUNS=5
TRUNS=
POS=()
while [ $# -gt 0 ]; do
	case $1 in
	--runs) [ $# -ge 2 ] || bench_die "--runs needs a value" 2; RUNS=$2; shift 2 ;;
	--runs=*) RUNS=${1#*=}; shift ;;
	--tshark-runs) [ $# -ge 2 ] || bench_die "--tshark-runs needs a value" 2; TRUNS=$2; shift 2 ;;
	--tshark-runs=*) TRUNS=${1#*=}; shift ;;
	--keep-cache) BENCH_KEEP_CACHE=1; shift ;;
	--huge-folios) BENCH_HUGE_FOLIOS=1; shift ;;
	-h | --help) usage ;;
	--) shift; POS+=("$@"); break ;;
	-*) echo "compare.sh: unknown option '$1'" >&2; usage ;;
	*) POS+=("$1"); shift ;;
	esac
done
[ ${#POS[@]} -eq 3 ] || { echo "compare.sh: expected BIN PCAP PACKETS, got ${#POS[@]} argument(s)" >&2; usage; }
BIN=${POS[0]} PCAP=${POS[1]} PACKETS=${POS[2]}
[ -x "$BIN" ] && [ ! -d "$BIN" ] || bench_die "BIN '$BIN' is not an executable file" 2
[ -r "$PCAP" ] && [ -f "$PCAP" ] || bench_die "PCAP '$PCAP' is not a readable file" 2
bench_is_uint "$PACKETS" || bench_die "PACKETS '$PACKETS' is not a positive integer" 2
bench_is_uint "$RUNS" || bench_die "--runs '$RUNS' is not a positive integer" 2
if [ -z "$TRUNS" ]; then
	TRUNS=3
	[ "$RUNS" -lt "$TRUNS" ] && TRUNS=$RUNS
fi
bench_is_uint "$TRUNS" || bench_die "--tshark-runs '$TRUNS' is not a positive integer" 2

bench_init compare.sh
bench_cache_file "$PCAP"
NPROC=$(nproc)

# libpcap's floor: bench/floor.c compiled once into the temp dir. floor.c includes "config.h",
# found in BIN's build directory; if there is none, an empty one is supplied.
FLOOR=$BENCH_TMP/floor
CC=${CC:-cc}
FLOOR_INC=$(cd "$(dirname "$BIN")" && pwd)
[ -f "$FLOOR_INC/config.h" ] || { FLOOR_INC=$BENCH_TMP/inc; mkdir -p "$FLOOR_INC"; : >"$FLOOR_INC/config.h"; }
FLOOR_CC=("$CC" -O2 -I"$FLOOR_INC" "$HERE/floor.c" -o "$FLOOR" -lpcap)
if ! "${FLOOR_CC[@]}" 2>"$BENCH_TMP/floor.cc.err"; then
	echo "warning: could not compile bench/floor.c ($(head -c 300 "$BENCH_TMP/floor.cc.err" | tr '\n' ' ')); the floor row is skipped" >&2
	FLOOR=
fi

# Tool table: label | runs | what it reconstructs | command (as an array, built below).
LABELS=() WHATS=() NRUNS=() CMDS=() ENVS=() NOTES=()
add() { # LABEL WHAT RUNS ENV CMD...
	LABELS+=("$1"); WHATS+=("$2"); NRUNS+=("$3"); ENVS+=("$4")
	shift 4
	CMDS+=("$(bench_quote "$@")")
}
[ -n "$FLOOR" ] && add "libpcap floor (bench/floor.c)" "nothing: pcap_next_ex loop touching one byte per packet" "$RUNS" "" "$FLOOR" "$PCAP"
if command -v sngrep >/dev/null 2>&1; then
	# sngrep -N has no terminal: stdin from /dev/null and TERM=dumb. It reads the whole file and
	# exits 0; -q keeps it from printing the dialog count. Its main loop sleeps 500 ms between
	# checks that the capture thread has finished, so its wall time is quantised to ~0.5 s. Its default capture.limit is 20000
	# dialogs (sngrep -D), more than carrier.py's --calls 5000 produces.
	NOTES+=("sngrep -N: its main loop sleeps 500 ms between checks that the file is read, so its time is quantised to ~0.5 s (0.5 s for a one-call capture)")
	add "sngrep $(sngrep -V 2>/dev/null | awk 'NR == 1 { print $3 }')" "SIP dialogs, no RTP stats" "$RUNS" "TERM=dumb" sngrep -I "$PCAP" -r -N -q
else
	NOTES+=("sngrep: not installed, skipped")
fi
if command -v sipgrep >/dev/null 2>&1; then
	add "sipgrep $(sipgrep -V 2>&1 | awk '/V[0-9]/ { sub(/^V/, "", $2); print $2; exit }')" "SIP message matching only" "$RUNS" "" sipgrep -I "$PCAP" -C -G
else
	NOTES+=("sipgrep: not installed, skipped")
fi
if command -v tshark >/dev/null 2>&1; then
	add "tshark $(tshark -v 2>/dev/null | awk 'NR == 1 { print $3 }')" "RTP stream statistics" "$TRUNS" "" tshark -r "$PCAP" -q -z rtp,streams
else
	NOTES+=("tshark: not installed, skipped")
fi
if command -v voipmonitor >/dev/null 2>&1; then
	# Offline mode: -r FILE, -k (do not daemonize); no config file, no database (not verified
	# on this project's machines: no Debian package exists).
	add "voipmonitor" "SIP calls, RTP quality (CDR)" "$RUNS" "" voipmonitor -k --config-file=/dev/null -r "$PCAP"
else
	NOTES+=("voipmonitor: not installed (no Debian package), skipped")
fi
SIPNAB_WHAT="SIP dialogs, transactions, calls, RTP streams with jitter/loss/MOS, report"
add "sipnab --cores 1" "$SIPNAB_WHAT" "$RUNS" "" "$BIN" -N -I "$PCAP" --report=json --cores 1
add "sipnab --cores $NPROC (all)" "$SIPNAB_WHAT" "$RUNS" "" "$BIN" -N -I "$PCAP" --report=json --cores "$NPROC"
SIPNAB1=$((${#LABELS[@]} - 2))

SIZE=$(bench_filesize "$PCAP")
echo "## sipnab against its peers"
echo
bench_host
echo "- file: $PCAP, $SIZE bytes ($(bench_fmib "$SIZE") MiB), $PACKETS packets"
echo "- method: 1 discarded warm-up per tool, then $RUNS rounds of one timed run per tool (interleaved;"
echo "  tshark: the first $TRUNS rounds), wall time including start-up (bench/runone.c: CLOCK_MONOTONIC"
echo "  from just before fork() to just after wait4()), peak RSS from wait4()'s rusage; medians over"
echo "  the runs"
echo "- page cache: $BENCH_CACHE"
[ -n "$FLOOR" ] && echo "- floor built with: $(bench_quote "${FLOOR_CC[@]}")"
echo "- commands (each as: runone OUTFILE [env ENV] COMMAND </dev/null >/dev/null):"
for i in "${!LABELS[@]}"; do
	echo "      ${ENVS[$i]:+${ENVS[$i]} }${CMDS[$i]}"
done
for n in "${NOTES[@]}"; do echo "- $n"; done
echo

# Measured together (bench_run_rows: interleaved; tshark only in its first TRUNS rounds), so a
# slow spell of a shared machine falls on every tool alike: the ratios to sipnab --cores 1 are
# what this measures. A peer that fails is reported; sipnab failing ends the script.
for i in "${!LABELS[@]}"; do
	eval "set -- ${CMDS[$i]}"
	if [ -n "${ENVS[$i]}" ]; then set -- env "${ENVS[$i]}" "$@"; fi
	fatal=0
	[ "$i" -ge "$SIPNAB1" ] && fatal=1
	bench_row "${LABELS[$i]}" "${LABELS[$i]%% *}" "${NRUNS[$i]}" "$fatal" "$@"
done
bench_row_warmed() { [ "$1" != "$SIPNAB1" ] || bench_check_packets "$2" "$PACKETS"; }
bench_run_rows
S1=${BR_MED[$SIPNAB1]}
echo "| tool | what it reconstructs | runs | median s | pkts/s | tool s / sipnab(1 core) s | paired ratio | peak RSS MiB |"
echo "|---|---|---:|---:|---:|---:|---:|---:|"
for i in "${!LABELS[@]}"; do
	if [ -n "${BR_FAIL[$i]:-}" ]; then
		echo "| ${LABELS[$i]} | ${WHATS[$i]} | ${NRUNS[$i]} | failed | | | | |"
	else
		echo "| ${LABELS[$i]} | ${WHATS[$i]} | ${NRUNS[$i]} | $(bench_s "${BR_MED[$i]}") | $(bench_pps "$PACKETS" "${BR_MED[$i]}") | $(bench_ratio "${BR_MED[$i]}" "$S1") | $(bench_paired "$i" "$SIPNAB1") | $(bench_mib "${BR_RSS[$i]}") |"
	fi
done
echo
echo "pkts/s = PACKETS / median s. Ratio = this tool's median s / sipnab --cores 1 median s:"
echo "how many times faster sipnab on one core is (below 1: the tool is faster). Paired ratio = the"
echo "median over the rounds both ran in of (this tool's run / sipnab --cores 1's run in that round)."
for i in "${!BR_FAIL[@]}"; do echo "- ${LABELS[$i]} failed: ${BR_FAIL[$i]}"; done
bench_host_end
