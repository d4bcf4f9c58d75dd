#!/bin/sh
# Golden reports: for every capture corpus/pcap/NAME.pcap[.gz], `sipnab -N --report=json` must
# equal corpus/expect/NAME.json byte for byte. After an intended change of the report, run
# this script with SIPNAB_UPDATE_GOLDEN=1 to rewrite the expectations, and review the diff.
. "$(dirname "$0")/lib.sh"
cd "$SIPNAB_CORPUS/pcap" || exit 1
for f in *.pcap *.pcap.gz *.pcapng; do
	[ -f "$f" ] || continue
	name=${f%.gz}
	name=${name%.pcap}
	name=${name%.pcapng}
	exp="$SIPNAB_CORPUS/expect/$name.json"
	"$SIPNAB_BIN" -N -I "$f" --report=json >"$TMPD/$name.json" || fail "$f: exit status $?"
	if [ "${SIPNAB_UPDATE_GOLDEN:-}" = 1 ]; then
		cp "$TMPD/$name.json" "$exp"
		echo "updated $exp"
		continue
	fi
	checks=$((checks + 1))
	if [ ! -f "$exp" ]; then
		fail "$exp missing (run with SIPNAB_UPDATE_GOLDEN=1)"
	elif diff -u "$exp" "$TMPD/$name.json"; then
		pass "$f matches $exp"
	else
		fail "$f differs from $exp"
	fi
done
finish
