# bench/lib.sh - helpers shared by bench/scaling.sh, bench/compare.sh, bench/sweep.sh and bench/ab.sh.
# Sourced, never run. Needs bash >= 5 (EPOCHREALTIME) and a C compiler (cc), which builds
# bench/runone.c, the program that runs and measures each command, into the script's temp
# directory.
#
# Method of every measurement (bench_row, bench_run_rows):
#   * the capture is first put in the page cache as read() leaves it (bench_cache_file);
#   * one discarded warm-up run per row (faults in the binary and its libraries),
#   * then rounds of one timed run per row, interleaved (run r of every row before run r+1 of
#     any), never two at once, so a slow spell of a shared machine falls on every row alike;
#     odd rounds take the rows in order, even rounds in reverse, so no row always runs right
#     after the same one;
#   * each run: `runone OUTFILE COMMAND` with stdin </dev/null, stdout to /dev/null (the
#     warm-up's stdout is kept for a sanity check), stderr to a log file; runone writes its
#     measurements to its own file, so they never mix with the program's stderr;
#   * wall seconds = runone's CLOCK_MONOTONIC just before fork() and just after wait4(): the
#     program's whole life including its exec, start-up and exit, and nothing of the measuring
#     program's own start-up. (Until 2026-12-01 the scripts timed GNU time, /usr/bin/time,
#     from the shell: its own exec and fork, 2-4 ms on the development VM, were in every run.)
#     The shell's EPOCHREALTIME around runone is logged for cross-checking (raw.txt);
#   * peak RSS = ru_maxrss of wait4() (KiB: the program's, or the largest of the processes it
#     waited for);
#   * CPU seconds = ru_utime + ru_stime of wait4(), to the microsecond: the program's, and
#     those of every process it waited for;
#   * median, min and max over a row's timed runs;
#   * a paired ratio of two rows (bench_paired): the median, over the rounds both ran in, of
#     the ratio of their two runs of that round. Each pair ran seconds apart, so it cancels a
#     machine whose speed drifts from minute to minute (a shared VM: a busy loop alone has
#     taken from 0.36 s to 0.64 s within one hour here), which a ratio of medians does not.

export LC_ALL=C
BENCH_LIB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BENCH_RUNONE= # bench/runone.c, built by bench_init
BENCH_CHILD=
BENCH_TMP=
BENCH_RAW=   # file collecting one line per run: label run wall_s outer_s rss_kib rc cpu_s
BENCH_PARTIAL= # a file being written (e.g. a capture being generated), removed if interrupted

bench_die() { # MESSAGE [CODE]
	echo "${BENCH_ME:-bench}: $1" >&2
	exit "${2:-1}"
}

bench_require_bash() {
	[ -n "${EPOCHREALTIME:-}" ] || bench_die "needs bash >= 5 (EPOCHREALTIME)" 2
}

bench_require_cc() {
	command -v "${CC:-cc}" >/dev/null 2>&1 ||
		bench_die "no C compiler (${CC:-cc}) to build bench/runone.c (Debian package build-essential)" 2
}

# Build bench/runone.c into the temp directory: BENCH_RUNONE.
bench_build_runone() {
	BENCH_RUNONE=$BENCH_TMP/runone
	"${CC:-cc}" -O2 -o "$BENCH_RUNONE" "$BENCH_LIB_DIR/runone.c" 2>"$BENCH_TMP/runone.cc.err" ||
		bench_die "cannot build bench/runone.c: $(tr '\n' ' ' <"$BENCH_TMP/runone.cc.err")" 2
}

# Kill the measured process (runone and its child) if we are interrupted, remove temp files.
bench_kill_child() {
	if [ -n "$BENCH_CHILD" ]; then
		# children of runone (the measured program), by parent pid, then runone itself
		pkill -TERM -P "$BENCH_CHILD" 2>/dev/null
		kill -TERM "$BENCH_CHILD" 2>/dev/null
		sleep 0.2
		pkill -KILL -P "$BENCH_CHILD" 2>/dev/null
		kill -KILL "$BENCH_CHILD" 2>/dev/null
		wait "$BENCH_CHILD" 2>/dev/null
		BENCH_CHILD=
	fi
}

