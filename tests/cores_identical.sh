#!/bin/sh
# The multi-core engine gives the same report as one core, byte for byte: --report=json for
# --cores 1, 2, 3, 4 and 8 on every capture the tests use (corpus, public captures when
# present, and a generated carrier capture whose RTP streams continue across calls), and the
# text and CSV reports of the carrier capture for --cores 1, 2 and 3.
. "$(dirname "$0")/lib.sh"
python3 "$SIPNAB_SRCDIR/bench/carrier.py" --calls 300 --call-ids 30 --stream-pairs 20 \
	--loss 1 --jitter-ms 3 --reorder 1 --seed 5 --out "$TMPD/carrier.pcap" 2>/dev/null ||
	fail "carrier.py"
# Timeouts must run on a flow's own packets: here a SIP datagram between hosts A and B is
# fragmented, and between its two fragments (1 s apart) hosts C and D exchange a packet stamped
# 60 s later (a clock jump, or a capture merged from two sources). Whether the datagram is
# reassembled must not depend on C-D traffic, which another worker may handle.
python3 - "$TMPD/clockjump.pcap" <<'PY'
import struct, sys
def ip4(src, dst, ident, flags_off, proto, payload):
    h = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(payload), ident, flags_off, 64, proto,
                    0, bytes(src), bytes(dst))
    s = sum(struct.unpack("!10H", h))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return h[:10] + struct.pack("!H", ~s & 0xFFFF) + h[12:] + payload
def eth(p):
    return b"\x00\x11\x22\x33\x44\x55\x66\x77\x88\x99\xaa\xbb\x08\x00" + p
sip = (b"OPTIONS sip:b@10.0.0.2 SIP/2.0\r\nVia: SIP/2.0/UDP 10.0.0.1:5060;branch=z9hG4bK1\r\n"
       b"From: <sip:a@10.0.0.1>;tag=1\r\nTo: <sip:b@10.0.0.2>\r\nCall-ID: jump@10.0.0.1\r\n"
       b"CSeq: 1 OPTIONS\r\nMax-Forwards: 70\r\nContent-Length: 0\r\n\r\n")
