#!/bin/sh
# The benchmark scripts of bench/ run as bench/README.md says, on a small capture, and print
# what it promises: the method (page cache, interleaving), one table row per core count, tool,
# capture or binary (ab.sh), the ratio to sipnab --cores 1, the spread line and the paired
# B / A. Nothing here is timed: the numbers are whatever the machine gives; only the shape
# and the exit statuses are checked.
# Exit 0 pass, 1 fail, 77 skip.
. "$(dirname "$0")/lib.sh"
B="$SIPNAB_SRCDIR/bench"
for tool in python3 bash "${CC:-cc}"; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "SKIP: $tool not found"
		exit 77
	fi
done

python3 "$B/carrier.py" --calls 20 --out "$TMPD/c20.pcap" 2>/dev/null || fail "carrier.py failed"

# bench/pages.c, the page costs behind BENCHMARKS.md's huge-page sections: nine lines with a
# time each, on a file and 4 MiB of anonymous memory (six on a kernel without
# MADV_POPULATE_WRITE, which it names); a file it cannot read is an error
"${CC:-cc}" -O2 -o "$TMPD/pages" "$B/pages.c" || fail "pages.c does not build"
"$TMPD/pages" "$TMPD/c20.pcap" 4 >"$TMPD/pages.out" 2>"$TMPD/pages.stderr"
expect_eq "pages: exit status" "$?" 0
want=9
grep -q MADV_POPULATE_WRITE "$TMPD/pages.stderr" && want=6
expect_eq "pages: measurements" "$(grep -cE '^(anon|file), .* [0-9]+\.[0-9]+ ms \([0-9.]+ us per 4 KiB\)$' "$TMPD/pages.out")" "$want"
[ "$want" = 6 ] || expect_eq "pages: populated twice" "$(grep -c '^anon, populated, [12][sn][td] ' "$TMPD/pages.out")" 2
"$TMPD/pages" "$TMPD/missing.pcap" >/dev/null 2>"$TMPD/pages.err"
expect_eq "pages, missing file: exit status" "$?" 1

# bench/runone.c, which every script runs each command through: its line, WALL_S MAXRSS_KIB
# CPU_S STATUS, the command's exit status passed on, 128 + a signal, 127 when it cannot run
"${CC:-cc}" -O2 -o "$TMPD/runone" "$B/runone.c" || fail "runone.c does not build"
# a busy second of CPU (python3's loop) and 50 MiB touched: wall and CPU at least that much,
# CPU within the wall (one thread; the two clocks may differ by a few % on a VM), the peak RSS
# above 50 MiB
"$TMPD/runone" "$TMPD/ro" python3 -c '
import time
b = bytearray(50 << 20)
for i in range(0, len(b), 4096): b[i] = 1
t = time.process_time()
while time.process_time() - t < 0.3: pass'
expect_eq "runone: exit status" "$?" 0
expect_eq "runone: its line" "$(awk 'NF == 4 && $1 >= 0.3 && $3 >= 0.3 && $3 <= $1 * 1.05 + 0.01 && $2 > 51200 && $4 == 0 { print "ok" }' "$TMPD/ro")" ok
"$TMPD/runone" "$TMPD/ro" sh -c 'exit 3'
expect_eq "runone: the command's exit status" "$?,$(cut -d' ' -f4 "$TMPD/ro")" "3,3"
"$TMPD/runone" "$TMPD/ro" sh -c 'kill -TERM $$'
expect_eq "runone: killed by a signal" "$?,$(cut -d' ' -f4 "$TMPD/ro")" "143,143"
rm -f "$TMPD/ro"
"$TMPD/runone" "$TMPD/ro" "$TMPD/no-such-program" 2>"$TMPD/ro.err"
expect_eq "runone: a command that cannot run" "$?,$(test -e "$TMPD/ro" && echo line || echo none),$(grep -c 'cannot run' "$TMPD/ro.err")" "127,none,1"
# two programs under one shell: the CPU of both, the peak RSS of the larger
"$TMPD/runone" "$TMPD/ro" sh -c 'python3 -c "b = bytearray(60 << 20); b[::4096] = b\"\x01\" * len(b[::4096])" & python3 -c "b = bytearray(20 << 20); b[::4096] = b\"\x01\" * len(b[::4096])"; wait'
expect_eq "runone: a shell's waited-for children" "$(awk '$2 > 61440 && $2 < 81920 { print "ok" }' "$TMPD/ro")" ok