bench_cleanup() {
	bench_kill_child
	[ -n "$BENCH_PARTIAL" ] && rm -f "$BENCH_PARTIAL"
	BENCH_PARTIAL=
	[ -n "$BENCH_TMP" ] && [ -d "$BENCH_TMP" ] && rm -rf "$BENCH_TMP"
	BENCH_TMP=
}

bench_init() { # NAME
	BENCH_ME=$1
	bench_require_bash
	bench_require_cc
	BENCH_TMP=$(mktemp -d "${TMPDIR:-/tmp}/sipnab-bench.XXXXXX") || bench_die "mktemp failed"
	BENCH_RAW=$BENCH_TMP/raw.txt
	: >"$BENCH_RAW"
	trap bench_cleanup EXIT
	trap 'printf '"'"'\n%s: interrupted\n'"'"' "$BENCH_ME" >&2; bench_cleanup; trap - INT; kill -INT $$' INT
	trap 'bench_cleanup; exit 143' TERM
	trap 'bench_cleanup; exit 129' HUP
	bench_build_runone
}

bench_is_uint() { case $1 in '' | *[!0-9]*) return 1 ;; *) [ "$1" -gt 0 ] 2>/dev/null ;; esac; }

bench_check_list() { # OPTION VALUE: comma-separated positive integers
	local v
	[ -n "$2" ] || bench_die "$1 needs a comma-separated list of positive integers" 2
	for v in ${2//,/ }; do
		bench_is_uint "$v" || bench_die "$1: '$v' is not a positive integer (in '$2')" 2
	done
}

# Quote a command for display so it can be pasted back into a shell.
bench_quote() {
	local a out=
	for a in "$@"; do
		case $a in
		'' | *[!A-Za-z0-9_./:=,+@%-]*) out+=" '${a//\'/\'\\\'\'}'" ;;
		*) out+=" $a" ;;
		esac
	done
	printf '%s\n' "${out# }"
}

# bench_once STDOUT_FILE ERR_FILE CMD...: one run under runone. Sets RUN_WALL (s, runone's),
# RUN_OUTER (s, the shell's EPOCHREALTIME around runone, for cross-checking), RUN_RSS (KiB),
# RUN_CPU (s) and RUN_RC (the command's exit status; 127 when it could not be run).
bench_once() {
	local out=$1 err=$2 tf=$BENCH_TMP/run.out t0 t1 st
	shift 2
	rm -f "$tf"
	t0=${EPOCHREALTIME/[.,]/}
	"$BENCH_RUNONE" "$tf" "$@" </dev/null >"$out" 2>"$err" &
	BENCH_CHILD=$!
	wait "$BENCH_CHILD"
	RUN_RC=$?
	t1=${EPOCHREALTIME/[.,]/}
	BENCH_CHILD=
	RUN_OUTER=$(awk -v d=$((t1 - t0)) 'BEGIN { printf "%.6f", d / 1e6 }')
	RUN_WALL=$RUN_OUTER RUN_RSS=0 RUN_CPU=0
	if [ -s "$tf" ]; then
		read -r RUN_WALL RUN_RSS RUN_CPU st <"$tf"
	fi
	bench_is_uint "$RUN_RSS" || RUN_RSS=0
}

# The rows a script measures: bench_row LABEL SHORT RUNS FATAL CMD... adds one (SHORT names it
# in the progress lines; a row with fewer RUNS than the others sits out the later rounds;
# FATAL 1: its failure ends the script with status 1, 0: it is reported and the row dropped).
BR_LABEL=() BR_SHORT=() BR_RUNS=() BR_FATAL=() BR_CMD=()
bench_row() {
	BR_LABEL+=("$1")
	BR_SHORT+=("$2")
	BR_RUNS+=("$3")
	BR_FATAL+=("$4")
	shift 4
	BR_CMD+=("$(bench_quote "$@")")
}

