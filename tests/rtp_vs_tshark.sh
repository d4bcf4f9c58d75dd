#!/bin/sh
# Every RTP stream of the public captures, the corpus captures and SIPp's bundled captures:
# packets, lost, max delta, mean and max jitter agree with tshark 4.0 (-z rtp,streams with the
# RTP heuristic) to the third decimal, stream by stream. The reference values are in
# corpus/expect/rtp-streams.tsv (made with `python3 tests/rtp_compare.py tshark FILE...`).
# Captures that are absent (no ../shared, no sip-tester) are skipped.
. "$(dirname "$0")/lib.sh"
python3 "$SIPNAB_SRCDIR/tests/rtp_compare.py" refs "$SIPNAB_BIN" \
	"$SIPNAB_CORPUS/expect/rtp-streams.tsv" "$PUBLIC" "$SIPNAB_CORPUS/pcap" /usr/share/sip-tester
