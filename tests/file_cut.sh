#!/bin/bash
# A capture cut while sipnab reads it (a capture tool rotating its files, a user's truncate):
# at one core and at two (the sharded reader), alone or merged with another file (each read
# in windows of its own, kept for the workers at two cores; also with no descriptor to keep,
# each file opened again for each window), or gzip-compressed, sipnab never
# dies of the lost pages of its mapping (SIGBUS), and when the cut lands before it has read
# that far, it reports the cut record, says that the file shrank and to how many bytes (for
# gzip: that the stream is truncated), and reports the packets before it.
#
# The cut races the run: it is made at several points of a run's measured length, and every
# attempt must end well whichever way the race went (read whole before the cut: the whole
# capture, no warning; cut before sipnab opened the file: a truncated file like any other). An attempt that lands mid-read is needed at each core count; a machine
# where none does skips the test (77) instead of passing it untested.
. "$(dirname "$0")/lib.sh"

GEN="$SIPNAB_SRCDIR/bench/carrier.py"
python3 "$GEN" --calls 1500 --call-ids 0 --stream-pairs 0 --out "$TMPD/full.pcap" \
	2>/dev/null || { echo "FAIL: carrier.py"; exit 1; }
size=$(stat -c %s "$TMPD/full.pcap")
cut=$((size * 2 / 3))
"$SIPNAB_BIN" -N -I "$TMPD/full.pcap" --cores 1 --report=json >"$TMPD/full.json" 2>/dev/null ||
	{ echo "FAIL: the whole capture"; exit 1; }
all=$(json_get "$TMPD/full.json" capture.packets)
expect_eq "packets in the whole capture" "$all" 160500
# cut before sipnab opens it: a truncated file like any other
head -c "$cut" "$TMPD/full.pcap" >"$TMPD/short.pcap"
"$SIPNAB_BIN" -N -I "$TMPD/short.pcap" --cores 1 --report=json >"$TMPD/short.json" \
	2>"$TMPD/short.err" || { echo "FAIL: the cut capture"; exit 1; }
before=$(json_get "$TMPD/short.json" capture.packets)
short_msg=$(json_get "$TMPD/short.json" capture.input_errors.0.message)
# the other file of a merge (its calls at the same times as the first's)
python3 "$GEN" --calls 200 --out "$TMPD/other.pcap" 2>/dev/null || { echo "FAIL: carrier.py"; exit 1; }
other=21400

# run_cut CORES DELAY [MORE...]: sipnab on a fresh copy (and the inputs MORE), cut to $cut bytes
# DELAY seconds after its start; sets rc, and leaves the report in $TMPD/cut.json and stderr in
# $TMPD/cut.err
run_cut() {
	local cores=$1 delay=$2

	shift 2
	cp "$TMPD/full.pcap" "$TMPD/cut.pcap"
	(ulimit -n "$fds" && exec "$SIPNAB_BIN" -N -I "$TMPD/cut.pcap" "$@" --cores "$cores" \
		--report=json >"$TMPD/cut.json" 2>"$TMPD/cut.err") &
	pid=$!
	sleep "$delay"
	# cut as a capture tool's open for writing does, one that waits: under sipnab's read
	# lease on a file (tests/read_lease.sh) it waits until sipnab stops reading the file's
	# mapping; truncate(1) opens without waiting (O_NONBLOCK) and would fail then
	dd if=/dev/null of="$TMPD/cut.pcap" bs=1 seek="$cut" status=none
	wait "$pid"
	rc=$?
}