# One run of row I (bench_once with the row's command).
bench_row_once() { # I OUT ERR
	local out=$2 err=$3
	eval "set -- ${BR_CMD[$1]}"
	bench_once "$out" "$err" "$@"
}

# bench_run_rows: a warm-up per row, then the interleaved rounds (see the top of this file).
# Sets for row I: BR_MED[I] BR_MIN[I] BR_MAX[I] (s), BR_RSS[I] (median, KiB), BR_CPU[I] (median
# CPU s), BR_WALL[I,R]
# (s, round R, for bench_paired), or BR_FAIL[I]
# (why it failed, when it was not fatal). After a row's warm-up succeeds, a function
# bench_row_warmed, when the script defines one, is called with I and the file holding the
# warm-up's stdout (a sipnab report can weigh 50 MB), which is removed afterwards.
bench_run_rows() {
	local i r maxr=0 msg order
	local -a walls=() rss=() cpus=()
	BR_MED=() BR_MIN=() BR_MAX=() BR_RSS=() BR_CPU=() BR_FAIL=()
	declare -gA BR_WALL=()
	for i in "${!BR_LABEL[@]}"; do
		[ "${BR_RUNS[$i]}" -gt "$maxr" ] && maxr=${BR_RUNS[$i]}
		printf '  %-28s warm-up\n' "${BR_LABEL[$i]}" >&2
		bench_row_once "$i" "$BENCH_TMP/warm.$i.out" "$BENCH_TMP/warm.$i.err"
		echo "${BR_LABEL[$i]} warmup $RUN_WALL $RUN_OUTER $RUN_RSS $RUN_RC $RUN_CPU" >>"$BENCH_RAW"
		if [ "$RUN_RC" -ne 0 ]; then
			msg="exit status $RUN_RC; stderr: $(tail -c 300 "$BENCH_TMP/warm.$i.err" | tr '\n' ' ')"
			[ "${BR_FATAL[$i]}" = 1 ] && bench_die "${BR_LABEL[$i]} failed: $msg" 1
			BR_FAIL[i]=$msg
			echo "warning: ${BR_LABEL[$i]} failed: $msg" >&2
		elif declare -F bench_row_warmed >/dev/null; then
			bench_row_warmed "$i" "$BENCH_TMP/warm.$i.out"
		fi
		rm -f "$BENCH_TMP/warm.$i.out"
	done
	for ((r = 1; r <= maxr; r++)); do
		printf '  run %d:' "$r" >&2
		order=${!BR_LABEL[*]}
		((r % 2)) || order=$(printf '%s\n' $order | tac | tr '\n' ' ')
		for i in $order; do
			[ -z "${BR_FAIL[$i]:-}" ] && [ "$r" -le "${BR_RUNS[$i]}" ] || continue
			bench_row_once "$i" /dev/null "$BENCH_TMP/run.$i.err"
			echo "${BR_LABEL[$i]} $r $RUN_WALL $RUN_OUTER $RUN_RSS $RUN_RC $RUN_CPU" >>"$BENCH_RAW"
			if [ "$RUN_RC" -ne 0 ]; then
				msg="run $r: exit status $RUN_RC; stderr: $(tail -c 300 "$BENCH_TMP/run.$i.err" | tr '\n' ' ')"
				[ "${BR_FATAL[$i]}" = 1 ] && bench_die "${BR_LABEL[$i]} failed: $msg" 1
				BR_FAIL[i]=$msg
				printf ' (%s failed)' "${BR_LABEL[$i]}" >&2
				continue
			fi
			# to 0.1 ms: a run of a small capture takes a few ms, and tests recompute
			# the paired ratios from these lines
			printf ' %s %.4f' "${BR_SHORT[$i]}" "$RUN_WALL" >&2
			walls[i]+="$RUN_WALL "
			BR_WALL[$i,$r]=$RUN_WALL
			rss[i]+="$RUN_RSS "
			cpus[i]+="$RUN_CPU "
		done
		echo >&2
	done
	for i in "${!BR_LABEL[@]}"; do
		[ -z "${BR_FAIL[$i]:-}" ] || continue
		read -r BR_MED[i] BR_MIN[i] BR_MAX[i] <<<"$(bench_stats ${walls[$i]})"
		read -r BR_RSS[i] _ _ <<<"$(bench_stats ${rss[$i]})"
		read -r BR_CPU[i] _ _ <<<"$(bench_stats ${cpus[$i]})"
	done
}

