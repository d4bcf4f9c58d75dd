#!/bin/sh
# Every RTP stream of the public captures, the corpus captures and SIPp's bundled captures:
# packets, lost, max delta, mean and max jitter agree with tshark 4.0 (-z rtp,streams with the
# RTP heuristic) to the third decimal, stream by stream. The reference values are in
# corpus/expect/rtp-streams.tsv (made with `python3 tests/rtp_compare.py tshark FILE...`).
# Captures that are absent (no ../shared, no sip-tester) are skipped.
# It also generates an impaired capture (2 % loss, 5 ms jitter, 1 % reordering; deterministic
# for a seed) whose 100 streams tshark analysed the same way.
. "$(dirname "$0")/lib.sh"
python3 "$SIPNAB_SRCDIR/bench/carrier.py" --calls 50 --call-ids 0 --stream-pairs 0 --loss 2 \
	--jitter-ms 5 --reorder 1 --seed 7 --out "$TMPD/carrier-impaired.pcap" 2>/dev/null || exit 1
python3 "$SIPNAB_SRCDIR/tests/rtp_compare.py" refs "$SIPNAB_BIN" \
	"$SIPNAB_CORPUS/expect/rtp-streams.tsv" "$PUBLIC" "$SIPNAB_CORPUS/pcap" /usr/share/sip-tester \
	"$TMPD"
