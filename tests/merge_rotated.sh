#!/bin/sh
# A capture rotated into many files (tcpdump -C/-W/-G) and merged back: `sipnab -I f1 -I f2
# ...` gives the report of the capture as one file, at one core and at two, and takes about
# the memory that one file takes. Each file is read in windows of its own (pread(): a file cut
# while it is read ends its input, not sipnab: tests/file_cut.sh), which start at a page,
# grow when the file is read on and go back to a pool when it ends; no file is mapped. Before,
# every file was read through its mapping and 1,000 rotated files of the 535,000-packet
# benchmark capture (131 KB each) peaked at 151 MiB against 22 MiB for the one file. The same
# for gzip-compressed files, against the one gzip file.
. "$(dirname "$0")/lib.sh"

python3 "$SIPNAB_SRCDIR/bench/carrier.py" --calls 1500 --call-ids 0 --stream-pairs 0 \
	--out "$TMPD/one.pcap" 2>/dev/null || { echo "FAIL: carrier.py"; exit 1; }
mkdir "$TMPD/rot"
python3 - "$TMPD/one.pcap" "$TMPD/rot" 300 <<'PY' || { echo "FAIL: rotating"; exit 1; }
import struct, sys
raw = open(sys.argv[1], "rb").read()
n = int(sys.argv[3])
per = (len(raw) - 24) // n + 1
off, k, cur, size = 24, 0, [], 0
while off < len(raw):
    incl = struct.unpack("<I", raw[off + 8:off + 12])[0]
    cur.append(raw[off:off + 16 + incl])
    size += 16 + incl
    off += 16 + incl
    if size >= per or off >= len(raw):
        with open("%s/rot%04d.pcap" % (sys.argv[2], k), "wb") as f:
            f.write(raw[:24] + b"".join(cur))
        k, cur, size = k + 1, [], 0
PY
set --
for f in "$TMPD"/rot/rot*.pcap; do
	set -- "$@" -I "$f"
done
expect_eq "files rotated into" "$(($# / 2))" 300

# peak RSS in KiB (the lowest of three runs) and the report without its list of files
run() { # OUT ARGS...: the report in OUT (files left out), prints the peak RSS or -1
	python3 - "$SIPNAB_BIN" "$@" <<'PY'
import json, os, subprocess, sys
peaks = []
for _ in range(3):
    p = subprocess.Popen([sys.argv[1], "-N"] + sys.argv[3:] + ["--report=json"],
                         stdout=subprocess.PIPE)
    out = p.stdout.read()
    _, status, usage = os.wait4(p.pid, 0)
    if not os.WIFEXITED(status) or os.WEXITSTATUS(status) != 0:
        print(-1)
        sys.exit(0)
    peaks.append(usage.ru_maxrss)
d = json.loads(out)
del d["capture"]["files"]
json.dump(d, open(sys.argv[2], "w"), indent=1, sort_keys=True)
print(min(peaks))
PY
}
# like_one_file WHAT ONE CORES MERGED...: the merge of the files MERGED (-I options) gives
# the report of the one file ONE at --cores CORES, within 16 MiB of its peak RSS (a plain
# build measured 19-23 MiB for both at 1,000 files of 131 KB; the 300 files here are 41 MB in
# all, +40 MiB when they were read through their mappings)
like_one_file() {
	local what=$1 file=$2 cores=$3 one many

	shift 3
	one=$(run "$TMPD/one.json" -I "$file" --cores "$cores")
	many=$(run "$TMPD/many.json" "$@" --cores "$cores")
	if [ "$one" -lt 0 ] || [ "$many" -lt 0 ]; then
		fail "$what, --cores $cores: a run failed"
		return
	fi
	expect_eq "$what, --cores $cores: the report of the one file" \
		"$(cmp -s "$TMPD/one.json" "$TMPD/many.json" && echo same)" same
	checks=$((checks + 1))
	if [ "$many" -le $((one + 16 * 1024 + ${slack_kib:-0})) ]; then
		pass "$what, --cores $cores: peak RSS $many KiB (one file: $one KiB)"
	else
		fail "$what, --cores $cores: peak RSS $many KiB, one file $one KiB"
	fi
}
for cores in 1 2; do
	like_one_file "300 files merged" "$TMPD/one.pcap" $cores "$@"
done

# The same files gzip-compressed (tcpdump -z gzip), against the capture as one gzip file. A
# gzip file waits, holding nothing, until the merge reaches its first record; before, each
# was inflated by a thread of its own from the start, up to 16 MiB ahead, all of the 41 MB
# at once (+45 MiB), and 1,000 such files of the benchmark capture peaked at 158 MiB.
gzip -1 -k "$TMPD"/rot/rot*.pcap && gzip -1 -c "$TMPD/one.pcap" >"$TMPD/one.pcap.gz" ||
	{ echo "FAIL: gzip"; exit 1; }
