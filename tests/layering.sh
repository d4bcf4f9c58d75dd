#!/bin/sh
# Layering lint (STYLE.md §1): every #include of a sipnab header must be allowed for its folder,
# and libraries stay in their layer (curses only in ui/, cJSON/maxminddb only in analysis/,
# OpenSSL only in proxy/ and src/capture/cap_tls*).
. "$(dirname "$0")/lib.sh"
cd "$SIPNAB_SRCDIR"

allowed() { # folder -> allowed header prefixes
	case "$1" in
	src/base) echo "sn_" ;;
	src/capture) echo "sn_ cap_" ;;
	src/sip) echo "sn_ sip_" ;;
	src/sdp) echo "sn_ sdp" ;;
	src/rtp) echo "sn_ rtp_ rtcp" ;;
	src/engine) echo "sn_ cap_ sip_ sdp rtp_ rtcp eng" ;;
	analysis) echo "sn_ cap_ sip_ sdp rtp_ rtcp eng ana_" ;;
	ui) echo "sn_ cap_ sip_ sdp rtp_ rtcp eng ana_ ui_" ;;
	proxy) echo "sn_ sip_ sdp eng px_" ;;
	b2bua) echo "sn_ sip_ sdp px_ b2b_" ;;
	*) echo "" ;;
	esac
}

for f in $(find src analysis ui proxy b2bua -name '*.[ch]' 2>/dev/null | sort); do
	dir=$(dirname "$f")
	[ "$f" = src/main.c ] && continue
	ok=$(allowed "$dir")
	for h in $(sed -n 's/^#include "sipnab\/\([^"]*\)".*/\1/p' "$f"); do
		good=no
		for p in $ok; do
			case "$h" in "$p"*) good=yes ;; esac
		done
		checks=$((checks + 1))
		[ $good = yes ] || fail "$f includes sipnab/$h, not allowed in $dir"
	done
	case "$dir" in ui) ;; *)
		grep -qE '#include <n?curses' "$f" && fail "$f includes curses outside ui/" ;;
	esac
	case "$dir" in analysis) ;; *)
		grep -qE '#include <(cjson/|maxminddb)' "$f" && fail "$f uses cJSON/maxminddb outside analysis/" ;;
	esac
	case "$f" in proxy/*|src/capture/cap_tls*) ;; *)
		grep -qE '#include <openssl/' "$f" && fail "$f uses OpenSSL outside proxy/" ;;
	esac
	checks=$((checks + 1))
	case "$f" in *.c)
		first=$(grep -m1 '^#include' "$f")
		[ "$first" = '#include "config.h"' ] || fail "$f: first include is not config.h"
		grep -nE '\b(strcpy|strcat|sprintf|strtok|atoi|gets)\(' "$f" | grep -v snprintf |
			grep -q . && fail "$f uses a banned function"
		;;
	esac
done
finish
