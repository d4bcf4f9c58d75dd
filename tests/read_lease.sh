#!/bin/bash
# sipnab reads a capture file through its mapping while it holds the file's read lease, and
# with pread() where it can have none (one core: in windows; two and more: chunk by chunk);
# the report is the same either way. Another program that opens the file for writing meanwhile
# (a capture tool reusing the name, logrotate's copytruncate) waits only until sipnab has
# stopped reading the mapping, a few milliseconds, not the kernel's lease-break time (45 s by
# default), and sipnab reads the rest with pread(). SIPNAB_TIMING=1 says what it read through
# the mapping (one core: "one reader under the lease"; more: how many chunks) and where
# another program wanted the lease. The runs read through the mapping all the time they hold
# the lease (SIPNAB_MAPPED=lease), so that what they read which way says when they let go;
# by default they read each stretch the way that costs least (tests/read_ways.sh), and a
# last check here has a writer come then too.
#
# The writer opens the file once /proc/locks shows sipnab's lease, which it takes before it
# reads: it comes mid-read, and sipnab must let go (at each core count, at least one of six
# writers: a writer can see the lease late). Writers at times spread over a run race it, and
# every outcome must be a valid one. Where sipnab ends before its lease is seen, the test
# skips (77) instead of passing untested; where no lease can be had at all (a file system
# without leases), it skips too. (A file cut mid-read: tests/file_cut.sh.)
. "$(dirname "$0")/lib.sh"
need_python3

need_read_lease

GEN="$SIPNAB_SRCDIR/bench/carrier.py"
python3 "$GEN" --calls 1500 --call-ids 0 --stream-pairs 0 --out "$TMPD/cap.pcap" \
	2>/dev/null || { echo "FAIL: carrier.py"; exit 1; }
# a chunk every 256 KiB: many claims, each of which looks whether someone waits
export SIPNAB_SPLIT_CHUNK=262144
export SIPNAB_MAPPED=lease
# the reference: one core, never through the mapping
SIPNAB_MAPPED=0 "$SIPNAB_BIN" -N -I "$TMPD/cap.pcap" --cores 1 --report=json >"$TMPD/one.json" \
	2>/dev/null || { echo "FAIL: --cores 1"; exit 1; }

# chunks_through FILE: "M N" from the timing line in FILE (M of N chunks through the mapping)
chunks_through() {
	sed -n 's/.*timing: \([0-9]*\) chunks of .* read again, \([0-9]*\) through the mapping.*/\2 \1/p' "$1"
}

# through FILE CORES: what the run whose stderr is FILE read through the mapping: all, none,
# or part (then the lease was wanted on the way, and FILE says where)
through() {
	local mapped total

	if [ "$2" = 1 ]; then
		if grep -q "timing: one reader under the lease (the lease wanted at" "$1"; then
			echo part
		elif grep -q "timing: one reader under the lease" "$1"; then
			echo all
		else
			echo none
		fi
		return
	fi
	read -r mapped total < <(chunks_through "$1")
	if [ -z "$total" ] || [ "$total" -lt 20 ]; then
		echo "chunks? ($mapped of $total)"
	elif grep -q "(the lease wanted at chunk $mapped)" "$1" && [ "$mapped" -lt "$total" ]; then
		echo part # also at chunk 0: the writer came before the first chunk was read
	elif grep -q "(the lease wanted" "$1"; then
		echo "$mapped of $total chunks, $(grep -o "(the lease wanted[^)]*)" "$1")"
	elif [ "$mapped" = "$total" ]; then
		echo all
	elif [ "$mapped" = 0 ]; then
		echo none
	else
		echo "$mapped of $total chunks, the lease never wanted"
	fi
}

