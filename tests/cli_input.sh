#!/bin/sh
# Capture input as a user gives it: bad files, truncated files, gzip, stdin, several -I.
. "$(dirname "$0")/lib.sh"
S="$SIPNAB_CORPUS/pcap/sipp-g711-dtmf.pcap"

# a file that is not a capture: one line naming the file, exit status 2
"$SIPNAB_BIN" -N -I "$SIPNAB_SRCDIR/README" --report >"$TMPD/out" 2>"$TMPD/err"
expect_eq "exit status for a non-capture" "$?" 2
expect_eq "stderr lines for a non-capture" "$(wc -l <"$TMPD/err")" 1
grep -q "README: not a pcap or pcapng file" "$TMPD/err" || fail "error does not name the file: $(cat "$TMPD/err")"
"$SIPNAB_BIN" -N -I "$TMPD/does-not-exist.pcap" >"$TMPD/out" 2>"$TMPD/err"
expect_eq "exit status for a missing file" "$?" 2
grep -q "does-not-exist.pcap: No such file" "$TMPD/err" || fail "missing file error: $(cat "$TMPD/err")"
: >"$TMPD/empty.pcap"
"$SIPNAB_BIN" -N -I "$TMPD/empty.pcap" >"$TMPD/out" 2>"$TMPD/err"
expect_eq "exit status for an empty file" "$?" 2

# the whole sample, for reference
"$SIPNAB_BIN" -N -I "$S" --report=json >"$TMPD/full.json" || fail "sample report failed"
expect_eq "sample packets (capinfos -c)" "$(json_get "$TMPD/full.json" capture.packets)" 996
expect_eq "sample SIP messages (tshark -z sip,stat)" "$(json_get "$TMPD/full.json" capture.sip_messages)" 12

# truncated: cut inside the last record; a warning with the offset, exit 0, the rest reported
size=$(wc -c <"$S")
head -c $((size - 100)) "$S" >"$TMPD/cut.pcap"
"$SIPNAB_BIN" -N -I "$TMPD/cut.pcap" --report=json >"$TMPD/cut.json" 2>"$TMPD/err"
expect_eq "exit status for a truncated file" "$?" 0
grep -q "cut.pcap: .*byte offset [0-9]" "$TMPD/err" || fail "no truncation warning: $(cat "$TMPD/err")"
expect_eq "packets before the cut" "$(json_get "$TMPD/cut.json" capture.packets)" 995
expect_eq "truncation listed in the report" "$(json_get "$TMPD/cut.json" capture.input_errors.0.error)" truncated
# the warning gives the report's offset, once
off=$(json_get "$TMPD/cut.json" capture.input_errors.0.offset)
expect_eq "offsets in the truncation warning" "$(grep -o "byte offset [0-9]*" "$TMPD/err" | sort | uniq -c | sed 's/^ *//')" "1 byte offset $off"

# gzip and stdin give the same report as the plain file
gzip -c "$S" >"$TMPD/s.pcap.gz"
"$SIPNAB_BIN" -N -I "$TMPD/s.pcap.gz" --report=json >"$TMPD/gz.json"
expect_eq "gzip packets" "$(json_get "$TMPD/gz.json" capture.packets)" 996
expect_eq "gzip SIP" "$(json_get "$TMPD/gz.json" capture.sip_messages)" 12
"$SIPNAB_BIN" -N -I - --report=json <"$S" >"$TMPD/stdin.json"
expect_eq "stdin SIP" "$(json_get "$TMPD/stdin.json" capture.sip_messages)" 12
expect_eq "stdin RTP" "$(json_get "$TMPD/stdin.json" capture.rtp_packets)" "$(json_get "$TMPD/full.json" capture.rtp_packets)"

# two inputs are merged
"$SIPNAB_BIN" -N -I "$S" -I "$TMPD/s.pcap.gz" --report=json >"$TMPD/two.json"
expect_eq "two inputs packets" "$(json_get "$TMPD/two.json" capture.packets)" 1992
expect_eq "two inputs files" "$(json_get "$TMPD/two.json" capture.files.1)" "$TMPD/s.pcap.gz"

# a capture rotated into 300 files (tcpdump -C/-G) is merged back with only 64 descriptors: a
# file past the descriptors a merge may keep is opened again for each window read
python3 - "$S" "$TMPD/rot" <<'PY' || fail "rotating the sample"
import os, struct, sys
raw = open(sys.argv[1], "rb").read()
os.mkdir(sys.argv[2])
recs, off = [], 24
while off < len(raw):
    incl = struct.unpack("<I", raw[off + 8:off + 12])[0]
    recs.append(raw[off:off + 16 + incl])
    off += 16 + incl
