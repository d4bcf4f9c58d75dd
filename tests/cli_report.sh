#!/bin/sh
# The report as a user asks for it: text sections, CSV CDRs, selections and --call-report.
. "$(dirname "$0")/lib.sh"
S="$SIPNAB_CORPUS/pcap/sipp-g711-dtmf.pcap"

"$SIPNAB_BIN" -N -I "$S" >"$TMPD/text" || fail "text report exit $?"
for section in Capture Summary Calls Streams Problems; do
	checks=$((checks + 1))
	grep -q "^$section\$" "$TMPD/text" || fail "text report has no $section section"
done
expect_eq "text calls rows" "$(grep -c 'INVITE  sip:sipp@127.0.0.1:5061' "$TMPD/text")" 2

"$SIPNAB_BIN" -N -I "$S" --report=csv >"$TMPD/csv" || fail "csv exit $?"
expect_eq "csv lines (header + one per call)" "$(wc -l <"$TMPD/csv")" 3
expect_eq "csv header" "$(head -1 "$TMPD/csv" | cut -d, -f1-6)" "call_id,kind,from,to,state,final_code"
expect_eq "csv first call" "$(sed -n 2p "$TMPD/csv" | cut -d, -f1,2,5,6,12,15,16)" \
	"1-9428@127.0.0.1,INVITE,COMPLETED,200,6,PCMA|telephone-event,4"

sel() { # options... -> number of calls selected
	"$SIPNAB_BIN" -N "$@" --report=json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["calls"]))'
}
expect_eq "--slow-setup=100 (setup 0.1 ms)" "$(sel -I "$S" --slow-setup=100)" 0
expect_eq "--slow-setup=0" "$(sel -I "$S" --slow-setup=0)" 2
expect_eq "--short-calls=10 (9 s calls)" "$(sel -I "$S" --short-calls=10)" 2
expect_eq "--short-calls (5 s)" "$(sel -I "$S" --short-calls)" 0
expect_eq "--one-way (two-way audio)" "$(sel -I "$S" --one-way)" 0
expect_eq "--problems on a clean capture" "$(sel -I "$S" --problems)" 0
if [ -d "$PUBLIC" ]; then
	# 1 REGISTER that ends on 401, 1 cancelled and 3 rejected INVITEs
	expect_eq "--problems on sngrep-aaa" "$(sel -I "$PUBLIC/sngrep-aaa.pcap" --problems)" 5
	# answered but no media at all: one-way audio
	expect_eq "--one-way on the websocket capture" "$(sel -I "$PUBLIC/heplify-sip_tcp_websocket.pcap" --one-way)" 2
fi

"$SIPNAB_BIN" -N -I "$S" --call-report 2-9428@127.0.0.1 >"$TMPD/cr" || fail "--call-report exit $?"
grep -q "state  *COMPLETED" "$TMPD/cr" || fail "--call-report shows no state"
expect_eq "ladder arrows" "$(grep -c -E -- '->\||\|<-' "$TMPD/cr")" 6
grep -q "|--*INVITE (SDP)--*>|" "$TMPD/cr" || fail "no INVITE arrow in the ladder"
"$SIPNAB_BIN" -N -I "$S" --call-report no-such-call >"$TMPD/out" 2>"$TMPD/err"
expect_eq "--call-report unknown exit" "$?" 1
grep -q "no call with Call-ID no-such-call" "$TMPD/err" || fail "unknown call message: $(cat "$TMPD/err")"
"$SIPNAB_BIN" -N -I "$S" --cores 0 >"$TMPD/out" 2>&1
expect_eq "--cores 0 is a usage error" "$?" 2
finish