# bench_paired A B [FACTOR]: the median over the rounds in which rows A and B both ran of
# (A's wall / B's wall) that round, times FACTOR (default 1), two decimals; n/a when they
# share no round.
bench_paired() {
	local r ratios=()
	for ((r = 1; ; r++)); do
		[ -n "${BR_WALL[$1,$r]:-}${BR_WALL[$2,$r]:-}" ] || break
		[ -n "${BR_WALL[$1,$r]:-}" ] && [ -n "${BR_WALL[$2,$r]:-}" ] || continue
		ratios+=("$(awk -v a="${BR_WALL[$1,$r]}" -v b="${BR_WALL[$2,$r]}" 'BEGIN { if (b > 0) printf "%.6f", a / b }')")
	done
	[ ${#ratios[@]} -gt 0 ] || { echo n/a; return; }
	read -r med _ _ <<<"$(bench_stats "${ratios[@]}")"
	awk -v x="$med" -v f="${3:-1}" 'BEGIN { printf "%.2f", x * f }'
}

# bench_stats V...: prints "median min max" (median of an even count = mean of the middle two).
bench_stats() {
	printf '%s\n' "$@" | sort -g | awk '
		{ v[NR] = $1 }
		END {
			if (NR == 0) { print "0 0 0"; exit }
			m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
			printf "%.6f %.6f %.6f\n", m, v[1], v[NR]
		}'
}

# Formatting helpers.
bench_s() { awk -v x="$1" 'BEGIN { printf "%.3f", x }'; }
bench_mib() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }            # KiB -> MiB
bench_fmib() { awk -v b="$1" 'BEGIN { printf "%.1f", b / 1048576 }'; }        # bytes -> MiB
bench_pps() { # PACKETS SECONDS -> integer with thousands separators
	awk -v p="$1" -v s="$2" 'BEGIN {
		if (s <= 0) { print "n/a"; exit }
		x = sprintf("%.0f", p / s); o = ""
		while (length(x) > 3) { o = "," substr(x, length(x) - 2) o; x = substr(x, 1, length(x) - 3) }
		print x o }'
}
bench_ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b <= 0) print "n/a"; else printf "%.2f", a / b }'; }

bench_filesize() { stat -c %s "$1" 2>/dev/null || wc -c <"$1"; }

# How many CPUs this machine really gives two busy threads at once: a python3 busy loop alone,
# then two at once; 2 * alone / the slower of the two. A VM can show 2 vCPUs yet run them on
# one core of its host for a while, and then no multi-core figure means anything.
bench_capacity() {
	local t0 t1 t2 alone both loop='n = 0
for i in range(3000000): n += i'
	command -v python3 >/dev/null 2>&1 || { echo "unknown (no python3)"; return; }
	t0=$EPOCHREALTIME
	python3 -c "$loop"
	t1=$EPOCHREALTIME
	python3 -c "$loop" &
	python3 -c "$loop"
	wait
	t2=$EPOCHREALTIME
	alone=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
	both=$(awk -v a="$t1" -v b="$t2" 'BEGIN { printf "%.3f", b - a }')
	awk -v a="$alone" -v b="$both" 'BEGIN { printf "%.2f CPUs (a busy loop alone %.3f s, two at once %.3f s)\n", 2 * a / b, a, b }'
}