set --
for f in "$TMPD"/rot/rot*.pcap.gz; do
	set -- "$@" -I "$f"
done
# AddressSanitizer keeps every block freed (its quarantine, 256 MiB): each gzip file's inflater
# state, input buffer and first bytes inflated at its opening stay, 77 KiB a file measured
slack_kib=0
case $(ldd "$SIPNAB_BIN" 2>/dev/null) in *libasan*) slack_kib=$((128 * 300)) ;; esac
for cores in 1 2; do
	like_one_file "300 gzip files merged" "$TMPD/one.pcap.gz" $cores "$@"
done
slack_kib=0
# Three parts of 14 MB: read on by other threads at two cores, the inflated bytes behind the
# reader were never given back, all 41 MB of them (five parts of 100 MB: 616 MiB against
# 101 MiB for the one gzip file)
python3 - "$TMPD/one.pcap" "$TMPD/third" 3 <<'PY' || { echo "FAIL: thirds"; exit 1; }
import gzip, struct, sys
raw = open(sys.argv[1], "rb").read()
n = int(sys.argv[3])
recs, off = [], 24
while off < len(raw):
    incl = struct.unpack("<I", raw[off + 8:off + 12])[0]
    recs.append(raw[off:off + 16 + incl])
    off += 16 + incl
per = (len(recs) + n - 1) // n
for k in range(n):
    with gzip.open("%s%d.pcap.gz" % (sys.argv[2], k), "wb", compresslevel=1) as f:
        f.write(raw[:24] + b"".join(recs[k * per:(k + 1) * per]))
PY
for cores in 1 2; do
	like_one_file "3 gzip files of 14 MB merged" "$TMPD/one.pcap.gz" $cores \
		-I "$TMPD/third0.pcap.gz" -I "$TMPD/third1.pcap.gz" -I "$TMPD/third2.pcap.gz"
done

# 100 gzip files read at once: c5k's records dealt out in turn, so every file's packets
# interleave with every other's, against the one gzip file. Each file's inflater runs at once
# and inflates it whole (410 KB, 41 MB in all); its first 2 MiB are small pages, where
# e35840e put every stream in a huge page of its own (120 such files: 277 MiB, 64 MiB before)
python3 - "$TMPD/one.pcap" "$TMPD/dealt" 100 <<'PY' || { echo "FAIL: dealing"; exit 1; }
import gzip, struct, sys
raw = open(sys.argv[1], "rb").read()
n = int(sys.argv[3])
parts = [[] for _ in range(n)]
off, k = 24, 0
while off < len(raw):
    incl = struct.unpack("<I", raw[off + 8:off + 12])[0]
    parts[k % n].append(raw[off:off + 16 + incl])
    off += 16 + incl
    k += 1
for i in range(n):
    with gzip.open("%s%03d.pcap.gz" % (sys.argv[2], i), "wb", compresslevel=1) as f:
        f.write(raw[:24] + b"".join(parts[i]))
PY
set --
for f in "$TMPD"/dealt*.pcap.gz; do
	set -- "$@" -I "$f"
done
slack_kib=$((48 * 1024))
for cores in 1 2; do
	like_one_file "100 gzip files read at once" "$TMPD/one.pcap.gz" $cores "$@"
done
slack_kib=0

# 200 rotated files of one host pair, 1,000 records of 1 KB each: at two cores that pair's
# bucket is the reading thread's own, so no worker gets a record, and a file's windows went
# back to the pool only when a worker's batch filled (never): every file got fresh windows and
# kept them, 210 MiB and 1.0-1.6 s where one file takes 5 MiB and 0.05 s
python3 - "$TMPD/pair" 200 1000 <<'PY' || { echo "FAIL: one pair"; exit 1; }
import os, struct, sys
out, nf, per = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
os.mkdir(out)
hdr = struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1)
ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + 8 + 1000, 1, 0, 64, 17, 0,
                 bytes([10, 2, 1, 1]), bytes([10, 2, 1, 2]))
frame = (b"\x00\x11\x22\x33\x44\x55\x66\x77\x88\x99\xaa\xbb\x08\x00" + ip +
         struct.pack("!HHHH", 4000, 4002, 8 + 1000, 0) + bytes(1000))
whole = [hdr]
for f in range(nf):
    recs = [hdr]
    for i in range(per):
        k = f * per + i
        recs.append(struct.pack("<IIII", 1767225600 + k // 1000, (k % 1000) * 1000, len(frame),
                                len(frame)) + frame)
    whole += recs[1:]
    open("%s/f%04d.pcap" % (out, f), "wb").write(b"".join(recs))
open(out + ".pcap", "wb").write(b"".join(whole))
PY
set --
for f in "$TMPD"/pair/f*.pcap; do
	set -- "$@" -I "$f"
done
for cores in 1 2 3; do
	like_one_file "200 files of one host pair" "$TMPD/pair.pcap" $cores "$@"
done
finish
