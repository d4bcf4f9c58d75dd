#!/bin/sh
# bench/carrier.py: the capture it writes agrees with its own --truth file
# (packet counts, SIP counts, per-stream received/lost/reordered), it is
# byte-for-byte deterministic, and shared stream pairs continue their RTP
# streams (seq +1, timestamp = media clock).  Exit 0 pass, 1 fail, 77 skip.
. "$(dirname "$0")/lib.sh"
GEN="$SIPNAB_SRCDIR/bench/carrier.py"
need_python3
if [ ! -f "$GEN" ]; then
	echo "SKIP: $GEN not found"
	exit 77
fi

# check.py PCAP TRUTH: parses the pcap with the standard library, prints
# KEY=VALUE lines, and one "mismatch: ..." line per disagreement with TRUTH.
cat >"$TMPD/check.py" <<'EOF'
import json, struct, sys
from collections import Counter
data = open(sys.argv[1], "rb").read()
truth = json.load(open(sys.argv[2]))
magic, vmaj, vmin, _, _, snap, link = struct.unpack_from("<IHHiIII", data, 0)
out = []
def bad(msg):
    out.append("mismatch: " + msg)
if (magic, vmaj, vmin, link) != (0xA1B2C3D4, 2, 4, 1):
    bad("pcap header %x %d.%d linktype %d" % (magic, vmaj, vmin, link))
off, n, sip, rtp, last_t = 24, 0, 0, 0, -1
methods = Counter()
streams = {}      # (src, dst, ssrc) -> [received, [seqs in arrival order], [(t_us, rtp_ts)]]
def ip(b):
    return "%d.%d.%d.%d" % tuple(b)
while off < len(data):
    sec, usec, caplen, origlen = struct.unpack_from("<IIII", data, off)
    off += 16
    pkt = data[off:off + caplen]
    off += caplen
    n += 1
    t = sec * 1000000 + usec
    if t < last_t:
        bad("packet %d goes back in time" % n)
    last_t = t
    if caplen != origlen or len(pkt) != caplen or pkt[12:14] != b"\x08\x00":
        bad("packet %d: not a whole Ethernet/IPv4 frame" % n)
        continue
    s = sum(struct.unpack_from("!10H", pkt, 14))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    if s != 0xFFFF:
        bad("packet %d: IPv4 header checksum" % n)
    sport, dport, ulen, ucsum = struct.unpack_from("!HHHH", pkt, 34)
    src = "%s:%d" % (ip(pkt[26:30]), sport)
    dst = "%s:%d" % (ip(pkt[30:34]), dport)
    body = pkt[42:]
    if ulen != 8 + len(body) or ucsum != 0:
        bad("packet %d: UDP length/checksum" % n)
    if sport == 5060 and dport == 5060:
        sip += 1
        line = body.split(b"\r\n", 1)[0].decode()
        methods[line.split()[1] if line.startswith("SIP/2.0") else line.split()[0]] += 1
        continue
    rtp += 1
    b0, b1, seq, ts, ssrc = struct.unpack_from("!BBHII", body, 0)
    if b0 != 0x80 or (b1 & 0x7F) != 0 or len(body) != 172:
        bad("packet %d: not RTP/PCMU 20 ms" % n)
    e = streams.setdefault((src, dst, "0x%08X" % ssrc), [0, [], []])
    e[0] += 1
    e[1].append(seq)
    e[2].append((t, ts))
tot = truth["totals"]
for key, got in (("packets", n), ("sip_messages", sip), ("rtp_packets", rtp),
                 ("streams", len(streams))):
    if tot[key] != got:
        bad("%s: pcap %d, truth %d" % (key, got, tot[key]))
if tot["rtp_sent"] - tot["rtp_lost"] != rtp:
    bad("rtp_sent - rtp_lost != RTP packets in the pcap")
for st in truth["streams"]:
    k = (st["src"], st["dst"], st["ssrc"])
    if k not in streams:
        bad("stream %s missing from the pcap" % (k,))
        continue
    recv, seqs, times = streams.pop(k)
    # extend 16-bit seqs relative to the first one sent
    ext = [(q - st["first_seq"]) & 0xFFFF for q in seqs]
    hi, reord = -1, 0
    for x in ext:
        if x < hi:
            reord += 1
        hi = max(hi, x)
    lost_ws = ext[-1] - ext[0] + 1 - recv
    lost_rfc = max(ext) - ext[0] + 1 - recv
    for name, got in (("received", recv), ("lost", st["sent"] - recv), ("reordered", reord),
                      ("lost_wireshark", lost_ws), ("lost_rfc3550", lost_rfc)):
        if st[name] != got:
            bad("%s %s: pcap %d, truth %d" % (k, name, got, st[name]))
    if len(set(ext)) != len(ext) or max(ext) >= st["sent"]:
        bad("%s: duplicate or unsent sequence numbers" % (k,))
    if st["reordered"] == 0 and tot["rtp_lost"] == 0:
        # unimpaired: RTP clock == arrival clock (8 ticks per ms), seq +1
        for (t0, ts0), (t1, ts1), d in zip(times, times[1:], zip(ext, ext[1:])):
            if d[1] != d[0] + 1 or (ts1 - ts0) & 0xFFFFFFFF != (t1 - t0) * 8 // 1000:
                bad("%s: seq/timestamp do not follow the media clock" % (k,))
                break
