#!/bin/sh
# sipnab under valgrind, as a user runs it to check a C tool: no memory error, and nothing
# definitely or possibly lost at exit, on the paths a run can take:
# - one thread, and two (the pool's helper threads, which must be gone at exit: a live
#   helper's thread-local storage is counted as possibly lost);
# - gzip input (its inflating thread), standard input (a pipe), the three report formats;
# - a capture cut inside a record (the error path: warning, report of what came before);
# - a file that is not a capture, and a bad option (the early exits).
# An ASan build cannot run under valgrind: with one, the test builds a plain sipnab of the
# same sources first (-O1, about ten seconds).
. "$(dirname "$0")/lib.sh"
if ! command -v valgrind >/dev/null 2>&1; then
	echo "SKIP: valgrind not installed"
	exit 77
fi

bin=$SIPNAB_BIN
if ldd "$bin" 2>/dev/null | grep -q 'lib[at]san\|libubsan' ||
	nm "$bin" 2>/dev/null | grep -q '__[at]san_init\|__ubsan_handle'; then
	if [ ! -x "$SIPNAB_SRCDIR/configure" ] || [ -f "$SIPNAB_SRCDIR/Makefile" ]; then
		echo "SKIP: $bin is a sanitizer build, and no clean source tree to build another from"
		exit 77
	fi
	mkdir "$TMPD/build"
	if ! (cd "$TMPD/build" && "$SIPNAB_SRCDIR/configure" -q CFLAGS="-O1 -g" &&
		make -j2 sipnab) >"$TMPD/build.log" 2>&1; then
		tail -20 "$TMPD/build.log"
		fail "building a plain sipnab for valgrind"
		finish
		exit 1
	fi
	bin=$TMPD/build/sipnab
fi

sample=$SIPNAB_CORPUS/pcap/sipp-g711-dtmf.pcap
gzip -c "$sample" >"$TMPD/sample.pcap.gz"
size=$(wc -c <"$sample")
head -c $((size - 100)) "$sample" >"$TMPD/cut.pcap"
printf 'this is not a capture\n' >"$TMPD/text.txt"

# vg NAME EXPECTED_STATUS SIPNAB_ARGS... (standard input: the sample)
vg() {
	name=$1
	want=$2
	shift 2
	checks=$((checks + 1))
	valgrind --quiet --leak-check=full --show-leak-kinds=definite,possible \
		--errors-for-leak-kinds=definite,possible --error-exitcode=99 \
		--log-file="$TMPD/vg.log" "$bin" "$@" <"$sample" >"$TMPD/out" 2>"$TMPD/err"
	st=$?
	if [ "$st" -eq 99 ] || [ -s "$TMPD/vg.log" ]; then
		sed -n 1,40p "$TMPD/vg.log"
		fail "$name: valgrind reports errors (exit $st)"
	elif [ "$st" -ne "$want" ]; then
		cat "$TMPD/err"
		fail "$name: exit $st, expected $want"
	else
		pass "$name: valgrind clean, exit $st"
	fi
}

vg "one thread" 0 -N -I "$sample" --cores 1 --report=json
grep -q '"COMPLETED"' "$TMPD/out" || fail "one thread: no COMPLETED call in the report"
vg "two threads" 0 -N -I "$sample" --cores 2 --report=json
grep -q '"COMPLETED"' "$TMPD/out" || fail "two threads: no COMPLETED call in the report"
vg "gzip, two threads, text report" 0 -N -I "$TMPD/sample.pcap.gz" --cores 2 --report
grep -q 'COMPLETED' "$TMPD/out" || fail "gzip: no COMPLETED call in the report"
vg "standard input, two threads, csv" 0 -N -I - --cores 2 --report=csv
[ "$(wc -l <"$TMPD/out")" -ge 3 ] || fail "standard input: the CSV has no calls"
vg "cut capture, two threads" 0 -N -I "$TMPD/cut.pcap" --cores 2 --report=json
grep -q 'byte offset' "$TMPD/err" || fail "cut capture: no warning with the offset"
vg "not a capture" 2 -N -I "$TMPD/text.txt"
vg "bad option" 2 -N -I "$sample" --cores x
finish
