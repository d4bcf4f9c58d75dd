#!/bin/sh
# --cores N reads one capture file in chunks on N threads (eng_split.c): a chunk's first record
# is found by resynchronisation, and every chunk is checked against where the chunk before it
# ended (with the pcapng state it ended with) and read again from there when they differ.
# Whatever the chunk size, the report equals --cores 1 byte for byte, and so do the exit
# status and the warnings. Captures: the two sample calls; the sample in big-endian nanosecond
# pcap; a pcap carrying little pcap files in UDP payloads (resynchronisation is fooled, the
# chunk is read again); pcapng files whose state changes on the way (an IDB in the middle, a
# second big-endian section, SPBs, nanosecond timestamps, an SPB after a packet-less chunk);
# cut and corrupt pcap and pcapng files (the packets before the damage); the public captures;
# and the memory of many threads (the chunks shrink so that the bytes in flight stay bounded).
# The threads read the chunks through the file's mapping under its read lease (the "2" and "3"
# runs; tests/read_lease.sh), or copy them into buffers of their own with pread() when there
# is no lease (SIPNAB_MAPPED=0, the "2p" runs), reading a record that reaches past a buffer into
# one of its own; SIPNAB_MAPPED=1 (the "2m" runs) reads through the mapping with no lease and
# larger chunks. --cores 1 reads the file in windows of its own.
# SIPNAB_SPLIT_CHUNK=BYTES makes the chunks small; with SIPNAB_TIMING=1 the chunked path prints
# "K chunks of B bytes, R read again", which every run must show (no silent fallback).
. "$(dirname "$0")/lib.sh"
unset SIPNAB_SPLIT_CHUNK SIPNAB_NO_SPLIT SIPNAB_TIMING
S="$SIPNAB_CORPUS/pcap/sipp-g711-dtmf.pcap"

# Every capture is the sample rewritten record by record; meta.sh gets the expected counts
# and the chunk sizes that put a chunk boundary where it matters.
python3 - "$S" "$TMPD" <<'PY' || fail "generating the captures"
import struct, sys

sample, out = sys.argv[1], sys.argv[2]
raw = open(sample, "rb").read()
assert struct.unpack("<I", raw[:4])[0] == 0xA1B2C3D4
recs = []  # (sec, usec, frame)
off = 24
while off < len(raw):
    sec, usec, incl, orig = struct.unpack("<IIII", raw[off:off + 16])
    recs.append((sec, usec, raw[off + 16:off + 16 + incl]))
    off += 16 + incl
meta = open(out + "/meta.sh", "w")


def var(name, value):
    meta.write("%s=%s\n" % (name, value))


def pcap(records):
    """A little-endian microsecond pcap, and the offset of every record."""
    b = bytearray(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 262144, 1))
    offs = []
    for sec, usec, frame in records:
        offs.append(len(b))
        b += struct.pack("<IIII", sec, usec, len(frame), len(frame)) + frame
    return bytes(b), offs


def chunk_hitting(first, lo, hi, kmin, kmax):
    """A chunk size in [kmin, kmax] that puts a chunk boundary in [lo, hi]."""
    for k in range(kmin, kmax + 1):
        if first + (lo - first + k - 1) // k * k <= hi:
            return k
    raise SystemExit("no chunk size puts a boundary in [%d, %d]" % (lo, hi))


def udp_frame(payload):
    """Ethernet + IPv4 + UDP between two hosts the sample does not use."""
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 28 + len(payload), 1, 0, 64, 17, 0,
                     bytes([10, 77, 0, 1]), bytes([10, 77, 0, 2]))
    s = sum(struct.unpack("!10H", ip))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    ip = ip[:10] + struct.pack("!H", ~s & 0xFFFF) + ip[12:]
    udp = struct.pack("!HHHH", 40000, 40001, 8 + len(payload), 0)
    return b"\x02\0\0\0\0\x02\x02\0\0\0\0\x01\x08\x00" + ip + udp + payload


data, offs = pcap(recs)

