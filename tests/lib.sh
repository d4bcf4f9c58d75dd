# Shared helpers for the shell end-to-end tests (sourced). Set by `make check`:
# SIPNAB_BIN, SIPNAB_CORPUS, SIPNAB_SRCDIR, SIPNAB_SHARED.
set -u
: "${SIPNAB_SRCDIR:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${SIPNAB_BIN:=$SIPNAB_SRCDIR/build/sipnab}"
: "${SIPNAB_CORPUS:=$SIPNAB_SRCDIR/corpus}"
: "${SIPNAB_SHARED:=$SIPNAB_SRCDIR/../shared}"
PUBLIC="$SIPNAB_SHARED/pcaps/public"
fails=0
checks=0
TMPD=$(mktemp -d)
trap 'rm -rf "$TMPD"' EXIT

fail() {
	echo "FAIL: $*"
	fails=$((fails + 1))
}

pass() {
	echo "ok: $*"
}

# need_python3 [WHY]: skip the test (exit 77) where python3 is missing
need_python3() {
	if ! command -v python3 >/dev/null 2>&1; then
		echo "SKIP: python3${1:+ ($1)} not found"
		exit 77
	fi
}

# need_read_lease: skip (77) where a file in $TMPD can have no read lease (a file system
# without leases, NFS or some FUSE, or /proc/sys/fs/leases-enable at 0): sipnab copies every
# file there, which the other tests cover
need_read_lease() {
	local why

	: >"$TMPD/lease-probe"
	if ! why=$(python3 -c '
import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
try:
    fcntl.fcntl(fd, 1024, 0)  # F_SETLEASE, F_RDLCK
except OSError as e:
    print(e)
    sys.exit(1)' "$TMPD/lease-probe"); then
		echo "SKIP: no read lease on a file in $TMPD: $why"
		exit 77
	fi
}

# expect_eq WHAT ACTUAL EXPECTED
expect_eq() {
	checks=$((checks + 1))
	if [ "$2" = "$3" ]; then pass "$1 = $3"; else fail "$1: got '$2', expected '$3'"; fi
}

# json_get FILE KEY.PATH  (prints the value with python3's json module)
json_get() {
	python3 -c 'import json,sys
d=json.load(open(sys.argv[1]))
for k in sys.argv[2].split("."):
    d=d[int(k)] if isinstance(d,list) else d[k]
print(json.dumps(d) if isinstance(d,(dict,list)) else d)' "$1" "$2"
}

# expect_same_report PCAP REF WHAT [VAR=VALUE ...]: the JSON report of PCAP at --cores 2, 3
# and 4, each under four hash keys (SIPNAB_HASH_SEED) and with the environment VAR=VALUE
# given, is the same as the report in REF (the --cores 1 one); WHAT names the case
expect_same_report() {
	local pcap="$1" ref="$2" what="$3" cores seed

	shift 3
	for cores in 2 3 4; do
		for seed in 1 2 3 4; do
			env "$@" SIPNAB_HASH_SEED=$seed "$SIPNAB_BIN" -N -I "$pcap" --cores "$cores" \
				--report=json >"$TMPD/same.json" 2>/dev/null
			expect_eq "--cores $cores, key $seed$what: same report" \
				"$(cmp -s "$ref" "$TMPD/same.json" && echo same)" same
		done
	done
}

# fd_limit N: N, or the hard limit of open files if that is lower (for `ulimit -n`)
fd_limit() {
	local hard

	hard=$(ulimit -Hn)
	if [ "$hard" != unlimited ] && [ "$hard" -lt "$1" ]; then
		echo "$hard"
	else
		echo "$1"
	fi
}

need_public() {
	if [ ! -d "$PUBLIC" ]; then
		echo "SKIP: $PUBLIC not present"
		exit 77
	fi
}

finish() {
	echo "$checks checks, $fails failed"
	[ "$fails" -eq 0 ]
}