for k in streams:
    bad("stream %s not in the truth" % (k,))
print("packets=%d" % n)
print("sip=%d" % sip)
print("rtp=%d" % rtp)
print("streams=%d" % len(truth["streams"]))
print("lost=%d" % tot["rtp_lost"])
print("reordered=%d" % tot["rtp_reordered"])
print("methods=" + ",".join("%s:%d" % kv for kv in sorted(methods.items())))
print("\n".join(out[:20]))
EOF

val() { sed -n "s/^$1=//p" "$2"; }

# impaired capture: the pcap agrees with the truth, stream by stream
python3 "$GEN" --calls 20 --loss 3 --jitter-ms 4 --reorder 2 --seed 3 \
	--out "$TMPD/imp.pcap" --truth "$TMPD/imp.json" 2>"$TMPD/imp.err" ||
	fail "carrier.py (impaired) failed: $(cat "$TMPD/imp.err")"
python3 "$TMPD/check.py" "$TMPD/imp.pcap" "$TMPD/imp.json" >"$TMPD/imp.out" ||
	fail "check.py (impaired) failed"
expect_eq "impaired: mismatches with the truth" "$(grep -c '^mismatch' "$TMPD/imp.out")" 0
grep '^mismatch' "$TMPD/imp.out"
expect_eq "impaired: SIP messages" "$(val sip "$TMPD/imp.out")" 140
expect_eq "impaired: RTP streams" "$(val streams "$TMPD/imp.out")" 40
expect_eq "impaired: packets = 140 SIP + 2000 RTP sent - lost" \
	"$(val packets "$TMPD/imp.out")" $((2140 - $(val lost "$TMPD/imp.out")))
lost=$(val lost "$TMPD/imp.out")
reord=$(val reordered "$TMPD/imp.out")
checks=$((checks + 1))
if [ "$lost" -gt 0 ] && [ "$reord" -gt 0 ]; then pass "impairments present ($lost lost, $reord reordered)"
else fail "impairments missing ($lost lost, $reord reordered)"; fi
grep -q "carrier.py: 20 calls, $(val packets "$TMPD/imp.out") packets" "$TMPD/imp.err" ||
	fail "stderr summary: $(cat "$TMPD/imp.err")"

# same arguments, same bytes
python3 "$GEN" --calls 20 --loss 3 --jitter-ms 4 --reorder 2 --seed 3 \
	--out "$TMPD/imp2.pcap" 2>/dev/null
checks=$((checks + 1))
if cmp -s "$TMPD/imp.pcap" "$TMPD/imp2.pcap"; then pass "deterministic output"
else fail "same arguments gave different bytes"; fi

# unimpaired: 10 calls x 107 packets
python3 "$GEN" --calls 10 --out "$TMPD/c10.pcap" --truth "$TMPD/c10.json" 2>/dev/null ||
	fail "carrier.py --calls 10 failed"
python3 "$TMPD/check.py" "$TMPD/c10.pcap" "$TMPD/c10.json" >"$TMPD/c10.out" ||
	fail "check.py (10 calls) failed"
expect_eq "10 calls: mismatches with the truth" "$(grep -c '^mismatch' "$TMPD/c10.out")" 0
grep '^mismatch' "$TMPD/c10.out"
expect_eq "10 calls: packets" "$(val packets "$TMPD/c10.out")" 1070
expect_eq "10 calls: SIP messages" "$(val sip "$TMPD/c10.out")" 70
expect_eq "10 calls: RTP packets" "$(val rtp "$TMPD/c10.out")" 1000
expect_eq "10 calls: SIP methods and codes" "$(val methods "$TMPD/c10.out")" \
	"100:10,180:10,200:20,ACK:10,BYE:10,INVITE:10"

# shared stream pairs: 10 calls on 2 pairs continue 4 streams of 250 packets
python3 "$GEN" --calls 10 --stream-pairs 2 --call-ids 3 --out "$TMPD/sp.pcap" \
	--truth "$TMPD/sp.json" 2>/dev/null || fail "carrier.py --stream-pairs 2 failed"
python3 "$TMPD/check.py" "$TMPD/sp.pcap" "$TMPD/sp.json" >"$TMPD/sp.out" ||
	fail "check.py (stream pairs) failed"
expect_eq "shared pairs: mismatches with the truth" "$(grep -c '^mismatch' "$TMPD/sp.out")" 0
grep '^mismatch' "$TMPD/sp.out"
expect_eq "shared pairs: streams" "$(val streams "$TMPD/sp.out")" 4
expect_eq "shared pairs: packets per stream" "$(json_get "$TMPD/sp.json" streams.0.received)" 250

finish
