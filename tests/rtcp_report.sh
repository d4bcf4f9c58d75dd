#!/bin/sh
# RTCP in the report: heplify-sip_ipv4_tcp.pcap carries an SR from 10.33.6.101 (SSRC
# 0x42F433D4, CNAME "c0") and an SR from 10.33.6.100 whose report block describes 0x42F433D4
# (fraction lost 0, jitter 0, LSR naming the first SR, DLSR 1048/65536 s). The round-trip time
# is the RR's arrival - the SR's arrival - DLSR = 1.379 ms (tshark -T fields -e frame.time_epoch
# -e rtcp.ssrc.dlsr gives the same); the second stream's own SR makes its CNAME known.
. "$(dirname "$0")/lib.sh"
need_public
"$SIPNAB_BIN" -N -I "$PUBLIC/heplify-sip_ipv4_tcp.pcap" --report=json >"$TMPD/r.json" || fail "exit $?"
rtcp() { # ssrc -> the stream's rtcp object, keys sorted
	python3 -c '
import json, sys
for s in json.load(open(sys.argv[1]))["streams"]:
    if s["ssrc"] == sys.argv[2]:
        r = s["rtcp"]
        print(" ".join("%s=%s" % (k, r[k]) for k in sorted(r)))' "$TMPD/r.json" "$1"
}
expect_eq "RTCP about 0x42F433D4" "$(rtcp 0x42F433D4)" \
	"cname=c0 reported_jitter_ms=0.0 reported_loss_pct=0.0 rtt_ms=1.379 sender_reports=1 xr_mos_cq=None xr_mos_lq=None xr_r_factor=None"
expect_eq "RTCP of 0x5A3361B3 (its own SR only)" "$(rtcp 0x5A3361B3)" \
	"cname=c0 reported_jitter_ms=None reported_loss_pct=None rtt_ms=None sender_reports=1 xr_mos_cq=None xr_mos_lq=None xr_r_factor=None"
expect_eq "RTCP packets counted" "$(json_get "$TMPD/r.json" capture.rtcp_packets)" 2
finish