for cores in 1 2 3; do
	# 1. nobody writes: everything through the mapping
	SIPNAB_TIMING=1 "$SIPNAB_BIN" -N -I "$TMPD/cap.pcap" --cores "$cores" --report=json \
		>"$TMPD/leased.json" 2>"$TMPD/leased.err"
	expect_eq "--cores $cores, under the lease: exit status" $? 0
	expect_eq "--cores $cores, under the lease: read through the mapping" \
		"$(through "$TMPD/leased.err" "$cores")" all
	expect_eq "--cores $cores, under the lease: report as at --cores 1" \
		"$(cmp -s "$TMPD/leased.json" "$TMPD/one.json" && echo same)" same

	# 2. the file open for writing (here, by this shell): no lease, no chunk through the
	# mapping, the same report
	exec 3>>"$TMPD/cap.pcap"
	SIPNAB_TIMING=1 "$SIPNAB_BIN" -N -I "$TMPD/cap.pcap" --cores "$cores" --report=json \
		>"$TMPD/open.json" 2>"$TMPD/open.err"
	rc=$?
	exec 3>&-
	expect_eq "--cores $cores, open for writing: exit status" "$rc" 0
	expect_eq "--cores $cores, open for writing: read through the mapping" \
		"$(through "$TMPD/open.err" "$cores")" none
	expect_eq "--cores $cores, open for writing: report as at --cores 1" \
		"$(cmp -s "$TMPD/open.json" "$TMPD/one.json" && echo same)" same
done

# 3. a writer opens the file while sipnab reads it: python3 starts sipnab and opens the file
# for writing as soon as /proc/locks shows sipnab's lease on it ("lease": the lease is taken
# before the first chunk or batch is read, so the writer comes mid-read), or DELAY seconds
# after the start (anywhere in the run: before the lease, mid-read, or after the last chunk
# was taken). It prints sipnab's exit status and how long the open waited; with "nowait" it
# opens the file as truncate(1) does (O_NONBLOCK), which fails while the lease is held: then
# it prints "EAGAIN".
cat >"$TMPD/writer.py" <<'PY'
import os, subprocess, sys, time
binary, path, cores, when, out, err, how = sys.argv[1:8]
with open(out, "wb") as o, open(err, "wb") as e:
    p = subprocess.Popen([binary, "-N", "-I", path, "--cores", cores, "--report=json"],
                         stdout=o, stderr=e, env=dict(os.environ, SIPNAB_TIMING="1"))
    if when == "lease":
        # /proc/locks: "N: LEASE  ACTIVE    READ  PID MAJ:MIN:INODE 0 EOF"
        seen, deadline = False, time.monotonic() + 10
        while not seen and p.poll() is None and time.monotonic() < deadline:
            with open("/proc/locks") as f:
                seen = any(l.split()[1:2] == ["LEASE"] and str(p.pid) in l.split()
                           for l in f)
        if not seen:
            p.wait(timeout=60)
            print("nolease -")
            sys.exit(0)
    else:
        time.sleep(float(when))
    t = time.monotonic()
    try:
        fd = os.open(path, os.O_WRONLY | (os.O_NONBLOCK if how == "nowait" else 0))
        waited = "%.4f" % (time.monotonic() - t)
        os.close(fd)
    except BlockingIOError:
        waited = "EAGAIN"
    try:
        rc = p.wait(timeout=60)
    except subprocess.TimeoutExpired:
        p.kill()
        rc = "timeout"
print(rc, waited)
PY