# the run's length at each core count, in milliseconds (the delays are fractions of it);
# m: merged, n: merged with 64 descriptors (none kept for the files: opened again each window)
missed=
for run in 1 2 1m 2m 1n 2n; do
	cores=${run%[mn]}
	more=()
	extra=0
	fds=$(fd_limit 1024)
	if [ "$run" != "$cores" ]; then
		more=(-I "$TMPD/other.pcap")
		extra=$other
	fi
	if [ "${run#?}" = n ]; then
		fds=64
	fi
	hits=0
	t0=$(date +%s%N)
	(ulimit -n "$fds" && exec "$SIPNAB_BIN" -N -I "$TMPD/full.pcap" "${more[@]}" --cores "$cores" \
		--report=json >/dev/null 2>&1)
	ms=$((($(date +%s%N) - t0) / 1000000))
	for pct in 5 10 20 30 45 60 75 90; do
		d=$(awk -v ms="$ms" -v p="$pct" 'BEGIN { printf "%.3f", ms * p / 100000 }')
		run_cut "$cores" "$d" "${more[@]}"
		what="--cores $cores${more:+, merged with a second file}, $fds descriptors, cut after $d s of a ${ms} ms run"
		checks=$((checks + 1))
		if [ "$rc" -ge 128 ]; then
			fail "$what: killed by signal $((rc - 128)) ($(head -c 200 "$TMPD/cut.err"))"
			continue
		elif [ "$rc" != 0 ]; then
			fail "$what: exit status $rc ($(head -c 200 "$TMPD/cut.err"))"
			continue
		fi
		packets=$(json_get "$TMPD/cut.json" capture.packets)
		msg=$(json_get "$TMPD/cut.json" capture.input_errors.0.message 2>/dev/null)
		if [ "$msg" = "$short_msg" ]; then
			# cut before sipnab opened it (a slow start: the sanitizers)
			if [ "$packets" != "$((before + extra))" ]; then
				fail "$what: cut before the start, $packets packets, expected $((before + extra))"
			else
				pass "$what: cut before the start, $packets packets"
			fi
			continue
		fi
		if ! grep -q "shrank" "$TMPD/cut.err"; then
			# read whole before the cut
			if [ -s "$TMPD/cut.err" ] || [ "$packets" != "$((all + extra))" ]; then
				fail "$what: $packets packets, stderr '$(head -c 200 "$TMPD/cut.err")'"
			else
				pass "$what: read whole before the cut"
			fi
			continue
		fi
		hits=$((hits + 1))
		err=$(json_get "$TMPD/cut.json" capture.input_errors.0.error)
		off=$(json_get "$TMPD/cut.json" capture.input_errors.0.offset)
		case "$msg" in
		*"shrank to $cut bytes while it was read"*) ;;
		*) fail "$what: message '$msg'"; continue ;;
		esac
		if [ "$err" != truncated ]; then
			fail "$what: input error '$err', expected truncated"
		elif [ "$packets" -le "$extra" ] || [ "$packets" -ge "$((all + extra))" ]; then
			fail "$what: $packets packets, expected some of $all"
		elif ! grep -q "the report covers the packets before it" "$TMPD/cut.err"; then
			fail "$what: stderr '$(head -c 300 "$TMPD/cut.err")'"
		else
			pass "$what: truncated at byte offset $off, $packets of $((all + extra)) packets"
		fi
	done
	if [ "$hits" = 0 ]; then
		missed="$missed $run"
	fi
done

# A gzip capture cut while it is inflated (it is read with read() from its descriptor, as a
# pipe is; through its mapping, the cut killed sipnab in every attempt): the gzip stream ends
# early, a truncation, and the packets inflated before it are reported
gzip -c "$TMPD/full.pcap" >"$TMPD/full.pcap.gz"
gzsize=$(stat -c %s "$TMPD/full.pcap.gz")
for cores in 1 2; do
	hits=0
	t0=$(date +%s%N)
	"$SIPNAB_BIN" -N -I "$TMPD/full.pcap.gz" --cores "$cores" --report=json >/dev/null 2>&1
	ms=$((($(date +%s%N) - t0) / 1000000))
	for pct in 5 15 30 50; do
		d=$(awk -v ms="$ms" -v p="$pct" 'BEGIN { printf "%.3f", ms * p / 100000 }')
		cp "$TMPD/full.pcap.gz" "$TMPD/cut.pcap.gz"
		"$SIPNAB_BIN" -N -I "$TMPD/cut.pcap.gz" --cores "$cores" --report=json \
			>"$TMPD/cut.json" 2>"$TMPD/cut.err" &
		pid=$!
		sleep "$d"
		truncate -s $((gzsize / 3)) "$TMPD/cut.pcap.gz"
		wait "$pid"
		rc=$?
		what="gzip, --cores $cores, cut after $d s of a ${ms} ms run"
		checks=$((checks + 1))
		if [ "$rc" != 0 ]; then
			fail "$what: exit status $rc ($(head -c 200 "$TMPD/cut.err"))"
			continue
		fi
		packets=$(json_get "$TMPD/cut.json" capture.packets)
		if [ ! -s "$TMPD/cut.err" ] && [ "$packets" = "$all" ]; then
			pass "$what: inflated whole before the cut"
		elif grep -q "gzip stream is corrupt or truncated" "$TMPD/cut.err" &&
		     [ "$(json_get "$TMPD/cut.json" capture.input_errors.0.error)" = truncated ] &&
		     [ "$packets" -gt 0 ] && [ "$packets" -lt "$all" ]; then
			hits=$((hits + 1))
			pass "$what: truncated, $packets of $all packets"
		else
			fail "$what: $packets packets, stderr '$(head -c 200 "$TMPD/cut.err")'"
		fi
	done
	if [ "$hits" = 0 ]; then
		missed="$missed ${cores}gz"
	fi
done
finish || exit 1
if [ -n "$missed" ]; then
	echo "SKIP: no cut landed before sipnab had read past it at --cores$missed (m: merged, n: merged with 64 descriptors, gz: gzip)"
	exit 77
fi