per = -(-len(recs) // 300)
for i in range(300):
    with open("%s/rot%03d.pcap" % (sys.argv[2], i), "wb") as f:
        f.write(raw[:24] + b"".join(recs[i * per:(i + 1) * per]))
PY
set --
for f in "$TMPD"/rot/rot*.pcap; do
	set -- "$@" -I "$f"
done
(ulimit -n 64 && "$SIPNAB_BIN" -N "$@" --report=json >"$TMPD/rot.json" 2>"$TMPD/err")
expect_eq "300 rotated files with 64 descriptors: exit status" "$?" 0
expect_eq "300 rotated files: files" "$(json_get "$TMPD/rot.json" capture.files.299)" "$TMPD/rot/rot299.pcap"
for k in capture.packets capture.sip_messages capture.rtp_packets summary.calls summary.streams; do
	expect_eq "300 rotated files: $k" "$(json_get "$TMPD/rot.json" $k)" \
		"$(json_get "$TMPD/full.json" $k)"
done
# with more descriptors, some files (or all) keep theirs; at two cores and more a window stays
# until the workers are done with its records (here 4 KiB windows: a fence every few
# records): the same report
for lim in 200 1024; do
	for cores in 1 2 3; do
		(ulimit -n $lim && SIPNAB_MERGE_WINDOW=4096 "$SIPNAB_BIN" -N "$@" --cores $cores \
			--report=json >"$TMPD/rot2.json" 2>"$TMPD/err")
		expect_eq "300 rotated files, $lim descriptors, --cores $cores: exit status" "$?" 0
		if cmp -s "$TMPD/rot.json" "$TMPD/rot2.json"; then
			pass "300 rotated files, $lim descriptors, --cores $cores: the same report"
		else
			fail "300 rotated files, $lim descriptors, --cores $cores: the report differs"
		fi
	done
done

# run_mix DIR DESCRIPTORS WHAT PACKETS: the files of gz_mix DIR merged with that many
# descriptors at one and two cores: no warning, every packet
run_mix() {
	local dir=$1 limit=$2 what=$3 packets=$4 cores f

	set --
	for f in "$dir"/p*.pcap "$dir"/z*.pcap.gz; do
		set -- "$@" -I "$f"
	done
	for cores in 1 2; do
		(ulimit -n "$(fd_limit "$limit")" && "$SIPNAB_BIN" -N "$@" --cores $cores \
			--report=json >"$dir.json" 2>"$TMPD/err")
		expect_eq "$what, $limit descriptors, --cores $cores: exit status, warnings" \
			"$? $(head -c 200 "$TMPD/err")" "0 "
		expect_eq "$what, --cores $cores: packets" \
			"$(json_get "$dir.json" capture.packets 2>/dev/null)" "$packets"
	done
}

# gz_mix DIR FILES GZIP AT_ONCE: FILES captures of two packets (p*.pcap), then GZIP gzip
# files (z*.pcap.gz) of one packet each, one after the other in time, or (AT_ONCE 1) of four
# whose packets interleave with every other gzip file's
gz_mix() {
	python3 - "$1" "$SIPNAB_SRCDIR/tests" "$2" "$3" "$4" <<'PY'
import gzip, os, shutil, sys
sys.path.insert(0, sys.argv[2])
from sip_pcap import SipPcap
out, files, gz, at_once = sys.argv[1], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5] == "1"
os.mkdir(out)
def options(i):
    return ("OPTIONS sip:a@10.0.0.2 SIP/2.0\nVia: SIP/2.0/UDP 10.0.0.1;branch=z9hG4bK%d\n"
            "From: <sip:b@10.0.0.1>;tag=%d\nTo: <sip:a@10.0.0.2>\nCall-ID: gz-%d\n"
            "CSeq: 1 OPTIONS\nContent-Length: 0\n\n" % (i, i, i))
for i in range(files):
    cap = SipPcap("%s/p%03d.pcap" % (out, i), start=1767225599 + i)
    cap.packet("10.0.0.1", "10.0.0.2", options(i), dt=1)
    cap.packet("10.0.0.1", "10.0.0.2", options(1000 + i), dt=1000)
    cap.close()
for i in range(gz):
    path = "%s/z%03d.pcap" % (out, i)
    if not at_once:
        cap = SipPcap(path, start=1767225699 + i)
        cap.packet("10.0.0.1", "10.0.0.2", options(100 + i), dt=1)
    else:
        cap = SipPcap(path, start=1767225599 + i)
        for k in range(3):
            cap.packet("10.0.0.1", "10.0.0.2", options(2000 + 10 * i + k),
                       dt=1 if k == 0 else 400)
            if k == 0:
                # 40 KB that gzip halves: more than what a file's first page is inflated
                # to when it is opened, so it is read by an inflater thread, with its
                # descriptor
                cap.packet("10.0.0.1", "10.0.0.2", os.urandom(20000).hex(), dt=1)
    cap.close()
    with open(path, "rb") as src, gzip.open(path + ".gz", "wb") as dst:
        shutil.copyfileobj(src, dst)
    os.unlink(path)
PY
}

# 60 files, then 70 gzip files, with 100 descriptors (a budget of 36): the files kept open give
# theirs up for the gzip files and are opened again for each window (577738a: "z060.pcap.gz:
# Too many open files", exit status 2)
gz_mix "$TMPD/gzmix" 60 70 0 || fail "writing the gzip mix"
run_mix "$TMPD/gzmix" 100 "60 files and 70 gzip files" 190

# 140 files, then 70 gzip files read at the same time (their packets interleave), with 200
# descriptors (a budget of 136): a gzip file waits without a descriptor until the merge
# reaches it, then takes one until it ends, so descriptors are kept back for them and the
# files give theirs up (e35840e: 70 times "Too many open files", the gzip files unread)
gz_mix "$TMPD/gzlap" 140 70 1 || fail "writing the overlapping gzip files"
run_mix "$TMPD/gzlap" 200 "140 files and 70 gzip files at once" 560

# usage errors
"$SIPNAB_BIN" -N >"$TMPD/out" 2>&1
expect_eq "exit status without input" "$?" 2
"$SIPNAB_BIN" -N -I "$S" --report=xml >"$TMPD/out" 2>&1
expect_eq "exit status for an unknown report format" "$?" 2
finish