# bench_cpustat: "TOTAL STEAL" from /proc/stat's cpu line, in clock ticks: all CPU time so far
# (user to steal) and the part of it the hypervisor gave to other guests (steal); empty where
# there is no /proc/stat.
bench_cpustat() {
	awk '/^cpu / { t = 0; for (i = 2; i <= 9; i++) t += $i; print t, $9; exit }' /proc/stat 2>/dev/null
}

# bench_steal START END: the steal share between two bench_cpustat readings, as a sentence.
# On a VM a vCPU that is runnable may still wait for the host: that time is counted as steal
# and is missing from every run it fell in.
bench_steal() { # "TOTAL STEAL" "TOTAL STEAL"
	awk -v a="$1" -v b="$2" 'BEGIN {
		split(a, x, " "); split(b, y, " ")
		if (x[1] == "" || y[1] == "" || y[1] <= x[1]) { print "unknown (no /proc/stat)"; exit }
		printf "%.1f %% of the CPUs'"'"' time (%d of %d ticks)\n", 100 * (y[2] - x[2]) / (y[1] - x[1]), y[2] - x[2], y[1] - x[1]
	}'
}

bench_host() {
	local model
	model=$(awk -F': *' '/^model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null)
	[ -n "$model" ] || model=$(awk -F': *' '/^(Hardware|cpu model|Model)/ { print $2; exit }' /proc/cpuinfo 2>/dev/null)
	echo "- host: $(uname -n 2>/dev/null), nproc $(nproc), CPU: ${model:-unknown}"
	echo "- kernel: $(uname -srm)"
	echo "- load average at start: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)"
	echo "- parallel capacity at start: $(bench_capacity)"
	echo "- date: $(date -u '+%Y-%m-%dT%H:%M:%SZ')"
	BENCH_CPUSTAT0=$(bench_cpustat)
}

# The page cache's file pages held in 2 MiB folios, in KiB (/proc/meminfo FileHugePages),
# empty where the kernel does not say.
bench_file_huge_kib() {
	awk '$1 == "FileHugePages:" { print $2 }' /proc/meminfo 2>/dev/null
}

# bench_cache_file FILE: put FILE in the page cache the way read() leaves a file read from
# disk, so every run of every script starts from the same state. How the cache holds a file
# decides what it costs to map: after read() (cat, cp) the kernel holds it in large folios
# (64 KiB and up, 2 MiB where memory allows) and maps a folio's pages together; a capture
# written a few KiB at a time (carrier.py, tcpdump) is held in small folios, and c5k held in
# 4 KiB and 16 KiB pieces cost sipnab --cores 1 up to a fifth more (BENCHMARKS.md). sipnab
# reading a file cold asks for 2 MiB folios (MADV_HUGEPAGE). read(),
# as libpcap and the peers use, costs the same either way. Steps: write it back (sync FILE),
# drop its cached pages (dd iflag=nocache count=0: posix_fadvise DONTNEED), read it back
# once (cat; with BENCH_HUGE_FOLIOS=1, the scripts' --huge-folios, through a mapping advised
# MADV_HUGEPAGE instead, as sipnab's own first read of a file leaves it: 2 MiB folios from the
# start, where cat's readahead leaves about the first 30 MiB in small ones, which a mapped
# reader pays for page by page). With BENCH_KEEP_CACHE=1 (the scripts' --keep-cache) the file is measured as the
# cache holds it. Sets BENCH_CACHE to what was done, for the method line, and
# BENCH_CACHE_HUGE to how much of the file came back in 2 MiB folios ("N of its M MiB", N "?"
# when the system-wide count fell meanwhile; empty where the kernel does not say).
bench_cache_file() { # FILE
	local left huge0 huge1
	if [ "${BENCH_KEEP_CACHE:-0}" = 1 ]; then
		BENCH_CACHE="as the page cache held it (--keep-cache)"
		return 0
	fi
	sync "$1" 2>/dev/null
	if ! dd if="$1" iflag=nocache count=0 status=none 2>/dev/null; then
		BENCH_CACHE="as the page cache held it (dd iflag=nocache failed)"
		echo "warning: could not drop $1 from the page cache; measuring it as cached" >&2
		return 0
	fi
	left=
	if command -v fincore >/dev/null 2>&1; then
		left=$(fincore -n -o PAGES "$1" 2>/dev/null | tr -d ' ')
	fi
	huge0=$(bench_file_huge_kib)
	if [ "${BENCH_HUGE_FOLIOS:-0}" = 1 ]; then
		# read through a mapping advised MADV_HUGEPAGE, as sipnab reads a file from disk
		# itself: readahead then asks for 2 MiB folios from the file's start on
		python3 - "$1" <<'PY' || bench_die "cannot read $1 through a mapping (python3 3.8+ on Linux)" 1
import mmap, os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
size = os.fstat(fd).st_size
if size:
    m = mmap.mmap(fd, size, prot=mmap.PROT_READ)
    m.madvise(mmap.MADV_HUGEPAGE)
    m.madvise(mmap.MADV_SEQUENTIAL)
    total = 0
    for off in range(0, size, 4096):
        total += m[off]
    m.close()
os.close(fd)
PY
		BENCH_CACHE="read back from disk through a mapping before the runs (sync; dd iflag=nocache count=0; python3 mmap with MADV_HUGEPAGE, --huge-folios)"
	else
		cat "$1" >/dev/null || bench_die "cannot read $1" 1
		BENCH_CACHE="read back from disk before the runs (sync; dd iflag=nocache count=0; cat)"
	fi
	huge1=$(bench_file_huge_kib)
	BENCH_CACHE_HUGE=
	if [ -n "$huge0" ] && [ -n "$huge1" ]; then
		# whether cat got 2 MiB folios depends on how fragmented free memory is. The count
		# is the whole system's: when other files left the cache meanwhile (another
		# program's, or tests run in parallel) it may fall, and this file's share is
		# unknown ("?")
		if [ "$huge1" -ge "$huge0" ]; then
			BENCH_CACHE_HUGE="$(( (huge1 - huge0) / 1024 ))"
		else
			BENCH_CACHE_HUGE="?"
		fi
		BENCH_CACHE_HUGE+=" of its $(( $(stat -c %s "$1") >> 20 )) MiB"
		BENCH_CACHE+="; $BENCH_CACHE_HUGE came back in 2 MiB folios"
	fi
	if [ -n "$left" ] && [ "$left" != 0 ]; then
		BENCH_CACHE+="; $left pages could not be dropped"
		echo "warning: $left pages of $1 stayed in the page cache when it was dropped" >&2
	fi
}

# Warn when sipnab's JSON report counts a different number of packets than PACKETS.
bench_check_packets() { # JSON_FILE PACKETS
	command -v python3 >/dev/null 2>&1 || return 0
	local n
	n=$(python3 -c 'import json,sys
try: print(json.load(open(sys.argv[1]))["capture"]["packets"])
except Exception as e: print("?")' "$1" 2>/dev/null)
	if [ "$n" = "?" ] || [ -z "$n" ]; then
		echo "warning: could not read capture.packets from the sipnab JSON report" >&2
	elif [ "$n" != "$2" ]; then
		echo "warning: sipnab counted $n packets but PACKETS is $2; pkts/s uses $2" >&2
	fi
}

bench_host_end() {
	echo "- load average at end: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null) (other processes make runs noisy: compare min and max)"
	echo "- steal time from start to end (the hypervisor running other guests): $(bench_steal "${BENCH_CPUSTAT0:-}" "$(bench_cpustat)")"
	echo "- parallel capacity at end: $(bench_capacity)"
}
