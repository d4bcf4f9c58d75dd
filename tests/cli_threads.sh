#!/bin/sh
# A run at --cores N starts N-1 threads in all, whatever it reads: the reading, the analysis,
# the result's build and the report's arrays share one set of helpers (src/base/sn_pool.c),
# started once. Counted with strace as the clone() calls that make threads; gzip input adds
# its inflater's thread. (Threads started per step lost much of the gain: a new thread often
# ran only after its creator had done the work alone.)
. "$(dirname "$0")/lib.sh"
if ! command -v strace >/dev/null 2>&1; then
	echo "SKIP: strace not installed"
	exit 77
fi
if grep -q __tsan_init "$SIPNAB_BIN" 2>/dev/null; then
	echo "SKIP: ThreadSanitizer build (its runtime starts threads of its own)"
	exit 77
fi
if ! strace -f -qq -e trace=clone,clone3 -o "$TMPD/probe" true 2>/dev/null; then
	echo "SKIP: strace cannot trace here"
	exit 77
fi
# 300 calls: more legs, calls and report elements than the build and the report share out
# between threads (256 and 128), in several of the sharded reader's chunks
python3 "$SIPNAB_SRCDIR/bench/carrier.py" --calls 300 --out "$TMPD/c300.pcap" 2>/dev/null ||
	fail "carrier.py"
gzip -c "$TMPD/c300.pcap" >"$TMPD/c300.pcap.gz"
python3 "$SIPNAB_SRCDIR/bench/carrier.py" --calls 20 --seed 2 --out "$TMPD/c20.pcap" 2>/dev/null ||
	fail "carrier.py"

# threads WHAT ARGS...: thread-making clone() calls of one run. LeakSanitizer cannot run
# under ptrace (the sanitizer build): leak checking is off for these runs; the rest of the
# suite does it.
threads() {
	what=$1
	shift
	if ! ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0" \
		strace -f -qq -e trace=clone,clone3 -o "$TMPD/st.log" "$SIPNAB_BIN" "$@" \
		>"$TMPD/out.json" 2>"$TMPD/err"; then
		fail "$what: sipnab failed: $(cat "$TMPD/err")"
		echo -1
		return
	fi
	grep -c CLONE_THREAD "$TMPD/st.log"
}

for n in 1 2 3 4 8; do
	expect_eq "one mapped file, --cores $n: threads started" \
		"$(threads "file $n" -N -I "$TMPD/c300.pcap" --cores $n --report=json)" $((n - 1))
done
expect_eq "the report of that run has every call" "$(json_get "$TMPD/out.json" summary.calls)" 300
for n in 2 4; do
	expect_eq "gzip, --cores $n: threads started (and the inflater)" \
		"$(threads "gzip $n" -N -I "$TMPD/c300.pcap.gz" --cores $n --report=json)" $n
	expect_eq "two files, --cores $n: threads started" \
		"$(threads "two files $n" -N -I "$TMPD/c300.pcap" -I "$TMPD/c20.pcap" --cores $n \
			--report=json)" $((n - 1))
done
expect_eq "text report, --cores 2: threads started" \
	"$(threads "text" -N -I "$TMPD/c300.pcap" --cores 2 --report)" 1

[ "$fails" -eq 0 ] || exit 1
echo "all $checks checks passed"
