#!/bin/sh
# Record corpus/pcap/sipp-g711-dtmf.pcap: two SIPp calls on loopback (uac_pcap scenario:
# INVITE/180/200/ACK, 7 s of G.711 A-law RTP from SIPp's g711a.pcap echoed back by the UAS,
# RFC 2833 DTMF, BYE/200). Needs root (capture on lo), sip-tester and tshark's dumpcap.
# Usage: sh corpus/make-sample.sh [OUT.pcap]
set -eu
out=$(realpath -m "${1:-$(dirname "$0")/pcap/sipp-g711-dtmf.pcap}")
work=$(mktemp -d)
trap 'pkill -f "sipp -sn uas -i 127.0.0.1 -p 5070" 2>/dev/null || true; rm -rf "$work"' EXIT
cd "$work"
ln -s /usr/share/sip-tester pcap   # the scenario opens pcap/g711a.pcap relative to the cwd
dumpcap -q -P -i lo -f "udp and host 127.0.0.1" -w "$work/raw.pcap" -a duration:60 &
cap=$!
sleep 2
sipp -sn uas -i 127.0.0.1 -p 5070 -mi 127.0.0.1 -rtp_echo -bg >/dev/null 2>&1 || true
sleep 1
timeout 50 sipp -sn uac_pcap -i 127.0.0.1 -p 5061 -mi 127.0.0.1 127.0.0.1:5070 \
	-m 2 -l 1 -r 1 -nostdin >/dev/null 2>&1
sleep 1
kill "$cap"
wait "$cap" || true
cp "$work/raw.pcap" "$out"
echo "wrote $out"
