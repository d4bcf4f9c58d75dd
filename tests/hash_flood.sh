#!/bin/sh
# A capture cannot choose where its keys land in sipnab's hash tables, and the report does not
# depend on where they land.
#
# The flood capture has 200,000 one-packet RTP flows from one source to 200,000 destinations,
# each SSRC chosen so that destination + SSRC is the same sum. The flow hash before sn_hash.h
# added those two fields, so every flow had the same hash and each new flow walked all the
# others: 0.66 s for 20,000 flows, 3 s for 40,000, 141 s for 200,000. Keyed, it takes a
# fraction of a second; the bound below, 20 s, is 40 times what it needs under
# AddressSanitizer.
# Then the same reports with three hash keys (SIPNAB_HASH_SEED) must be byte-identical.
# Exit 0 pass, 1 fail, 77 skip.
. "$(dirname "$0")/lib.sh"
need_python3
if ! command -v timeout >/dev/null 2>&1; then
	echo "SKIP: timeout (coreutils) not found"
	exit 77
fi
FLOWS=200000

# flood.py N OUT: N UDP packets 192.0.2.1:40000 -> 10.x.y.z:40002 with an RTP header whose
# SSRC is 0xffffffff - (the destination's four bytes read little-endian, xor 4)
cat >"$TMPD/flood.py" <<'EOF'
import struct, sys
n, out = int(sys.argv[1]), sys.argv[2]
def csum(b):
    s = sum(struct.unpack('!%dH' % (len(b) // 2), b))
    s = (s >> 16) + (s & 0xffff)
    return ~(s + (s >> 16)) & 0xffff
with open(out, 'wb') as f:
    f.write(struct.pack('<IHHiIII', 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
    src = bytes([192, 0, 2, 1])
    for i in range(1, n + 1):
        dst = bytes([10, (i >> 16) & 255, (i >> 8) & 255, i & 255])
        ssrc = 0xffffffff - (struct.unpack('<I', dst)[0] ^ 4)
        rtp = struct.pack('!BBHII', 0x80, 0, i & 0xffff, i * 160 & 0xffffffff, ssrc) + bytes(20)
        udp = struct.pack('!HHHH', 40000, 40002, 8 + len(rtp), 0) + rtp
        ip = struct.pack('!BBHHHBBH4s4s', 0x45, 0, 20 + len(udp), i & 0xffff, 0, 64, 17, 0,
                         src, dst)
        ip = ip[:10] + struct.pack('!H', csum(ip)) + ip[12:]
        frame = bytes(6) + bytes([2, 0, 0, 0, 0, 1]) + b'\x08\x00' + ip + udp
        f.write(struct.pack('<IIII', 1700000000 + i // 100000, i % 100000 * 10, len(frame),
                            len(frame)) + frame)
EOF
python3 "$TMPD/flood.py" "$FLOWS" "$TMPD/flood.pcap" || fail "flood.py failed"

for cores in 1 2; do
	timeout 20 "$SIPNAB_BIN" -N -I "$TMPD/flood.pcap" --report=json --cores "$cores" \
		>"$TMPD/flood$cores.json" 2>"$TMPD/flood$cores.err"
	rc=$?
	expect_eq "flood, $cores core(s): exit status (124: still running after 20 s)" "$rc" 0
	expect_eq "flood, $cores core(s): packets read" \
		"$(json_get "$TMPD/flood$cores.json" capture.packets 2>/dev/null)" "$FLOWS"
done

# the report is the same whatever the hash key: a call capture (Call-IDs, tags, transactions,
# SDP endpoints, streams), the two bundled samples (one over TCP) and the flood
python3 "$SIPNAB_SRCDIR/bench/carrier.py" --calls 300 --call-ids 20 --stream-pairs 10 \
	--out "$TMPD/calls.pcap" 2>/dev/null || fail "carrier.py failed"
for f in "$TMPD/calls.pcap" "$SIPNAB_CORPUS/pcap/sipp-g711-dtmf.pcap" \
	"$SIPNAB_CORPUS/pcap/sipp-tcp-g711-dtmf.pcap" "$TMPD/flood.pcap"; do
	name=$(basename "$f")
	"$SIPNAB_BIN" -N -I "$f" --report=json --cores 2 >"$TMPD/$name.json" 2>&1 ||
		fail "$name, random key: sipnab failed"
	for seed in 1 0xfedcba9876543210; do
		SIPNAB_HASH_SEED=$seed "$SIPNAB_BIN" -N -I "$f" --report=json --cores 2 \
			>"$TMPD/seed.json" 2>"$TMPD/seed.err" || fail "$name, key $seed: sipnab failed"
		if cmp -s "$TMPD/seed.json" "$TMPD/$name.json"; then same=same; else same=different; fi
		expect_eq "$name: report with key $seed against a random key" "$same" same
	done
done
expect_eq "calls.pcap: calls in the report" "$(python3 -c 'import json,sys
print(len(json.load(open(sys.argv[1]))["calls"]))' "$TMPD/calls.pcap.json")" 300

# a key that is not a number is reported and replaced by a random one
SIPNAB_HASH_SEED=zz "$SIPNAB_BIN" -N -I "$SIPNAB_CORPUS/pcap/sipp-g711-dtmf.pcap" --report=json \
	>"$TMPD/bad.json" 2>"$TMPD/bad.err"
expect_eq "SIPNAB_HASH_SEED=zz: exit status" "$?" 0
expect_eq "SIPNAB_HASH_SEED=zz: message" "$(head -1 "$TMPD/bad.err")" \
	"sipnab: SIPNAB_HASH_SEED='zz' is not a number; the hash key is random"
finish
