#!/bin/sh
# sipnab's own threads take no asynchronous signals: a signal sent to the process (Ctrl-C's
# SIGINT, SIGTERM, SIGHUP, a terminal's SIGWINCH) is delivered to the thread that runs the
# program, where a handler (the ncurses UI, live capture) can act on it, never to a helper
# or to the thread that reads or inflates the input. Checked while sipnab waits for the end
# of its input on a FIFO, plain and gzip, at --cores 1 and 2: every thread but the first
# blocks those signals (SigBlk in /proc/PID/task/TID/status) and the first does not; then
# the input ends and the run reports every call.
. "$(dirname "$0")/lib.sh"
if [ ! -r /proc/self/status ] || ! command -v mkfifo >/dev/null 2>&1; then
	echo "SKIP: needs /proc and mkfifo"
	exit 77
fi
if grep -q __tsan_init "$SIPNAB_BIN" 2>/dev/null; then
	echo "SKIP: ThreadSanitizer build (its runtime starts threads of its own)"
	exit 77
fi
# 100 calls, 2.6 MB: more than the reader asks for before it starts (1 MiB)
python3 "$SIPNAB_SRCDIR/bench/carrier.py" --calls 100 --out "$TMPD/c100.pcap" 2>/dev/null ||
	fail "carrier.py"
gzip -c "$TMPD/c100.pcap" >"$TMPD/c100.pcap.gz"

# blocked TASKDIR: 1 when the thread blocks SIGHUP, SIGINT, SIGTERM and SIGWINCH
blocked() {
	mask=$(awk '/^SigBlk:/ {print substr($2, length($2) - 7)}' "$1/status")
	# bits 0, 1, 14, 27: signals 1 (HUP), 2 (INT), 15 (TERM), 28 (WINCH)
	want=$(((1 << 0) | (1 << 1) | (1 << 14) | (1 << 27)))
	if [ -n "$mask" ] && [ $((0x$mask & want)) -eq "$want" ]; then echo 1; else echo 0; fi
}

for kind in plain gzip; do
	src=$TMPD/c100.pcap
	[ "$kind" = gzip ] && src=$TMPD/c100.pcap.gz
	size=$(wc -c <"$src")
	for cores in 1 2; do
		what="$kind, --cores $cores"
		rm -f "$TMPD/fifo"
		mkfifo "$TMPD/fifo"
		"$SIPNAB_BIN" -N -I "$TMPD/fifo" --cores "$cores" --report=json >"$TMPD/out.json" \
			2>"$TMPD/err" &
		pid=$!
		exec 3>"$TMPD/fifo"
		# all but the last 4 KiB: sipnab analyses it and waits for the rest
		head -c $((size - 4096)) "$src" >&3
		# its threads: the first, the one reading the FIFO (sn-input) and at --cores 2 a
		# helper (sn-helper-1); bounded wait, 10 s
		want=$((cores + 1))
		n=0
		tries=0
		while [ "$tries" -lt 200 ]; do
			n=$(ls /proc/"$pid"/task 2>/dev/null | wc -l)
			[ "$n" -ge "$want" ] && break
			tries=$((tries + 1))
			sleep 0.05
		done
		expect_eq "$what: threads while it waits" "$n" "$want"
		expect_eq "$what: their names" \
			"$(cat /proc/"$pid"/task/*/comm 2>/dev/null | sort | tr '\n' ' ')" \
			"$(if [ "$cores" = 2 ]; then echo "sipnab sn-helper-1 sn-input "; else echo "sipnab sn-input "; fi)"
		ok=1
		for t in /proc/"$pid"/task/*; do
			[ "${t##*/}" = "$pid" ] && continue
			if [ "$(blocked "$t")" != 1 ]; then
				ok=0
				echo "  $what: thread $(cat "$t/comm") takes signals:" \
					"$(grep SigBlk "$t/status")"
			fi
		done
		expect_eq "$what: the other threads block asynchronous signals" "$ok" 1
		expect_eq "$what: the first thread takes them" "$(blocked /proc/"$pid"/task/"$pid")" 0
		tail -c 4096 "$src" >&3
		exec 3>&-
		wait "$pid"
		expect_eq "$what: exit status" "$?" 0
		expect_eq "$what: calls reported" "$(json_get "$TMPD/out.json" summary.calls)" 100
	done
done
finish