# rows FILE: the Markdown table rows of a script's output (header and rule excluded)
rows() {
	grep '^| ' "$1" | grep -v '^| cores \|^| tool \|^| calls \|^| binary \|^|---'
}

# bench_paired: the median of the per-round ratios (here 3, 1 and 2), not the ratio of the
# medians (1 / 1); n/a for rows that share no round (row 2 ran only in round 4)
expect_eq "lib.sh: bench_paired" "$(bash -c '. "$1/lib.sh"; declare -A BR_WALL=([0,1]=3 [1,1]=1 [0,2]=1 [1,2]=1 [0,3]=1 [1,3]=0.5 [2,4]=1); echo "$(bench_paired 0 1) $(bench_paired 0 2)"' _ "$B")" "2.00 n/a"

# bench_steal: the steal ticks' share of all ticks between two readings (20 of 200: 10 %)
expect_eq "lib.sh: bench_steal" "$(bash -c '. "$1/lib.sh"; bench_steal "100 5" "300 25"' _ "$B")" \
	"10.0 % of the CPUs' time (20 of 200 ticks)"

# scaling.sh: a row per core count, interleaved runs, the page cache line
bash "$B/scaling.sh" "$SIPNAB_BIN" "$TMPD/c20.pcap" 2140 --cores 1,2 --runs 2 \
	>"$TMPD/scaling.md" 2>"$TMPD/scaling.err"
expect_eq "scaling.sh: exit status" "$?" 0
# with two CPUs, the row of two --cores 1 runs at once follows
want="1,2,2x1atonce,"
[ "$(nproc)" -gt 1 ] || want="1,2,"
expect_eq "scaling.sh: rows" "$(rows "$TMPD/scaling.md" | cut -d'|' -f2 | tr -d ' ' | tr '\n' ,)" "$want"
expect_eq "scaling.sh: first row's speed-up" "$(rows "$TMPD/scaling.md" | head -1 | cut -d'|' -f7 | tr -d ' ')" "1.00"
expect_eq "scaling.sh: page cache" "$(grep -c '^- page cache: read back from disk' "$TMPD/scaling.md")" 1
# and how much of the capture cat brought back in 2 MiB folios, where the kernel says
if grep -q '^FileHugePages:' /proc/meminfo 2>/dev/null; then
	expect_eq "scaling.sh: page cache's 2 MiB folios" \
		"$(grep -c '^- page cache: read back .*; [0-9?][0-9]* of its [0-9][0-9]* MiB came back in 2 MiB folios' "$TMPD/scaling.md")" 1
fi
expect_eq "scaling.sh: steal time" \
	"$(grep -c '^- steal time from start to end (the hypervisor running other guests): [0-9][0-9]*\.[0-9] % of' "$TMPD/scaling.md")" 1
expect_eq "scaling.sh: first row's paired speed-up" "$(rows "$TMPD/scaling.md" | head -1 | cut -d'|' -f8 | tr -d ' ')" "1.00"
expect_eq "scaling.sh: second row's paired speed-up is a ratio" \
	"$(rows "$TMPD/scaling.md" | sed -n 2p | cut -d'|' -f8 | tr -d ' ' | grep -c '^[0-9][0-9]*\.[0-9][0-9]$')" 1
# every row's CPU time (the last column) is a number of seconds, above 0: sipnab's runs took
# some
expect_eq "scaling.sh: CPU column" \
	"$(rows "$TMPD/scaling.md" | awk -F'|' '{ v = $(NF - 1); gsub(/ /, "", v); if (v !~ /^[0-9]+\.[0-9][0-9][0-9]$/ || v + 0 <= 0) bad++ } END { print (NR > 0 && bad == 0) }')" 1
