#!/bin/sh
# A run at --cores 2 keeps each analysing thread on a CPU of its own (sn_pool_run_pinned()),
# and gives them back when one waits long for the other. With another program holding one
# of the CPUs (a busy loop on it, at a higher priority when we may set one), the run still
# finishes and reports exactly what one core reports; so it does when only one CPU is allowed
# (nothing to pin to). Small chunks make many chunks, and many waits, of a small capture.
. "$(dirname "$0")/lib.sh"
for tool in taskset nice timeout; do
	if ! command -v $tool >/dev/null 2>&1; then
		echo "SKIP: $tool not installed"
		exit 77
	fi
done
cpus=$(taskset -cp $$ 2>/dev/null | sed 's/.*: //')
first=$(python3 -c 'import os; c=sorted(os.sched_getaffinity(0)); print(c[0] if c else "")')
second=$(python3 -c 'import os; c=sorted(os.sched_getaffinity(0)); print(c[1] if len(c) > 1 else "")')
if [ -z "$second" ]; then
	echo "SKIP: one CPU allowed ($cpus): nothing is pinned"
	exit 77
fi
python3 "$SIPNAB_SRCDIR/bench/carrier.py" --calls 300 --call-ids 30 --stream-pairs 20 \
	--loss 1 --seed 9 --out "$TMPD/c300.pcap" 2>/dev/null || fail "carrier.py"
"$SIPNAB_BIN" -N -I "$TMPD/c300.pcap" --report=json --cores 1 >"$TMPD/ref.json" ||
	fail "--cores 1"

# a higher priority than ours needs root (CAP_SYS_NICE); else the same priority
prio=-10
if ! nice -n -10 true 2>/dev/null || [ "$(nice -n -10 nice)" != "-10" ]; then
	prio=0
fi

hog=
stop_hog() {
	if [ -n "$hog" ]; then
		kill "$hog" 2>/dev/null
		wait "$hog" 2>/dev/null
		hog=
	fi
}
trap 'stop_hog; rm -rf "$TMPD"' EXIT

for cpu in "$first" "$second"; do
	# bounded: the loop ends by itself after 120 s if nothing stops it
	timeout 120 nice -n $prio taskset -c "$cpu" sh -c 'while :; do :; done' &
	hog=$!
	for round in 1 2 3; do
		if SIPNAB_SPLIT_CHUNK=65536 timeout 120 "$SIPNAB_BIN" -N -I "$TMPD/c300.pcap" \
			--report=json --cores 2 >"$TMPD/busy.json"; then
			if cmp -s "$TMPD/ref.json" "$TMPD/busy.json"; then
				pass "busy loop on CPU $cpu (nice $prio), round $round: --cores 2 = --cores 1"
			else
				fail "busy loop on CPU $cpu, round $round: --cores 2 differs from --cores 1"
			fi
		else
			fail "busy loop on CPU $cpu, round $round: --cores 2 did not finish (status $?)"
		fi
		checks=$((checks + 1))
	done
	stop_hog
done

# one CPU allowed: two threads, nothing pinned
if taskset -c "$first" "$SIPNAB_BIN" -N -I "$TMPD/c300.pcap" --report=json --cores 2 \
	>"$TMPD/one.json" && cmp -s "$TMPD/ref.json" "$TMPD/one.json"; then
	pass "one CPU allowed: --cores 2 = --cores 1"
else
	fail "one CPU allowed: --cores 2 differs from --cores 1, or failed"
fi
checks=$((checks + 1))
finish