udp = struct.pack("!HHHH", 5060, 5060, 8 + len(sip), 0) + sip
A, B, C, D = [10, 0, 0, 1], [10, 0, 0, 2], [10, 9, 9, 1], [10, 9, 9, 2]
cut = 64
recs = [(0, eth(ip4(A, B, 7, 0x2000, 17, udp[:cut]))),
        (60, eth(ip4(C, D, 8, 0, 17, struct.pack("!HHHH", 4000, 4001, 12, 0) + b"ping"))),
        (1, eth(ip4(A, B, 7, cut // 8, 17, udp[cut:])))]
out = [struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1)]
for sec, frame in recs:
    out.append(struct.pack("<IIII", 1767225600 + sec, 0, len(frame), len(frame)) + frame)
open(sys.argv[1], "wb").write(b"".join(out))
PY
for n in 1 2 3; do
	"$SIPNAB_BIN" -N -I "$TMPD/clockjump.pcap" --cores $n --report=json >"$TMPD/j.json"
	expect_eq "clock jump --cores $n: fragmented SIP reassembled" \
		"$(json_get "$TMPD/j.json" capture.sip_messages)" 1
done

# one Call-ID and two streams per call: 260 streams, so the streams array is rendered in
# blocks on several threads too (from 256 elements: ana_report.c JSON_PAR_MIN)
python3 "$SIPNAB_SRCDIR/bench/carrier.py" --calls 130 --call-ids 0 --stream-pairs 0 \
	--out "$TMPD/unique.pcap" 2>/dev/null || fail "carrier.py unique"
# selections render the calls array on several threads too (300 calls: several blocks)
"$SIPNAB_BIN" -N -I "$TMPD/carrier.pcap" --report=json --problems --cores 1 >"$TMPD/p1.json"
"$SIPNAB_BIN" -N -I "$TMPD/carrier.pcap" --report=json --problems --cores 3 >"$TMPD/p3.json"
if cmp -s "$TMPD/p1.json" "$TMPD/p3.json"; then
	pass "carrier --problems --cores 3 = --cores 1"
else
	fail "carrier --problems --cores 3 differs from --cores 1"
fi
# the text and CSV reports are made on several threads too (rows in blocks of 128 calls, CSV
# lines in blocks of 64): the same bytes as one thread, with and without a selection
for fmt in text csv; do
	for sel in "" --problems; do
		"$SIPNAB_BIN" -N -I "$TMPD/carrier.pcap" --report=$fmt $sel --cores 1 >"$TMPD/r1.$fmt" ||
			fail "carrier --report=$fmt $sel: exit $?"
		for n in 2 3; do
			"$SIPNAB_BIN" -N -I "$TMPD/carrier.pcap" --report=$fmt $sel --cores $n \
				>"$TMPD/rn.$fmt" || fail "carrier --report=$fmt $sel --cores $n: exit $?"
			checks=$((checks + 1))
			if cmp -s "$TMPD/r1.$fmt" "$TMPD/rn.$fmt"; then
				pass "carrier --report=$fmt $sel --cores $n = --cores 1"
			else
				fail "carrier --report=$fmt $sel --cores $n differs from --cores 1"
				diff "$TMPD/r1.$fmt" "$TMPD/rn.$fmt" | head -10
			fi
		done
	done
done
# 16,800 SIP messages: the workers' messages are merged in 2, 3 and 4 parts on as many
# threads (eng_merge.c merges in parts of at least 4,096 messages)
python3 "$SIPNAB_SRCDIR/bench/carrier.py" --calls 2400 --call-ids 40 --stream-pairs 30 \
	--jitter-ms 2 --seed 9 --out "$TMPD/many.pcap" 2>/dev/null || fail "carrier.py many"
# 2,200 RTP flows in one worker: the build gives the flows it has turned into streams back to
# the kernel as it goes (every 2,048); every stream must still come out whole
python3 "$SIPNAB_SRCDIR/bench/carrier.py" --calls 1100 --call-ids 0 --stream-pairs 0 --seed 3 \
	--out "$TMPD/flows.pcap" 2>/dev/null || fail "carrier.py flows"
for n in 1 2; do
	"$SIPNAB_BIN" -N -I "$TMPD/flows.pcap" --cores $n --report=json >"$TMPD/f.json"
	expect_eq "2,200 flows --cores $n: streams" "$(json_get "$TMPD/f.json" summary.streams)" 2200
	expect_eq "2,200 flows --cores $n: RTP packets" "$(json_get "$TMPD/f.json" capture.rtp_packets)" 110000
done
# the reader's paths: the one-thread split reader and the single reader with workers
SIPNAB_FORCE_SPLIT=1 "$SIPNAB_BIN" -N -I "$TMPD/carrier.pcap" --report=json --cores 1 >"$TMPD/s1.json"
SIPNAB_NO_SPLIT=1 "$SIPNAB_BIN" -N -I "$TMPD/carrier.pcap" --report=json --cores 2 >"$TMPD/s2.json"
"$SIPNAB_BIN" -N -I "$TMPD/carrier.pcap" --report=json --cores 1 >"$TMPD/s0.json"
expect_eq "split reader on one thread" "$(cmp -s "$TMPD/s0.json" "$TMPD/s1.json" && echo same)" same
expect_eq "single reader with a worker" "$(cmp -s "$TMPD/s0.json" "$TMPD/s2.json" && echo same)" same
# several files merged: each read in windows of its own, which at two cores and more stay
# until the workers are done with their records; with 4 KiB windows (SIPNAB_MERGE_WINDOW) a
# refill waits for them every few records, and one file without a descriptor of its own (past
# the limit of open files: opened again for each window) is merged with the others
"$SIPNAB_BIN" -N -I "$TMPD/carrier.pcap" -I "$TMPD/unique.pcap" -I "$TMPD/many.pcap" \
	--report=json --cores 1 >"$TMPD/m1.json" || fail "merge --cores 1: exit $?"
for n in 2 3 4 8; do
	for v in "" "4096" "4096 66"; do
		set -- $v
		# with 66 descriptors, the first two files keep theirs, the third is opened again
		(if [ -n "${2:-}" ]; then ulimit -n "$2"; fi
		 SIPNAB_MERGE_WINDOW=${1:-} exec "$SIPNAB_BIN" -N -I "$TMPD/carrier.pcap" \
			-I "$TMPD/unique.pcap" -I "$TMPD/many.pcap" --report=json --cores $n) \
			>"$TMPD/mn.json" || fail "merge --cores $n $v: exit $?"
		expect_eq "three files merged, --cores $n${1:+, windows of $1 bytes}${2:+, $2 descriptors}: the report" \
			"$(cmp -s "$TMPD/m1.json" "$TMPD/mn.json" && echo same)" same
	done
done

set -- "$SIPNAB_CORPUS"/pcap/*.pcap "$TMPD/carrier.pcap" "$TMPD/clockjump.pcap" "$TMPD/unique.pcap" \
	"$TMPD/many.pcap" "$TMPD/flows.pcap"
if [ -d "$PUBLIC" ]; then
	set -- "$@" "$PUBLIC"/*.pcap
fi
# same_as_one_core WHAT FILE: the report in $TMPD/cn.json is the one in $TMPD/c1.json
same_as_one_core() {
	checks=$((checks + 1))
	if cmp -s "$TMPD/c1.json" "$TMPD/cn.json"; then
		pass "$(basename "$2") $1 = --cores 1"
	else
		fail "$(basename "$2") $1 differs from --cores 1"
		diff "$TMPD/c1.json" "$TMPD/cn.json" | head -10
	fi
}
# and --cores 3 again with the build's parts and blocks at their smallest (SIPNAB_GROUP_MIN:
# the grouping by Call-ID runs in as many parts as threads from this many messages on, 4,096
# by default; SIPNAB_ANN_BLOCK: messages per block of the announcement index, 2,048), so that
# small captures go through them too
for f in "$@"; do
	"$SIPNAB_BIN" -N -I "$f" --report=json --cores 1 >"$TMPD/c1.json" || fail "$f: exit $?"
	for n in 2 3 4 8; do
		"$SIPNAB_BIN" -N -I "$f" --report=json --cores $n >"$TMPD/cn.json" || fail "$f --cores $n: exit $?"
		same_as_one_core "--cores $n" "$f"
	done
	SIPNAB_GROUP_MIN=2 SIPNAB_ANN_BLOCK=3 "$SIPNAB_BIN" -N -I "$f" --report=json --cores 3 \
		>"$TMPD/cn.json" || fail "$f --cores 3, small parts: exit $?"
	same_as_one_core "--cores 3, small parts and blocks" "$f"
done
finish