# each run's wall time is runone's, inside the shell's time around runone (raw.txt is gone
# with the temp directory: the progress lines carry runone's wall, the test recomputes
# nothing from it); the method line says so
expect_eq "scaling.sh: method" "$(grep -c '^  wall time including start-up (bench/runone.c: CLOCK_MONOTONIC' "$TMPD/scaling.md")" 1
# interleaved rounds, the rows in order in odd rounds and in reverse in even ones
expect_eq "scaling.sh: interleaved rounds" "$(grep -c '^  run 1: c1 [0-9.]* c2 [0-9.]*\( 2x1 [0-9.]*\)\?$' "$TMPD/scaling.err"),$(grep -c '^  run 2: \(2x1 [0-9.]* \)\?c2 [0-9.]* c1 [0-9.]*$' "$TMPD/scaling.err")" "1,1"
if [ "$(nproc)" -gt 1 ]; then
	# twice the work: its pkts/s is 2 x PACKETS over its own median, which the table rounds
	# to the millisecond (a run here takes a few: a bound of 10 % failed once, under make -j2
	# check); the median the pkts/s imply lies within that rounding of the one printed
	expect_eq "scaling.sh: two runs at once count twice the packets" \
		"$(rows "$TMPD/scaling.md" | awk -F'|' '$2 ~ /at once/ { gsub(/[ ,]/, "", $6); m = 2 * 2140 / $6; d = m - $3; if (d < 0) d = -d; print ($6 > 0 && d <= 0.0005 + 0.02 * m) }')" 1
	# the 2-core row against the pair, recomputed from the rounds' times on stderr (printed to
	# 0.1 ms, so within 15 %: a run here takes a few ms)
	got=$(sed -n 's/^--cores 2 against that ceiling: \([0-9.]*\) .*/\1/p' "$TMPD/scaling.md")
	expect_eq "scaling.sh: --cores 2 against the ceiling ($got)" \
		"$(awk -v got="$got" '/^  run [0-9]*:/ { for (i = 3; i < NF; i += 2) v[$i] = $(i + 1); r[++n] = v["2x1"] / 2 / v["c2"] }
			END { for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (r[j] < r[i]) { t = r[i]; r[i] = r[j]; r[j] = t }
			      m = (n % 2) ? r[(n + 1) / 2] : (r[n / 2] + r[n / 2 + 1]) / 2
			      d = got - m; if (d < 0) d = -d; print (got != "" && m > 0 && d <= 0.15 * m) }' "$TMPD/scaling.err")" 1
	# where the 2-core run's time goes: the CPU medians of the table's rows, one run of the
	# work each (the pair row's CPU is two runs'), and the 2-core run's CPU / its wall time
	expect_eq "scaling.sh: CPU time per run of the work" \
		"$(python3 - "$TMPD/scaling.md" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
col = lambda label: [l.split('|') for l in text.splitlines() if l.startswith('| ' + label + ' |')][0]
one, two, pair = (float(col(x)[-2]) for x in ('1', '2', '2 x 1 at once'))
wall = float(col('2')[2])
m = re.search(r'^CPU time per run of the work \(medians\): --cores 1 alone ([0-9.]+) s; each of the two '
              r'--cores 1\nruns at once ([0-9.]+) s \(([0-9.]+)x alone: .*\); --cores 2 ([0-9.]+) s\n'
              r'\(([0-9.]+)x one of the runs at once\), with ([0-9.]+) of 2 CPUs busy on average', text, re.M)
# the table's CPU column and the line's figures are both rounded to the ms
# (to 0.5 ms each: a ratio of two of them within its relative error, and 0.005 for its own
# rounding)
near = lambda a, b, tol: abs(a - b) <= tol
ratio_ok = lambda shown, x, y: near(shown, x / y, x / y * (0.0006 / x + 0.0006 / y) + 0.006)
ok = m and near(float(m[1]), one, 0.0011) and near(float(m[2]), pair / 2, 0.0011) \
    and near(float(m[4]), two, 0.0011) and ratio_ok(float(m[3]), float(m[2]), float(m[1])) \
    and ratio_ok(float(m[5]), float(m[4]), float(m[2])) and ratio_ok(float(m[6]), two, wall)
print(1 if ok else 0)
PY
)" 1
	bash "$B/scaling.sh" "$SIPNAB_BIN" "$TMPD/c20.pcap" 2140 --cores 1 --runs 1 --no-pair \
		>"$TMPD/nopair.md" 2>/dev/null
	expect_eq "scaling.sh --no-pair: rows" "$(rows "$TMPD/nopair.md" | cut -d'|' -f2 | tr -d ' ' | tr '\n' ,)" "1,"
