#!/bin/sh
# Streamed input as a user gives it: a capture much larger than the reader's blocks, piped in
# (`cat f | sipnab -I -`), gzip-compressed, and gzip piped in. Each gives the report of the
# plain file, on one and on several cores, and memory stays well below the input's size
# (the bytes analysed are given back instead of being read whole into memory first).
. "$(dirname "$0")/lib.sh"
python3 "$SIPNAB_SRCDIR/bench/carrier.py" --calls 2500 --out "$TMPD/big.pcap" 2>/dev/null ||
	fail "carrier.py"
python3 -c 'import gzip,shutil,sys
with open(sys.argv[1],"rb") as i, gzip.open(sys.argv[2],"wb",compresslevel=1) as o:
    shutil.copyfileobj(i,o)' "$TMPD/big.pcap" "$TMPD/big.pcap.gz"
size=$(wc -c <"$TMPD/big.pcap")

# run OUT CMD...: the command's report into OUT without the input's name; prints the peak RSS
# of the sipnab process in KiB (from the kernel's accounting of waited-for children)
run() {
	out=$1
	shift
	python3 - "$out" "$@" <<'PY'
import resource, subprocess, sys
out = sys.argv[1]
r = subprocess.run(sys.argv[2], shell=True, stdout=subprocess.PIPE)
lines = [l for l in r.stdout.decode().splitlines(True) if '"files":' not in l]
open(out, "w").write("".join(lines))
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss if r.returncode == 0 else -1)
PY
}

B="$SIPNAB_BIN -N --report=json"
plain_rss=$(run "$TMPD/plain.json" "$B -I $TMPD/big.pcap --cores 1")
expect_eq "plain packets" "$(json_get "$TMPD/plain.json" capture.packets)" 267500
for c in 1 2 3; do
	for kind in pipe gz gzpipe; do
		case $kind in
		pipe) cmd="cat $TMPD/big.pcap | $B -I - --cores $c" ;;
		gz) cmd="$B -I $TMPD/big.pcap.gz --cores $c" ;;
		gzpipe) cmd="cat $TMPD/big.pcap.gz | $B -I - --cores $c" ;;
		esac
		rss=$(run "$TMPD/$kind.json" "$cmd")
		if cmp -s "$TMPD/plain.json" "$TMPD/$kind.json"; then
			pass "$kind --cores $c: the plain file's report"
		else
			fail "$kind --cores $c: report differs from the plain file's"
			diff "$TMPD/plain.json" "$TMPD/$kind.json" | head -5
		fi
		checks=$((checks + 1))
		# the whole input read into memory would be more than $size bytes (63 MiB) on top
		# of what the mapped plain file needs; streaming adds a few 4 MiB blocks at most
		# (16 MiB: and the sanitizers measured +9 MiB). Not against the input's size
		# itself: under the sanitizers the mapped file's own run takes 58 of its 63 MiB,
		# and the streamed runs at three cores came within 0.2 MiB of it either way
		if [ "$rss" -gt 0 ] && [ "$rss" -lt $((plain_rss + 16 * 1024)) ] &&
			[ $(((rss - plain_rss) * 1024)) -lt "$size" ]; then
			pass "$kind --cores $c: peak RSS $rss KiB (plain file $plain_rss KiB, input $size bytes)"
		else
			fail "$kind --cores $c: peak RSS $rss KiB, plain file $plain_rss KiB, input $size bytes"
		fi
		checks=$((checks + 1))
	done
done

# a record longer than the distance the copying thread may run ahead of the reader (16 MiB):
# the thread must still produce all of it, not wait for the reader forever
python3 - "$SIPNAB_CORPUS/pcap/sipp-g711-dtmf.pcap" "$TMPD/longrec.pcap" <<'PY'
import struct, sys
src = open(sys.argv[1], "rb").read()
big = 24 << 20
rec = struct.pack("<IIII", 1795982570, 0, big, big) + bytes(big)
open(sys.argv[2], "wb").write(src[:24] + rec + src[24:])
PY
timeout 120 sh -c "cat $TMPD/longrec.pcap | $B -I - --cores 1" >"$TMPD/long.json"
expect_eq "24 MiB record piped: exit" "$?" 0
expect_eq "24 MiB record piped: packets" "$(json_get "$TMPD/long.json" capture.packets)" 997
expect_eq "24 MiB record piped: SIP" "$(json_get "$TMPD/long.json" capture.sip_messages)" 12
finish
