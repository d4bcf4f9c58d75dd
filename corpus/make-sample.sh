#!/bin/sh
# Record the SIPp sample captures on loopback (needs root, sip-tester and tshark's dumpcap):
#   sh corpus/make-sample.sh udp [OUT]  -> corpus/pcap/sipp-g711-dtmf.pcap
#   sh corpus/make-sample.sh tcp [OUT]  -> corpus/pcap/sipp-tcp-g711-dtmf.pcap
# Each is two SIPp calls with the built-in uac_pcap scenario against a UAS that echoes RTP:
# INVITE/180/200/ACK, 7 s of G.711 A-law RTP replayed from SIPp's g711a.pcap, RFC 2833 DTMF,
# BYE/200. With "tcp" the SIP runs over one TCP connection (sipp -t t1); RTP stays on UDP.
set -eu
mode=${1:-udp}
case "$mode" in
udp) name=sipp-g711-dtmf.pcap; tflag=u1; filter="udp and host 127.0.0.1"; port=5070 ;;
tcp) name=sipp-tcp-g711-dtmf.pcap; tflag=t1; filter="host 127.0.0.1 and (udp or tcp port 5071)"; port=5071 ;;
*) echo "usage: $0 udp|tcp [OUT]" >&2; exit 2 ;;
esac
out=$(realpath -m "${2:-$(dirname "$0")/pcap/$name}")
work=$(mktemp -d)
trap 'pkill -f "sipp -sn uas -i 127.0.0.1 -p $port" 2>/dev/null || true; rm -rf "$work"' EXIT
cd "$work"
ln -s /usr/share/sip-tester pcap   # the scenario opens pcap/g711a.pcap relative to the cwd
dumpcap -q -P -i lo -f "$filter" -w "$work/raw.pcap" -a duration:60 &
cap=$!
sleep 2
sipp -sn uas -i 127.0.0.1 -p "$port" -t "$tflag" -mi 127.0.0.1 -rtp_echo -bg >/dev/null 2>&1 || true
sleep 1
timeout 50 sipp -sn uac_pcap -i 127.0.0.1 -p 5061 -t "$tflag" -mi 127.0.0.1 "127.0.0.1:$port" \
	-m 2 -l 1 -r 1 -nostdin >/dev/null 2>&1
sleep 1
kill "$cap"
wait "$cap" || true
cp "$work/raw.pcap" "$out"
chmod 644 "$out"
echo "wrote $out"