fi

# a wrong packet count is warned about, not fatal; --keep-cache is said
bash "$B/scaling.sh" "$SIPNAB_BIN" "$TMPD/c20.pcap" 999 --cores 1 --runs 1 --keep-cache \
	>"$TMPD/keep.md" 2>"$TMPD/keep.err"
expect_eq "scaling.sh, wrong PACKETS: exit status" "$?" 0
expect_eq "scaling.sh, wrong PACKETS: warning" \
	"$(grep -c 'sipnab counted 2140 packets but PACKETS is 999' "$TMPD/keep.err")" 1
expect_eq "scaling.sh --keep-cache: page cache" \
	"$(grep -c '^- page cache: as the page cache held it (--keep-cache)' "$TMPD/keep.md")" 1

# --huge-folios reads the capture back through a mapping, and says so
bash "$B/scaling.sh" "$SIPNAB_BIN" "$TMPD/c20.pcap" 2140 --cores 1 --runs 1 --no-pair \
	--huge-folios >"$TMPD/huge.md" 2>"$TMPD/huge.err"
expect_eq "scaling.sh --huge-folios: exit status" "$?" 0
expect_eq "scaling.sh --huge-folios: page cache" \
	"$(grep -c '^- page cache: read back from disk through a mapping .*--huge-folios' "$TMPD/huge.md")" 1
expect_eq "scaling.sh --huge-folios: a row" "$(rows "$TMPD/huge.md" | cut -d'|' -f2 | tr -d ' ')" 1

# bad arguments: exit 2 with the usage
bash "$B/scaling.sh" "$SIPNAB_BIN" "$TMPD/c20.pcap" >/dev/null 2>"$TMPD/bad.err"
expect_eq "scaling.sh without PACKETS: exit status" "$?" 2
bash "$B/compare.sh" "$SIPNAB_BIN" "$TMPD/missing.pcap" 10 >/dev/null 2>"$TMPD/bad.err"
expect_eq "compare.sh, missing capture: exit status" "$?" 2
bash "$B/sweep.sh" "$SIPNAB_BIN" --calls 10,x >/dev/null 2>"$TMPD/bad.err"
expect_eq "sweep.sh --calls 10,x: exit status" "$?" 2

# compare.sh: the two sipnab rows always, the floor when a compiler and libpcap's headers are
# there, peers when installed (skipped with a note otherwise); ratios against sipnab --cores 1
bash "$B/compare.sh" "$SIPNAB_BIN" "$TMPD/c20.pcap" 2140 --runs 2 --tshark-runs 1 \
	>"$TMPD/compare.md" 2>"$TMPD/compare.err"
expect_eq "compare.sh: exit status" "$?" 0
expect_eq "compare.sh: sipnab --cores 1 row's ratio" \
	"$(rows "$TMPD/compare.md" | grep '^| sipnab --cores 1 ' | cut -d'|' -f7 | tr -d ' ')" "1.00"
expect_eq "compare.sh: sipnab rows" "$(rows "$TMPD/compare.md" | grep -c '^| sipnab --cores ')" 2
expect_eq "compare.sh: sipnab --cores 1 row's paired ratio" \
	"$(rows "$TMPD/compare.md" | grep '^| sipnab --cores 1 ' | cut -d'|' -f8 | tr -d ' ')" "1.00"
for peer in sngrep sipgrep tshark; do
	if command -v "$peer" >/dev/null 2>&1; then
		n=$(rows "$TMPD/compare.md" | grep -c "^| $peer ")
	else
		n=$(grep -c "^- $peer: not installed" "$TMPD/compare.md")
	fi
	expect_eq "compare.sh: $peer row or note" "$n" 1
