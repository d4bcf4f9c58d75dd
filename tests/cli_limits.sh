#!/bin/sh
# Memory bounds as a user sets them: -l/--limit (Call-IDs kept per worker),
# --max-call-messages (messages kept per Call-ID) and --max-streams (RTP streams tracked per
# worker). What a bound keeps out is counted in the report's capture.dropped, never silently
# lost.
. "$(dirname "$0")/lib.sh"
S="$SIPNAB_CORPUS/pcap/sipp-g711-dtmf.pcap"
get() { # file options... -> "calls streams dropped.calls dropped.sip dropped.streams dropped.rtp"
	f=$1
	shift
	"$SIPNAB_BIN" -N -I "$f" --cores 1 --report=json "$@" | python3 -c '
import json, sys
d = json.load(sys.stdin)
x = d["capture"]["dropped"]
print(d["summary"]["calls"], d["summary"]["streams"], x["calls"], x["sip_messages"],
      x["streams"], x["rtp_packets"])'
}
expect_eq "no bound reached" "$(get "$S")" "2 8 0 0 0 0"
# every stream of the sample was announced by SDP: --no-rtp-heuristic keeps all 8
expect_eq "--no-rtp-heuristic on announced streams" "$(get "$S" --no-rtp-heuristic)" "2 8 0 0 0 0"
# one call kept: the second Call-ID (6 messages) is dropped and counted
expect_eq "-l 1" "$(get "$S" -l 1)" "1 8 1 6 0 0"
expect_eq "--max-call-messages 4" "$(get "$S" --max-call-messages 4)" "2 8 0 4 0 0"
# one RTP stream tracked: 7 candidate streams and their 748 packets counted as dropped
expect_eq "--max-streams 1" "$(get "$S" --max-streams 1)" "2 1 0 0 7 748"
if [ -d "$PUBLIC" ]; then
	# 6 Call-IDs of 26, 18, 14, 8, 8 and 7 messages
	# its one RTP stream is still found, by the RTP heuristic: the call whose SDP announced it
	# was dropped, and the calls kept that announced the same endpoint ended long before
	expect_eq "sngrep-aaa -l 2" "$(get "$PUBLIC/sngrep-aaa.pcap" -l 2)" "2 1 4 37 0 0"
	"$SIPNAB_BIN" -N -I "$PUBLIC/sngrep-aaa.pcap" -l 2 --cores 1 --report=json >"$TMPD/h.json"
	expect_eq "heuristic stream has no call" "$(json_get "$TMPD/h.json" streams.0.call_id)" None
	expect_eq "heuristic stream not announced" "$(json_get "$TMPD/h.json" streams.0.announced)" False
	# --no-rtp-heuristic keeps only streams an SDP announced
	expect_eq "sngrep-aaa -l 2 --no-rtp-heuristic" \
		"$(get "$PUBLIC/sngrep-aaa.pcap" -l 2 --no-rtp-heuristic)" "2 0 4 37 0 0"
fi
"$SIPNAB_BIN" -N -I "$S" -l 0 >/dev/null 2>&1
expect_eq "-l 0 is a usage error" "$?" 2
finish
