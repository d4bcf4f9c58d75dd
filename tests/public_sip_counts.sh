#!/bin/sh
# SIP messages found in each public capture (../shared/pcaps/public), per transport, next to
# tshark 4.0's count (`tshark -q -z sip,stat`, with -d tcp.port==6060,sip for the fragmented
# TCP file and the WebSocket dissector on 8080). Every file agrees with tshark; see the
# closing note of issue 2 for sngrep's numbers and why they differ.
. "$(dirname "$0")/lib.sh"
need_public

# file  total  udp  tcp  websocket  sctp  [ip datagrams reassembled]
while read -r f total udp tcp ws sctp; do
	[ -n "$f" ] || continue
	if [ ! -f "$PUBLIC/$f" ]; then
		fail "$f missing from $PUBLIC"
		continue
	fi
	"$SIPNAB_BIN" -N -I "$PUBLIC/$f" --report=json >"$TMPD/r.json" || { fail "$f: exit $?"; continue; }
	expect_eq "$f SIP messages" "$(json_get "$TMPD/r.json" capture.sip_messages)" "$total"
	expect_eq "$f over UDP" "$(json_get "$TMPD/r.json" capture.sip_transports.udp)" "$udp"
	expect_eq "$f over TCP" "$(json_get "$TMPD/r.json" capture.sip_transports.tcp)" "$tcp"
	expect_eq "$f over WebSocket" "$(json_get "$TMPD/r.json" capture.sip_transports.websocket)" "$ws"
	expect_eq "$f over SCTP" "$(json_get "$TMPD/r.json" capture.sip_transports.sctp)" "$sctp"
	expect_eq "$f malformed SIP" "$(json_get "$TMPD/r.json" capture.sip_errors)" 0
	expect_eq "$f decode errors" "$(json_get "$TMPD/r.json" capture.decode_errors)" 0
done <<'LIST'
heplify-FAX-Call-t38-CA-TDM-SIP-FB-1.pcap 92 92 0 0 0
heplify-ipip0.pcap 8 8 0 0 0
heplify-sip_ipv4_tcp.pcap 7 0 7 0 0
heplify-sip_ipv4_tcp_fragmented.pcap 406 0 406 0 0
heplify-sip_ipv4_tcp_retrans.pcap 8 4 4 0 0
heplify-sip_ipv6_udp.pcap 6 6 0 0 0
heplify-sip_sctp.pcap 4 0 0 0 4
heplify-sip_tcp_websocket.pcap 39 28 0 11 0
sngrep-aaa.pcap 81 81 0 0 0
sngrep-ipip.pcap 4 0 4 0 0
sngrep-ipv6frag.pcap 32 32 0 0 0
LIST

# the IPv6 fragments of sngrep-ipv6frag.pcap are reassembled (tshark: 2 reassembled datagrams)
"$SIPNAB_BIN" -N -I "$PUBLIC/sngrep-ipv6frag.pcap" --report=json >"$TMPD/r.json"
expect_eq "sngrep-ipv6frag reassembled datagrams" "$(json_get "$TMPD/r.json" capture.ip_reassembled)" 2
# sngrep-ipip.pcap carries 2 of its 4 SIP-over-TCP packets inside IP-in-IP (tshark:
# eth:ethertype:ip:ip:tcp:sip); heplify-ipip0.pcap, despite its name, is plain raw IP
"$SIPNAB_BIN" -N -I "$PUBLIC/sngrep-ipip.pcap" --report=json >"$TMPD/r.json"
expect_eq "sngrep-ipip tunnelled packets" "$(json_get "$TMPD/r.json" capture.tunnelled_packets)" 2
"$SIPNAB_BIN" -N -I "$PUBLIC/heplify-ipip0.pcap" --report=json >"$TMPD/r.json"
expect_eq "heplify-ipip0 tunnelled packets" "$(json_get "$TMPD/r.json" capture.tunnelled_packets)" 0
finish