done
# tshark runs only in the first --tshark-runs rounds of the interleaving
if command -v tshark >/dev/null 2>&1; then
	expect_eq "compare.sh: tshark's runs" \
		"$(rows "$TMPD/compare.md" | grep '^| tshark ' | cut -d'|' -f4 | tr -d ' ')" 1
	expect_eq "compare.sh: round 2 without tshark" \
		"$(grep '^  run 2:' "$TMPD/compare.err" | grep -c tshark)" 0
	# paired with sipnab --cores 1 in the one round both ran in
	expect_eq "compare.sh: tshark's paired ratio" \
		"$(rows "$TMPD/compare.md" | grep '^| tshark ' | cut -d'|' -f8 | tr -d ' ' | grep -c '^[0-9][0-9]*\.[0-9][0-9]$')" 1
fi

# sweep.sh: generates the captures once into --dir, a row per (calls, cores), the spread line
bash "$B/sweep.sh" "$SIPNAB_BIN" --calls 10,20 --runs 1 --dir "$TMPD/sweep" \
	>"$TMPD/sweep.md" 2>"$TMPD/sweep.err"
expect_eq "sweep.sh: exit status" "$?" 0
nproc=$(nproc)
want="10/1,10/$nproc,20/1,20/$nproc,"
[ "$nproc" -gt 1 ] || want="10/1,20/1,"
expect_eq "sweep.sh: rows (calls/cores)" \
	"$(rows "$TMPD/sweep.md" | awk -F'|' '{ gsub(/ /, ""); printf "%s/%s,", $2, $5 }')" "$want"
expect_eq "sweep.sh: captures" "$(ls "$TMPD/sweep" | tr '\n' ' ')" \
	"carrier-c10-ids0-pairs0.pcap carrier-c20-ids0-pairs0.pcap "
expect_eq "sweep.sh: spread with no call count in 2,000-20,000" \
	"$(grep -c '^- cores 1: n/a' "$TMPD/sweep.md")" 1
if grep -q '^FileHugePages:' /proc/meminfo 2>/dev/null; then
	expect_eq "sweep.sh: each capture's 2 MiB folios" \
		"$(grep -c '^- page cache, in 2 MiB folios after the read-back: 10 calls: [0-9?][0-9]* of its [0-9][0-9]* MiB; 20 calls: [0-9?][0-9]* of its [0-9][0-9]* MiB$' "$TMPD/sweep.md")" 1
fi
# with two call counts from 2,000 to 20,000: the spread per round and from the fastest runs,
# recomputed from the rounds it prints on stderr (to 0.1 ms: within 1 percentage point)
bash "$B/sweep.sh" "$SIPNAB_BIN" --calls 2000,2001 --runs 3 --dir "$TMPD/sweep" \
	>"$TMPD/sweep3.md" 2>"$TMPD/sweep3.err"
expect_eq "sweep.sh 2,000 calls: exit status" "$?" 0
python3 - "$TMPD/sweep3.md" "$TMPD/sweep3.err" "$nproc" >"$TMPD/sweep3.chk" 2>&1 <<'PY'
import re, statistics, sys
text = open(sys.argv[1]).read()
cores = sorted({1, int(sys.argv[3])})
walls = {}  # (calls, cores) -> [seconds per round]
for m in re.finditer(r'^  run \d+: (.*)$', open(sys.argv[2]).read(), re.M):
    for calls, c, sec in re.findall(r'(\d+)/c(\d+) ([0-9.]+)', m.group(1)):
        walls.setdefault((int(calls), int(c)), []).append(float(sec))
def spread(v):
    return (max(v) / min(v) - 1) * 100
for c in cores:
    rows = [(n, walls[(n, c)]) for n in (2000, 2001)]
    per_round = statistics.median(spread([107 * n / w[r] for n, w in rows]) for r in range(3))
    fastest = spread([107 * n / min(w) for n, w in rows])
    m = re.search(r'^- cores %d: per round ([0-9.]+) %% \(median of 3 rounds\); fastest runs ([0-9.]+) %%$' % c, text, re.M)
    if not m:
        print('no per-round line for --cores %d' % c)
    elif abs(float(m.group(1)) - per_round) > 1 or abs(float(m.group(2)) - fastest) > 1:
        print('--cores %d: printed %s / %s, recomputed %.1f / %.1f' % (c, m.group(1), m.group(2), per_round, fastest))
    else:
        print('ok')
PY
expect_eq "sweep.sh: spread per round and from the fastest runs" \
	"$(cat "$TMPD/sweep3.chk")" "$([ "$nproc" -gt 1 ] && printf 'ok\nok' || echo ok)"