# writer CORES WHEN HOW: one attempt (writer.py); sets what, and outcome: "part" (the lease
# wanted mid-read, the rest read with pread()), "whole" (read through the mapping to the end:
# the writer came before the lease or after the last chunk was taken), "none" (a writer at a
# time, open just when sipnab asked for the lease: no lease, all read with pread()),
# "nolease" (sipnab ended before its lease was seen), or "failed"
writer() {
	local rc waited how=$3 said

	read -r rc waited < <(python3 "$TMPD/writer.py" "$SIPNAB_BIN" "$TMPD/cap.pcap" "$1" "$2" \
		"$TMPD/w.json" "$TMPD/w.err" "$how")
	what="--cores $1, a writer"
	[ "$how" = nowait ] && what="$what that does not wait"
	if [ "$2" = lease ]; then what="$what, on the lease"; else what="$what, $2 s in"; fi
	said="waited $waited s"
	[ "$waited" = EAGAIN ] && said=EAGAIN
	checks=$((checks + 1))
	outcome=failed
	if [ "$rc" = nolease ]; then
		outcome=nolease
		pass "$what: sipnab ended before its lease was seen"
	elif [ "$rc" != 0 ]; then
		fail "$what: exit status $rc ($(head -c 300 "$TMPD/w.err"))"
	elif ! cmp -s "$TMPD/w.json" "$TMPD/one.json"; then
		fail "$what: the report differs from --cores 1's"
	elif [ "$waited" != EAGAIN ] && awk -v w="$waited" 'BEGIN { exit !(w > 2) }'; then
		# the open waits for sipnab to stop reading the mapping (the chunks in flight),
		# never the lease-break time
		fail "$what: the writer waited $waited s"
	elif [ "${SIPNAB_MAPPED:-}" != lease ]; then
		# the ways chosen: what was read which way says nothing of when sipnab let go
		outcome=chosen
		pass "$what, the ways chosen: $said; $(grep -o "(the lease wanted[^)]*)" "$TMPD/w.err")"
	else
		case $(through "$TMPD/w.err" "$1") in
		part)
			outcome=part
			pass "$what: $said; $(grep -o "(the lease wanted[^)]*)" "$TMPD/w.err"), the rest read with pread()"
			;;
		all)
			outcome=whole
			pass "$what: $said, not mid-read"
			;;
		none)
			# a writer at a time: its open can overlap sipnab's taking of the lease
			# (under load, a 10 % delay can fall there), which then finds the file
			# open for writing and reads it all with pread(), as in case 2
			if [ "$2" = lease ]; then
				fail "$what: no lease taken, though the writer saw it"
			else
				outcome=none
				pass "$what: $said; the file open for writing when sipnab asked for the lease, all read with pread()"
			fi
			;;
		*) fail "$what: $(through "$TMPD/w.err" "$1")" ;;
		esac
	fi
}

# on the lease the writer comes mid-read, unless it sees the lease late (it shares two CPUs
# with sipnab's threads): at each core count, of three writers that wait and three that do
# not, at least one must have made sipnab let go and read on with pread(); one that never
# polled the lease lets no writer in before the end ("whole" every time)
missed=
for cores in 1 2 3; do
	parts=0 wholes=0
	for how in wait nowait wait nowait wait nowait; do
		writer "$cores" lease "$how"
		case $outcome in
		part) parts=$((parts + 1)) ;;
		whole) wholes=$((wholes + 1)) ;;
		esac
	done
	checks=$((checks + 1))
	if [ "$parts" -gt 0 ]; then
		pass "--cores $cores: $parts of 6 writers on the lease came mid-read and sipnab let go"
	elif [ "$wholes" -gt 0 ]; then
		fail "--cores $cores: none of 6 writers on the lease made sipnab let go before the end"
	else
		missed="$missed $cores"
	fi
done
# at times spread over a run: every outcome must be a valid one
for cores in 1 2; do
	t0=$(date +%s%N)
	"$SIPNAB_BIN" -N -I "$TMPD/cap.pcap" --cores "$cores" --report=json >/dev/null 2>&1
	ms=$((($(date +%s%N) - t0) / 1000000))
	for pct in 10 40 70; do
		writer "$cores" "$(awk -v ms="$ms" -v p="$pct" 'BEGIN { printf "%.4f", ms * p / 100000 }')" wait
	done
done

# 4. the default: each stretch read the way that costs least while the lease holds; a writer
# on the lease gets in as soon, and the report is the same
unset SIPNAB_MAPPED
for cores in 1 2; do
	for how in wait nowait; do
		writer "$cores" lease "$how"
	done
done

if [ "$fails" = 0 ] && [ -n "$missed" ]; then
	echo "SKIP: sipnab ended before its lease was seen at --cores$missed"
	finish
	exit 77
fi
finish
