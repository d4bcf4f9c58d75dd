#!/bin/sh
# The report's bytes wherever they go: a file, a pipe, a full disk, a closed standard output.
# Large reports are written past stdio in blocks (ana_report.c out_put()), on one thread or on
# the report's threads; the bytes must be the same every way, and a failed write must end the
# run with exit 1 and the reason.
. "$(dirname "$0")/lib.sh"

# 400 calls with loss and jitter: --problems selects most of them but not all, so that blocks
# of the calls array hold unselected calls (cut out again after their separator)
python3 "$SIPNAB_SRCDIR/bench/carrier.py" --calls 400 --call-ids 0 --stream-pairs 0 --loss 3 \
	--jitter-ms 30 --seed 7 --out "$TMPD/mix.pcap" 2>/dev/null || fail "carrier.py"
M="$TMPD/mix.pcap"

for fmt in json csv text; do
	for opt in "" --problems; do
		for c in 1 2 3; do
			# shellcheck disable=SC2086 # $opt is one option or none
			"$SIPNAB_BIN" -N -I "$M" $opt --report=$fmt --cores $c >"$TMPD/$fmt$opt.file.$c" ||
				fail "$fmt $opt --cores $c to a file: exit $?"
			# shellcheck disable=SC2086
			"$SIPNAB_BIN" -N -I "$M" $opt --report=$fmt --cores $c | cat >"$TMPD/$fmt$opt.pipe.$c"
			checks=$((checks + 1))
			cmp -s "$TMPD/$fmt$opt.file.1" "$TMPD/$fmt$opt.file.$c" ||
				fail "$fmt $opt: --cores $c differs from --cores 1"
			checks=$((checks + 1))
			cmp -s "$TMPD/$fmt$opt.file.$c" "$TMPD/$fmt$opt.pipe.$c" ||
				fail "$fmt $opt --cores $c: the pipe's bytes differ from the file's"
		done
	done
done

# the selection, counted three ways: JSON elements, CSV lines, and the summary's own count
sel_json=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(len(d["calls"]))' \
	"$TMPD/json--problems.file.2") || fail "the --problems JSON does not parse"
all_json=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["calls"]))' \
	"$TMPD/json.file.2") || fail "the JSON does not parse"
sel_json=${sel_json:-0}
expect_eq "calls in the whole report" "$all_json" 400
expect_eq "CSV rows of the --problems selection" \
	"$(($(wc -l <"$TMPD/csv--problems.file.2") - 1))" "$sel_json"
checks=$((checks + 1))
if [ "$sel_json" -gt 200 ] && [ "$sel_json" -lt 400 ]; then
	pass "--problems selects some calls, not all ($sel_json)"
else
	fail "--problems selects $sel_json of 400 calls: the test needs some left out"
fi

if [ -w /dev/full ]; then
	for fmt in json csv text; do
		for c in 1 2; do
			"$SIPNAB_BIN" -N -I "$M" --report=$fmt --cores $c >/dev/full 2>"$TMPD/err"
			expect_eq "$fmt --cores $c to a full disk: exit" "$?" 1
			checks=$((checks + 1))
			grep -q "writing the report failed: No space left on device" "$TMPD/err" ||
				fail "$fmt --cores $c to a full disk: $(cat "$TMPD/err")"
		done
	done
	call_id=$(sed -n 2p "$TMPD/csv.file.1" | cut -d, -f1)
	"$SIPNAB_BIN" -N -I "$M" --call-report "$call_id" >/dev/full 2>"$TMPD/err"
	expect_eq "--call-report to a full disk: exit" "$?" 1
else
	echo "no /dev/full: the full-disk checks are left out"
fi

"$SIPNAB_BIN" -N -I "$M" --report=json --cores 2 >&- 2>"$TMPD/err"
expect_eq "closed standard output: exit" "$?" 1
checks=$((checks + 1))
grep -q "writing the report failed" "$TMPD/err" || fail "closed standard output: $(cat "$TMPD/err")"
finish