# the fixed part and the part per packet: with two capture sizes a core count, the fitted line
# passes through both medians, so each row's "the fit" is 0 % (a wrong formula is not); sizes
# less than twice apart get no fit
expect_eq "sweep.sh: fixed part and part per packet, two sizes" \
	"$(grep -c '^- cores [0-9]*: -\{0,1\}[0-9.]* ms + -\{0,1\}[0-9.]* ns per packet; the fixed part is -\{0,1\}[0-9]* % of the median at 1070 packets (the fit: [+-]0 %), -\{0,1\}[0-9]* % of the median at 2140 packets (the fit: [+-]0 %)$' "$TMPD/sweep.md")" \
	"$([ "$nproc" -gt 1 ] && echo 2 || echo 1)"
expect_eq "sweep.sh: a process that does nothing, timed as the floor under the fixed part" \
	"$(grep -c '^- a process that does nothing (runone OUTFILE true), the floor under the fixed part: [0-9.]* ms ([0-9.]*-[0-9.]*), median of 5 runs$' "$TMPD/sweep.md")" 1
expect_eq "sweep.sh: no fit for sizes less than twice apart" \
	"$(grep -c '^- cores [0-9]*: n/a (capture sizes less than twice apart)$' "$TMPD/sweep3.md")" \
	"$([ "$nproc" -gt 1 ] && echo 2 || echo 1)"
# a second run uses the cached captures
bash "$B/sweep.sh" "$SIPNAB_BIN" --calls 10 --runs 1 --dir "$TMPD/sweep" \
	>"$TMPD/sweep2.md" 2>"$TMPD/sweep2.err"
expect_eq "sweep.sh again: exit status" "$?" 0
expect_eq "sweep.sh again: capture reused" "$(grep -c 'calls 10: cached ' "$TMPD/sweep2.md")" 1

# ab.sh: a row per binary, the paired B / A recomputed from the rounds on stderr (printed to
# 0.1 ms, so within 15 %: printed to the ms, it once came out further off, the runs taking a
# few ms), and a refusal when the two binaries report differently
bash "$B/ab.sh" "$SIPNAB_BIN" "$SIPNAB_BIN" "$TMPD/c20.pcap" 2140 --runs 3 \
	>"$TMPD/ab.md" 2>"$TMPD/ab.err"
expect_eq "ab.sh: exit status" "$?" 0
expect_eq "ab.sh: rows" "$(rows "$TMPD/ab.md" | cut -d'|' -f2 | tr -d ' ' | tr '\n' ,)" "A,B,"
got=$(sed -n 's/^B \/ A, paired: \([0-9.]*\) (quartiles [0-9.]*-[0-9.]*, 3 rounds)$/\1/p' "$TMPD/ab.md")
expect_eq "ab.sh: paired B / A ($got)" \
	"$(awk -v got="$got" '/^  run [0-9]*:/ { for (i = 3; i < NF; i += 2) v[$i] = $(i + 1); r[++n] = v["B"] / v["A"] }
		END { for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (r[j] < r[i]) { t = r[i]; r[i] = r[j]; r[j] = t }
		      m = r[2]; d = got - m; if (d < 0) d = -d; print (n == 3 && got != "" && d <= 0.15 * m) }' "$TMPD/ab.err")" 1
printf '#!/bin/sh\nexec "%s" "$@" -l 1\n' "$SIPNAB_BIN" >"$TMPD/limited"
chmod +x "$TMPD/limited"
bash "$B/ab.sh" "$SIPNAB_BIN" "$TMPD/limited" "$TMPD/c20.pcap" 2140 --runs 1 \
	>"$TMPD/abdiff.md" 2>"$TMPD/abdiff.err"
expect_eq "ab.sh, different reports: exit status" "$?" 1
expect_eq "ab.sh, different reports: said" "$(grep -c 'A and B write different reports' "$TMPD/abdiff.err")" 1
bash "$B/ab.sh" "$SIPNAB_BIN" "$TMPD/c20.pcap" 2140 >/dev/null 2>"$TMPD/bad.err"
expect_eq "ab.sh without BIN_B: exit status" "$?" 2
finish
