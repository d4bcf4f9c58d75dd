#!/bin/sh
# Set up a Debian 12 machine (as root) to build sipnab, then build it.
#   sh contrib/setup.sh               release build in build/, profile-guided (`make pgo`), with
#                                     GLib, PCRE2 and zlib linked statically (--enable-static-deps)
#   sh contrib/setup.sh --sanitizers  ASan+UBSan build with -Werror in build-san/ (what CI tests)
# Idempotent: installs only missing packages, reconfigures only when needed.
set -eu
cd "$(dirname "$0")/.."

mode=release
for a in "$@"; do
	case "$a" in
	--sanitizers) mode=san ;;
	*) echo "usage: sh contrib/setup.sh [--sanitizers]" >&2; exit 2 ;;
	esac
done

pkgs="build-essential autoconf automake pkg-config libpcap-dev libncurses-dev libpcre2-dev
libglib2.0-dev libmaxminddb-dev libssl-dev zlib1g-dev libcjson-dev libyaml-dev check python3
sip-tester strace valgrind"
missing=""
for p in $pkgs; do
	dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
done
if [ -n "$missing" ]; then
	if [ "$(id -u)" != 0 ]; then
		echo "setup: missing packages:$missing (run as root or install them)" >&2
		exit 1
	fi
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq $missing
fi

if [ ! -x configure ] || [ configure.ac -nt configure ]; then
	autoreconf -fi
fi

if [ "$mode" = san ]; then
	dir=build-san
	flags="--enable-sanitizers --enable-werror CFLAGS=-O1"
else
	dir=build
	flags="--enable-static-deps"
fi
mkdir -p "$dir"
cd "$dir"
stamp="configured: $flags"
if [ ! -f Makefile ] || [ "$(cat .setup-stamp 2>/dev/null)" != "$stamp" ]; then
	# shellcheck disable=SC2086
	../configure -q $flags
	echo "$stamp" > .setup-stamp
fi
if [ "$mode" = release ]; then
	# profile-guided (`make pgo`, Makefile.am): again when a source, the training (its
	# script, generator or captures) or the binary (a plain `make` since) is newer than the
	# last one
	if [ ! -f .pgo-stamp ] || [ sipnab -nt .pgo-stamp ] ||
		[ -n "$(find ../src ../analysis ../include ../Makefile.am ../configure.ac \
			../contrib/pgo-train.sh ../bench/carrier.py ../corpus/pcap \
			-newer .pgo-stamp -print | head -n 1)" ]; then
		make -j"$(nproc)" pgo >/dev/null
		touch .pgo-stamp
	fi
fi
make -j"$(nproc)" >/dev/null
echo "setup: built $dir/sipnab"
