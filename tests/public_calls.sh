#!/bin/sh
# Calls, dialogs and call states that sipnab reconstructs from the public captures. Checked by
# hand against the messages (tshark -Y 'sip.Call-ID==...') and against sngrep 1.6's call list:
# - sngrep-aaa.pcap: sngrep lists the same 6 dialogs (2 REGISTER, 4 INVITE) with the same
#   message counts. It shows the 480 "Temporarily Unavailable" (Q.850 cause 21, call rejected)
#   call as BUSY; by REPORT.md BUSY is 486/600 only, so sipnab says REJECTED. The INVITE that
#   the caller CANCELs and the server ends with 408 is CANCELLED in both.
# - retransmissions: a request or response seen again on the same hop. sngrep-aaa has 3
#   INVITE copies and 11 CANCEL copies in one call (12) and one retransmitted INVITE in another.
. "$(dirname "$0")/lib.sh"
need_public

summary() { # file -> "calls dialogs streams STATE=n ..."
	"$SIPNAB_BIN" -N -I "$PUBLIC/$1" --report=json | python3 -c '
import json, sys
d = json.load(sys.stdin)
s = d["summary"]
print(s["calls"], s["dialogs"], s["streams"],
      " ".join("%s=%d" % kv for kv in s["by_state"].items()))'
}

calls() { # file -> one line per call: kind state final retransmissions streams
	"$SIPNAB_BIN" -N -I "$PUBLIC/$1" --report=json | python3 -c '
import json, sys
for c in json.load(sys.stdin)["calls"]:
    print(c["kind"], c["state"], c["final_code"], c["messages"], c["retransmissions"],
          len(c["streams"]), c["hangup"])'
}

expect_eq "sngrep-aaa summary" "$(summary sngrep-aaa.pcap)" "6 1 1 COMPLETED=1 CANCELLED=1 REJECTED=4"
expect_eq "sngrep-aaa calls" "$(calls sngrep-aaa.pcap | tr '\n' '|')" \
	"REGISTER REJECTED 401 26 0 0 None|INVITE CANCELLED 408 18 12 0 None|INVITE REJECTED 403 8 2 0 None|REGISTER COMPLETED 200 14 0 0 None|INVITE REJECTED 403 7 0 0 None|INVITE REJECTED 480 8 0 1 None|"
expect_eq "heplify-sip_ipv4_tcp" "$(calls heplify-sip_ipv4_tcp.pcap)" "INVITE COMPLETED 200 7 0 2 callee"
expect_eq "FAX call summary" "$(summary heplify-FAX-Call-t38-CA-TDM-SIP-FB-1.pcap)" "3 3 2 COMPLETED=3"
expect_eq "heplify-ipip0" "$(summary heplify-ipip0.pcap)" "3 0 0 CALL_SETUP=1 REJECTED=2"
# its From and To URIs hold IPv6 addresses without brackets (sip:9876@fe80:0:0:0:21a:...), which
# RFC 3261 does not allow; the tags are still there, the BYE ends the dialog, and sngrep 1.6 too
# shows the call COMPLETED
expect_eq "heplify-sip_ipv6_udp" "$(calls heplify-sip_ipv6_udp.pcap)" "INVITE COMPLETED 200 6 0 0 caller"
expect_eq "heplify-sip_sctp" "$(calls heplify-sip_sctp.pcap)" "INVITE REJECTED 403 4 0 0 None"
expect_eq "heplify-sip_ipv4_tcp_retrans" "$(calls heplify-sip_ipv4_tcp_retrans.pcap)" "REGISTER COMPLETED 200 8 0 0 None"
expect_eq "websocket summary" "$(summary heplify-sip_tcp_websocket.pcap)" "3 2 0 COMPLETED=3"
expect_eq "sngrep-ipip" "$(calls sngrep-ipip.pcap)" "INVITE COMPLETED 200 4 0 0 caller"
expect_eq "sngrep-ipv6frag" "$(calls sngrep-ipv6frag.pcap)" "INVITE IN_CALL 200 32 1 0 None"
expect_eq "tcp_fragmented summary" "$(summary heplify-sip_ipv4_tcp_fragmented.pcap)" \
	"70 60 0 RINGING=2 IN_CALL=20 COMPLETED=43 CANCELLED=2 REJECTED=1 BUSY=1 FAILED=1"

# -c keeps only INVITE calls
n=$("$SIPNAB_BIN" -N -c -I "$PUBLIC/sngrep-aaa.pcap" --report=json | python3 -c 'import json,sys; print(json.load(sys.stdin)["summary"]["calls"])')
expect_eq "sngrep-aaa INVITE calls (-c)" "$n" 4
finish
