#!/bin/sh
# A stream's codec and clock come from the SDP format of its payload type wherever the format
# stands on the m= line, in SDP as large as browsers send: a WebRTC offer lists a dozen audio
# formats and 30-40 video ones, with 150 and more a= lines in the video section. Cases, one
# call each (offer and answer alike):
#   1. 12 formats, RTP in the 11th (PT 111, opus/48000/2): codec "opus", clock 48000;
#   2. 12 formats, RTP in the 12th (PT 0, static, also mapped by rtpmap): codec "PCMU";
#   3. 40 formats, RTP in the 40th (PT 127, rtpmap "L16/44100/2"): codec "L16", clock 44100;
#   4. the 12 audio formats of case 1 and a video line of 40 formats with 5 a= lines each
#      (200): the audio stream (PT 111) gets "opus", 48000.
# Each at --cores 1 and 2, with the same report.
# Exit 0 pass, 1 fail, 77 skip.
. "$(dirname "$0")/lib.sh"
need_python3

cat >"$TMPD/gen.py" <<'PY'
import struct
import sys

sys.path.insert(0, sys.argv[2])
from sip_pcap import SipPcap

cap = SipPcap(sys.argv[1])
A, B = "10.0.0.1", "10.0.0.2"


def sdp(host, port, fmts, video=None):
    """An SDP body announcing fmts [(pt, rtpmap or None)] on one audio line, then, given
    video formats, a video line with an a=rtpmap, a=fmtp and three a=rtcp-fb lines each."""
    lines = ["v=0", "o=- 1 1 IN IP4 %s" % host, "s=-", "c=IN IP4 %s" % host, "t=0 0",
             "m=audio %d RTP/AVP %s" % (port, " ".join(str(pt) for pt, _ in fmts))]
    lines += ["a=rtpmap:%d %s" % (pt, m) for pt, m in fmts if m]
    if video:
        lines.append("m=video %d RTP/AVPF %s" % (port + 2, " ".join(str(pt) for pt, _ in video)))
        for pt, m in video:
            lines += ["a=rtpmap:%d %s" % (pt, m), "a=fmtp:%d level-asymmetry-allowed=1" % pt,
                      "a=rtcp-fb:%d nack" % pt, "a=rtcp-fb:%d nack pli" % pt,
                      "a=rtcp-fb:%d ccm fir" % pt]
    return "\n".join(lines) + "\n"


def call(n, fmts, pt, video=None):
    cid = "Call-ID: fmts%d@pbx\n" % n
    via = "Via: SIP/2.0/UDP %s:5060;branch=z9hG4bKf%d\n" % (A, n)
    ft = "From: <sip:alice@%s>;tag=a%d\nTo: <sip:bob@%s>%%s\n" % (A, n, B)
    pa, pb = 20000 + 10 * n, 30000 + 10 * n
    offer, answer = sdp(A, pa, fmts, video), sdp(B, pb, fmts, video)
    cap.packet(A, B, "INVITE sip:bob@%s SIP/2.0\n" % B + via + ft % "" + cid
               + "CSeq: 1 INVITE\nContent-Type: application/sdp\nContent-Length: %d\n\n"
               % len(offer.replace("\n", "\r\n")) + offer)
    cap.packet(B, A, "SIP/2.0 200 OK\n" + via + ft % (";tag=b%d" % n) + cid
               + "CSeq: 1 INVITE\nContent-Type: application/sdp\nContent-Length: %d\n\n"
               % len(answer.replace("\n", "\r\n")) + answer)
    cap.packet(A, B, "ACK sip:bob@%s SIP/2.0\n" % B + via.replace("f%d" % n, "g%d" % n)
               + ft % (";tag=b%d" % n) + cid + "CSeq: 1 ACK\nContent-Length: 0\n\n")
    for i in range(20):
        rtp = struct.pack("!BBHII", 0x80, pt, 100 + i, 960 * i, 0x1000 + n) + b"\0" * 40
        cap.udp(A, pa, B, pb, rtp, dt=0.02)
    cap.packet(A, B, "BYE sip:bob@%s SIP/2.0\n" % B + via.replace("f%d" % n, "h%d" % n)
               + ft % (";tag=b%d" % n) + cid + "CSeq: 2 BYE\nContent-Length: 0\n\n")
    cap.packet(B, A, "SIP/2.0 200 OK\n" + via.replace("f%d" % n, "h%d" % n)
               + ft % (";tag=b%d" % n) + cid + "CSeq: 2 BYE\nContent-Length: 0\n\n")


twelve = [(96, "red/48000/2"), (97, "G722/8000"), (98, "ILBC/8000"), (99, "ISAC/16000"),
          (100, "ISAC/32000"), (101, "telephone-event/8000"), (102, "CN/32000"),
          (103, "CN/16000"), (104, "telephone-event/48000"), (105, "PCMA/8000"),
          (111, "opus/48000/2"), (0, "PCMU/8000")]
call(1, twelve, 111)
call(2, twelve, 0)
many = [(pt, "X%d/8000" % pt) for pt in range(88, 127)] + [(127, "L16/44100/2")]
call(3, many, 127)
call(4, twelve, 111, [(pt, "H264/90000") for pt in range(35, 75)])
cap.close()
PY
python3 "$TMPD/gen.py" "$TMPD/fmts.pcap" "$SIPNAB_SRCDIR/tests" || fail "generator failed"

for cores in 1 2; do
	"$SIPNAB_BIN" -N -I "$TMPD/fmts.pcap" --report=json --cores "$cores" \
		>"$TMPD/c$cores.json" || fail "sipnab --cores $cores failed"
done
expect_eq "--cores 2: same report" "$(cmp -s "$TMPD/c1.json" "$TMPD/c2.json" && echo same)" same
python3 - "$TMPD/c1.json" >"$TMPD/streams.txt" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for s in d["streams"]:
    print("%s %s %s %s" % (s["call_id"], s["payload_type"], s["codec"] or '""', s["clock_rate"]))
PY
cat "$TMPD/streams.txt"
expect_eq "streams" "$(wc -l <"$TMPD/streams.txt" | tr -d ' ')" 4
expect_eq "11th of 12 formats" "$(grep '^fmts1@' "$TMPD/streams.txt")" "fmts1@pbx 111 opus 48000"
expect_eq "12th of 12 formats" "$(grep '^fmts2@' "$TMPD/streams.txt")" "fmts2@pbx 0 PCMU 8000"
expect_eq "40th of 40 formats" "$(grep '^fmts3@' "$TMPD/streams.txt")" "fmts3@pbx 127 L16 44100"
expect_eq "audio beside 40 video formats" "$(grep '^fmts4@' "$TMPD/streams.txt")" \
	"fmts4@pbx 111 opus 48000"

echo "$checks checks, $fails failed"
[ "$fails" -eq 0 ]