# --- the sample in big-endian nanosecond pcap
b = bytearray(struct.pack(">IHHiIII", 0xA1B23C4D, 2, 4, 0, 0, 262144, 1))
for sec, usec, frame in recs:
    b += struct.pack(">IIII", sec, usec * 1000, len(frame), len(frame)) + frame
open(out + "/be-ns.pcap", "wb").write(b)

# --- a pcap whose UDP payloads carry a whole little pcap (header and 10 records with
# plausible times): from inside the carrying record, its records chain (into the real record
# after them), so resynchronisation lands on them. The control has zeros instead.
def little_pcap(sec):
    b = struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1)
    for i in range(10):
        b += struct.pack("<IIII", sec + i, 1000 * i, 8, 8) + bytes(range(i, i + 8))
    return b


emb, ctl, carriers = [], [], []
for i, (sec, usec, frame) in enumerate(recs):
    emb.append((sec, usec, frame))
    ctl.append((sec, usec, frame))
    if i % 40 == 20:
        carriers.append(len(emb))
        p = little_pcap(sec)
        emb.append((sec, usec, udp_frame(p)))
        ctl.append((sec, usec, udp_frame(bytes(len(p)))))
b, eoffs = pcap(emb)
open(out + "/emb.pcap", "wb").write(b)
open(out + "/emb-control.pcap", "wb").write(pcap(ctl)[0])
j = carriers[len(carriers) // 2]
var("EMB_CHUNK", chunk_hitting(24, eoffs[j] + 1, eoffs[j + 1] - 24, 4000, 5000))
var("EMB_PACKETS", len(emb))

# --- pcapng


def blk(kind, body, be=False):
    e = ">" if be else "<"
    body += b"\0" * (-len(body) % 4)
    n = len(body) + 12
    return struct.pack(e + "II", kind, n) + body + struct.pack(e + "I", n)


def shb(be=False):
    return blk(0x0A0D0D0A, struct.pack((">" if be else "<") + "IHHq", 0x1A2B3C4D, 1, 0, -1), be)


def idb(link, tsresol=None, be=False):
    e = ">" if be else "<"
    body = struct.pack(e + "HHI", link, 0, 262144)
    if tsresol is not None:
        body += struct.pack(e + "HH", 9, 1) + bytes([tsresol]) + b"\0\0\0"
    return blk(1, body + struct.pack(e + "HH", 0, 0), be)


def epb(ifid, units, frame, be=False):
    e = ">" if be else "<"
    return blk(6, struct.pack(e + "IIIII", ifid, units >> 32, units & 0xFFFFFFFF, len(frame),
                              len(frame)) + frame, be)


def spb(frame):
    return blk(3, struct.pack("<I", len(frame)) + frame)


def isb(size):
    """An interface statistics block of @size bytes, filled by an opt_comment."""
    pad = size - 32
    return blk(5, struct.pack("<IIIHH", 0, 0, 0, 1, pad) + b"c" * pad + b"\0\0\0\0")


def us(sec, usec):
    return sec * 1000000 + usec


def raw_ip(frame):
    assert frame[12:14] == b"\x08\x00"
    return frame[14:]


half = len(recs) // 2 - 100  # before the second call
head = shb() + idb(1)
# (a) an IDB for raw IP (LINKTYPE_RAW) in the middle; later packets alternate interfaces 0, 1
b = bytearray(head)
for i, (sec, usec, frame) in enumerate(recs):
    if i == half:
        b += idb(101)
    if i >= half and i % 2:
        b += epb(1, us(sec, usec), raw_ip(frame))
    else:
        b += epb(0, us(sec, usec), frame)
open(out + "/ng-idb.pcapng", "wb").write(b)
# (b) a second section, big-endian, from the middle on: interface 0 is now raw IP
b = bytearray(head)
for i, (sec, usec, frame) in enumerate(recs):
    if i == half:
        b += shb(True) + idb(101, be=True)
    if i >= half:
        b += epb(0, us(sec, usec), raw_ip(frame), True)
    else:
        b += epb(0, us(sec, usec), frame)
open(out + "/ng-sections.pcapng", "wb").write(b)
# (c) every third RTP packet as an SPB: it has the timestamp of the packet before it
b = bytearray(head)
for i, (sec, usec, frame) in enumerate(recs):
    if i % 3 == 1 and len(frame) == 294:
        b += spb(frame)
    else:
        b += epb(0, us(sec, usec), frame)
open(out + "/ng-spb.pcapng", "wb").write(b)
# (d) nanosecond timestamps (if_tsresol 9) on a second interface that every packet uses
b = bytearray(shb() + idb(1) + idb(1, tsresol=9))
noffs = []
for sec, usec, frame in recs:
    noffs.append(len(b))
    b += epb(1, us(sec, usec) * 1000, frame)
open(out + "/ng-ns.pcapng", "wb").write(b)
c = len(recs) - 2
open(out + "/ng-cut.pcapng", "wb").write(b[:noffs[c] + 40])
bad = 600
b[noffs[bad] + 4:noffs[bad] + 8] = struct.pack("<I", 13)
open(out + "/ng-corrupt.pcapng", "wb").write(b)
var("NG_CUT_PACKETS", c)
var("NG_BAD_PACKETS", bad)
# (e) a pcapng whose UDP payloads carry a little pcapng (SHB, IDB, 10 EPBs, 4-byte aligned);
# its control has zeros instead
def little_pcapng(sec):
    b = b"\0\0" + shb() + idb(1)  # the two bytes align it: the payload starts at 70
    for i in range(10):
        b += epb(0, us(sec + i, 0), bytes(range(i, i + 8)))
    return b


for name, fill in (("ng-emb", False), ("ng-emb-control", True)):
    b = bytearray(head)
    for i, (sec, usec, frame) in enumerate(recs):
        b += epb(0, us(sec, usec), frame)
        if i % 40 == 20:
            p = little_pcapng(sec)
            if i == 500:
                mid = len(b)
            b += epb(0, us(sec, usec), udp_frame(bytes(len(p)) if fill else p))
    open(out + "/" + name + ".pcapng", "wb").write(b)
var("NG_EMB_CHUNK", chunk_hitting(len(head), mid + 1, mid + 28 + 44 + 28 + 20, 4000, 5000))
var("NG_EMB_PACKETS", len(recs) + len(range(20, len(recs), 40)))
# (f) an SPB right after an ISB that fills a chunk exactly: the ISB's chunk holds no packet,
# so the SPB's timestamp is that of the EPB before the ISB, two chunks back
K = 256
first = len(head)
b = bytearray(head)
for i, (sec, usec, frame) in enumerate(recs):
    e = epb(0, us(sec, usec), frame)
    if i == 599:
        # a filler block first, so that this EPB ends on a chunk boundary
        fill = (first - len(b) - len(e)) % K
        if fill:
            b += blk(0x0BAD, b"\0" * (fill + (K if fill < 12 else 0) - 12))
    if i == 600:
        assert (len(b) - first) % K == 0
        b += isb(K) + spb(frame)
    else:
        b += e
open(out + "/ng-isb-spb.pcapng", "wb").write(b)
var("ISB_CHUNK", K)

# --- pcap cut inside a record near the end, and a record header in the middle whose captured
# length is 0x7fffffff; chunk sizes that put a boundary at or inside the damaged record
c = len(recs) - 2  # the BYE of the second call
cut = offs[c] + 16 + 100
assert cut < offs[c + 1]
open(out + "/cut.pcap", "wb").write(data[:cut])
var("CUT_PACKETS", c)
var("CUT_AT_CHUNK", offs[c] - 24)
var("CUT_IN_CHUNK", offs[c] - 24 + 9)
b = bytearray(data)
b[offs[bad] + 8:offs[bad] + 12] = struct.pack("<I", 0x7FFFFFFF)
open(out + "/corrupt.pcap", "wb").write(b)
var("BAD_PACKETS", bad)
var("BAD_AT_CHUNK", offs[bad] - 24)
var("BAD_IN_CHUNK", (offs[bad] - 24 + 5) // 2)
meta.close()
PY
. "$TMPD/meta.sh"

# timing_fields sipnab: timing: K chunks of B bytes, R read again, M through the mapping
timing_fields() {
	chunks=$3
	bytes=$6
	reread=$8
	mapped=${11}
}

# same_as_one_core FILE CHUNK...: --cores 2 and 3, with SIPNAB_SPLIT_CHUNK set to each CHUNK
# ("default": unset), against --cores 1: same report, exit status and warnings, and the timing
# line of the chunked path ($chunk_env and $line are split into words on purpose). The
# --cores 1 report stays in $TMPD/c1.json; "CHUNK CORES K R" lines go to $TMPD/rr.<FILE name>.
same_as_one_core() {
	f=$1
	name=$(basename "$f")
	shift
	: >"$TMPD/rr.$name"
	"$SIPNAB_BIN" -N -I "$f" --report=json --cores 1 >"$TMPD/c1.json" 2>"$TMPD/c1.err"
	rc1=$?
	grep -v "^sipnab: timing:" "$TMPD/c1.err" >"$TMPD/c1.warn"
	for k in "$@"; do
		chunk_env=
		if [ "$k" != default ]; then
			chunk_env="SIPNAB_SPLIT_CHUNK=$k"
		fi
		# 2m: --cores 2 reading through the mapping with no lease; 2p: into buffers
		for n in 2 3 2m 2p; do
			mapped_env=
			if [ "$n" = 2m ]; then
				mapped_env=SIPNAB_MAPPED=1
			elif [ "$n" = 2p ]; then
				mapped_env=SIPNAB_MAPPED=0
			fi
			what="$name --cores $n, chunk $k"
			env $chunk_env $mapped_env SIPNAB_TIMING=1 "$SIPNAB_BIN" -N -I "$f" \
				--report=json --cores ${n%[mp]} >"$TMPD/cn.json" 2>"$TMPD/cn.err"
			rc=$?
			checks=$((checks + 1))
			line=$(grep "^sipnab: timing: .* chunks of .* read again" "$TMPD/cn.err")
			grep -v "^sipnab: timing:" "$TMPD/cn.err" >"$TMPD/cn.warn"
			if [ -z "$line" ]; then
				fail "$what: no chunked-reading timing line (not read in chunks)"
				continue
			fi
			timing_fields $line
			echo "$k $n $chunks $reread" >>"$TMPD/rr.$name"
			if [ "$k" != default ] && [ "$bytes" != "$k" ]; then
				fail "$what: chunks of $bytes bytes"
			elif { [ "$n" = 2p ] && [ "$mapped" != 0 ]; } ||
				{ [ "$n" = 2m ] && [ "$mapped" = 0 ]; }; then
				fail "$what: $mapped of $chunks chunks through the mapping"
			elif [ "$rc" != "$rc1" ]; then
				fail "$what: exit status $rc, --cores 1 gave $rc1"
			elif ! cmp -s "$TMPD/c1.warn" "$TMPD/cn.warn"; then
				fail "$what: stderr differs from --cores 1"
				diff "$TMPD/c1.warn" "$TMPD/cn.warn" | head -6
			elif ! cmp -s "$TMPD/c1.json" "$TMPD/cn.json"; then
				fail "$what: report differs from --cores 1"
				diff "$TMPD/c1.json" "$TMPD/cn.json" | head -10
			else
				pass "$what = --cores 1 ($chunks chunks, $reread read again)"
			fi
		done
	done
}

# reread NAME CHUNK: the "read again" count of NAME's --cores 2 run with that chunk size
reread() {
	awk -v k="$2" '$1 == k && $2 == 2 { print $4 }' "$TMPD/rr.$1"
}

CHUNKS="64 333 4096 default"

# the sample, for reference
"$SIPNAB_BIN" -N -I "$S" --report=json >"$TMPD/sample.json" || fail "sample report"
SIP=$(json_get "$TMPD/sample.json" capture.sip_messages)
PACKETS=$(json_get "$TMPD/sample.json" capture.packets)
FIRST_TS=$(json_get "$TMPD/sample.json" capture.first_ts)
LAST_TS=$(json_get "$TMPD/sample.json" capture.last_ts)

# 1. the sample calls as they are, and in big-endian nanosecond pcap
same_as_one_core "$S" $CHUNKS
same_as_one_core "$SIPNAB_CORPUS/pcap/sipp-tcp-g711-dtmf.pcap" $CHUNKS
same_as_one_core "$TMPD/be-ns.pcap" $CHUNKS
expect_eq "big-endian ns pcap: packets" "$(json_get "$TMPD/c1.json" capture.packets)" "$PACKETS"
expect_eq "big-endian ns pcap: first_ts" "$(json_get "$TMPD/c1.json" capture.first_ts)" "$FIRST_TS"

# gzip input has no mapped bytes to cut: one reader, no chunks, the same report
gzip -c "$S" >"$TMPD/s.pcap.gz"
"$SIPNAB_BIN" -N -I "$TMPD/s.pcap.gz" --report=json --cores 1 >"$TMPD/c1.json"
SIPNAB_TIMING=1 SIPNAB_SPLIT_CHUNK=64 "$SIPNAB_BIN" -N -I "$TMPD/s.pcap.gz" --report=json \
	--cores 2 >"$TMPD/cn.json" 2>"$TMPD/cn.err"
expect_eq "gzip --cores 2: chunk lines" "$(grep -c "chunks of" "$TMPD/cn.err")" 0
cmp -s "$TMPD/c1.json" "$TMPD/cn.json" || fail "gzip --cores 2 differs from --cores 1"

# 2. captures inside UDP payloads fool resynchronisation at a chunk boundary that falls
# inside their carrier: that chunk is read again (the control has zeros in the payloads)
# fooled NAME CONTROL CHUNK
fooled() {
	checks=$((checks + 1))
	r=$(reread "$1" "$3")
	r0=$(reread "$2" "$3")
	if [ "${r:-0}" -gt "${r0:-0}" ]; then
		pass "chunk $3: $1 read $r chunks again, $2 $r0"
	else
		fail "chunk $3: $1 read '$r' chunks again, $2 '$r0': resynchronisation not fooled"
	fi
}
same_as_one_core "$TMPD/emb-control.pcap" $CHUNKS "$EMB_CHUNK"
same_as_one_core "$TMPD/emb.pcap" $CHUNKS "$EMB_CHUNK"
expect_eq "pcap in payloads: packets" "$(json_get "$TMPD/c1.json" capture.packets)" "$EMB_PACKETS"
expect_eq "pcap in payloads: SIP messages" "$(json_get "$TMPD/c1.json" capture.sip_messages)" "$SIP"
expect_eq "chunk $EMB_CHUNK, zeros in the payloads: chunks read again" \
	"$(reread emb-control.pcap "$EMB_CHUNK")" 0
fooled emb.pcap emb-control.pcap "$EMB_CHUNK"
same_as_one_core "$TMPD/ng-emb-control.pcapng" $CHUNKS "$NG_EMB_CHUNK"
same_as_one_core "$TMPD/ng-emb.pcapng" $CHUNKS "$NG_EMB_CHUNK"
expect_eq "pcapng in payloads: packets" "$(json_get "$TMPD/c1.json" capture.packets)" \
	"$NG_EMB_PACKETS"
expect_eq "pcapng in payloads: SIP messages" \
	"$(json_get "$TMPD/c1.json" capture.sip_messages)" "$SIP"
fooled ng-emb.pcapng ng-emb-control.pcapng "$NG_EMB_CHUNK"

# 3. pcapng: every packet and SIP message of the sample, timestamps converted
for c in ng-idb ng-sections ng-spb ng-ns ng-isb-spb; do
	same_as_one_core "$TMPD/$c.pcapng" $CHUNKS "$ISB_CHUNK"
	expect_eq "$c: packets" "$(json_get "$TMPD/c1.json" capture.packets)" "$PACKETS"
	expect_eq "$c: SIP messages" "$(json_get "$TMPD/c1.json" capture.sip_messages)" "$SIP"
	expect_eq "$c: first_ts" "$(json_get "$TMPD/c1.json" capture.first_ts)" "$FIRST_TS"
	expect_eq "$c: last_ts" "$(json_get "$TMPD/c1.json" capture.last_ts)" "$LAST_TS"
done

# 4. damage: the packets before it, the same warning and exit status as --cores 1
same_as_one_core "$TMPD/cut.pcap" $CHUNKS "$CUT_AT_CHUNK" "$CUT_IN_CHUNK"
expect_eq "cut pcap: packets" "$(json_get "$TMPD/c1.json" capture.packets)" "$CUT_PACKETS"
expect_eq "cut pcap: error" "$(json_get "$TMPD/c1.json" capture.input_errors.0.error)" truncated
grep -q "warning: .*cut.pcap: file ends inside a record" "$TMPD/c1.warn" ||
	fail "cut pcap: no warning: $(cat "$TMPD/c1.warn")"
same_as_one_core "$TMPD/corrupt.pcap" $CHUNKS "$BAD_AT_CHUNK" "$BAD_IN_CHUNK"
expect_eq "corrupt pcap: packets" "$(json_get "$TMPD/c1.json" capture.packets)" "$BAD_PACKETS"
expect_eq "corrupt pcap: error" "$(json_get "$TMPD/c1.json" capture.input_errors.0.error)" corrupt
grep -q "warning: .*corrupt.pcap: corrupt record header" "$TMPD/c1.warn" ||
	fail "corrupt pcap: no warning: $(cat "$TMPD/c1.warn")"
same_as_one_core "$TMPD/ng-cut.pcapng" $CHUNKS
expect_eq "cut pcapng: packets" "$(json_get "$TMPD/c1.json" capture.packets)" "$NG_CUT_PACKETS"
expect_eq "cut pcapng: error" "$(json_get "$TMPD/c1.json" capture.input_errors.0.error)" truncated
same_as_one_core "$TMPD/ng-corrupt.pcapng" $CHUNKS
expect_eq "corrupt pcapng: packets" "$(json_get "$TMPD/c1.json" capture.packets)" "$NG_BAD_PACKETS"
expect_eq "corrupt pcapng: error" "$(json_get "$TMPD/c1.json" capture.input_errors.0.error)" corrupt

# 5. the public captures, in small chunks
if [ -d "$PUBLIC" ]; then
	for f in "$PUBLIC"/*.pcap; do
		same_as_one_core "$f" 64 1000
	done
fi

# 6. the file bytes in flight do not grow with the threads: a 65 MB capture at --cores 16
# stays within 32 MiB of --cores 2 (2 MiB chunks for every thread count held 2n + 2 of them
# mapped in, and n record lists each: +69 MiB at 16 threads). The bound was 24 MiB while the
# chunks were mapped; with the chunk buffers (at most n + 2) the sanitizer build
# measured 22.2-24.3 MiB between the two (a plain build 13-22), so it failed now and then
# for what it is not about
python3 "$SIPNAB_SRCDIR/bench/carrier.py" --calls 2500 --out "$TMPD/c2500.pcap" 2>/dev/null ||
	fail "carrier.py"
# The lowest of three runs: how far the scanning runs ahead of the analysis, and so how many
# chunks are in flight at the peak, depends on the machine's moment (under the sanitizers two
# --cores 2 runs of this capture peaked at 68 and at 79 MiB).
peak_rss() { # CORES: peak RSS in KiB of sipnab on c2500.pcap (report in r$CORES.json), -1 if it failed
	python3 - "$SIPNAB_BIN" "$TMPD/c2500.pcap" "$1" "$TMPD/r$1.json" <<'PY'
import os, subprocess, sys
peaks = []
for _ in range(3):
    with open(sys.argv[4], "wb") as out:
        p = subprocess.Popen([sys.argv[1], "-N", "-I", sys.argv[2], "--cores", sys.argv[3],
                              "--report=json"], stdout=out)
        _, status, usage = os.wait4(p.pid, 0)
    if not os.WIFEXITED(status) or os.WEXITSTATUS(status) != 0:
        print(-1)
        sys.exit(0)
    peaks.append(usage.ru_maxrss)
print(min(peaks))
PY
}
rss2=$(peak_rss 2)
rss16=$(peak_rss 16)
# with 16 threads (four buffers of 2 MiB on two CPUs) the report is the same
expect_eq "--cores 16, default chunks: same report as --cores 2" \
	"$(cmp -s "$TMPD/r2.json" "$TMPD/r16.json" && echo same)" same
checks=$((checks + 1))
if [ "$rss2" -gt 0 ] && [ "$rss16" -gt 0 ] && [ "$rss16" -lt $((rss2 + 32 * 1024)) ]; then
	pass "peak RSS at --cores 16: $rss16 KiB (--cores 2: $rss2 KiB)"
else
	fail "peak RSS at --cores 16: $rss16 KiB, --cores 2: $rss2 KiB (more than 32 MiB apart)"
fi

# 7. a chunk's buffer is one huge page (2 MiB less 64 KiB of file and the 64 KiB tail) while
# the buffers, one for each thread that can run at once and two more, fit in 16 MiB (up to six
# CPUs' worth of threads): more threads than CPUs shrank the chunks of each thread's buffer,
# which were then faulted in 4 KiB pages (c5k on two CPUs: 2,840 page faults a run against
# 560 at --cores 4, which took 1.5 times as long as now). Past that they shrink as before.
# (the CPUs of the affinity mask, as sipnab counts them: nproc would heed OMP_NUM_THREADS)
cpus=$(python3 -c 'import os; print(len(os.sched_getaffinity(0)))')
for n in 4 6 8; do
	SIPNAB_TIMING=1 "$SIPNAB_BIN" -N -I "$TMPD/c2500.pcap" --report=json --cores $n \
		>"$TMPD/r$n.json" 2>"$TMPD/t$n.err"
	line=$(grep "^sipnab: timing: .* chunks of .* read again" "$TMPD/t$n.err")
	bytes=0
	if [ -n "$line" ]; then
		timing_fields $line
	fi
	expect_eq "--cores $n: same report as --cores 2" \
		"$(cmp -s "$TMPD/r2.json" "$TMPD/r$n.json" && echo same)" same
	running=$((n < cpus ? n : cpus))
	if [ $running -le 6 ]; then
		expect_eq "--cores $n, $cpus CPUs: chunk bytes" "$bytes" $((2 * 1024 * 1024 - 65536))
	else
		checks=$((checks + 1))
		# n + 2 buffers at most, within 16 MiB
		if [ "$bytes" -gt 0 ] && [ "$bytes" -lt $((2 * 1024 * 1024 - 65536)) ] &&
			[ $(((n + 2) * (bytes + 65536))) -le $((16 * 1024 * 1024)) ]; then
			pass "--cores $n, $cpus CPUs: chunks of $bytes bytes"
		else
			fail "--cores $n, $cpus CPUs: chunks of $bytes bytes (want less than 2 MiB, n + 2 within 16 MiB)"
		fi
	fi
done

# 8. the host pairs met in the first chunk are dealt out in turn, whatever their addresses hash
# to (the thread reading that chunk deals them while the others read theirs): c2500's 100 host
# pairs, 2,675 records each, all in its first chunk, give the threads 50 pairs each at
# --cores 2, 34, 33 and 33 at 3, and 25 each at 4; by hash alone (bucket % n) c5k's split
# 256,800/278,200 at 2
for n in 2 3 4; do
	SIPNAB_TIMING=1 "$SIPNAB_BIN" -N -I "$TMPD/c2500.pcap" --report=json --cores $n \
		>/dev/null 2>"$TMPD/d$n.err"
	expect_eq "--cores $n: records per thread" \
		"$(sed -n 's/^sipnab: timing: thread [0-9]*: [0-9.]* s cpu, \([0-9]*\) records, .*/\1/p' \
			"$TMPD/d$n.err" | sort -n | tr '\n' ' ')" \
		"$(case $n in 2) echo "133750 133750 " ;; 3) echo "88275 88275 90950 " ;;
			4) echo "66875 66875 66875 66875 " ;; esac)"
done
finish
