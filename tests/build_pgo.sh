#!/bin/sh
# `make pgo`, the profile-guided build that contrib/setup.sh makes the release binary with,
# run as a user runs it: a new build directory configured from the source tree with
# --enable-static-deps, as setup.sh does, then `make pgo`. The binary it leaves
# - needs no shared GLib, PCRE2 or zlib (linked from their archives), and configure refuses
#   --enable-static-deps, naming the archive, where one is missing;
# - reports the same as the binary under test, on the corpus captures and on generated
#   carrier traffic with loss and reordering, at one and two threads (how sipnab was compiled
#   never changes what it reports);
# - was built from profiles: the training runs left one for the parser, the engine, the report
#   and main(), and the compiler's switches recorded in the binary's debug information say
#   -fprofile-use;
# - is not instrumented: it has no gcov runtime, and running it changes no profile.
# And `make pgo` refuses a build that has sanitizers, and clang (when installed), before it
# builds anything; when the training fails it fails, removing its instrumented objects so
# that a plain make still links. Four builds of sipnab: about a minute.
. "$(dirname "$0")/lib.sh"
if [ ! -x "$SIPNAB_SRCDIR/configure" ]; then
	echo "SKIP: no configure script in $SIPNAB_SRCDIR (run autoreconf -fi)"
	exit 77
fi
if [ -f "$SIPNAB_SRCDIR/Makefile" ]; then
	echo "SKIP: the source tree is configured in place (a build directory needs it clean)"
	exit 77
fi
need_python3 "for the training captures"

# an archive missing: zlib's libdir made an empty directory by a module file of its own
mkdir -p "$TMPD/pc" "$TMPD/nolib" "$TMPD/nostatic"
sed "s|^libdir=.*|libdir=$TMPD/nolib|" "$(pkg-config --variable=pcfiledir zlib)/zlib.pc" \
	>"$TMPD/pc/zlib.pc"
checks=$((checks + 1))
if (cd "$TMPD/nostatic" && PKG_CONFIG_PATH="$TMPD/pc" "$SIPNAB_SRCDIR/configure" -q \
	--enable-static-deps >"$TMPD/nostatic.log" 2>&1); then
	fail "configure --enable-static-deps without libz.a succeeded"
elif grep -q -- "--enable-static-deps: no $TMPD/nolib/libz.a" "$TMPD/nostatic.log"; then
	pass "configure --enable-static-deps names the missing archive"
else
	tail -n 5 "$TMPD/nostatic.log"
	fail "configure --enable-static-deps without libz.a: wrong message"
fi

b=$TMPD/build
mkdir "$b"
if ! (cd "$b" && "$SIPNAB_SRCDIR/configure" -q --enable-static-deps \
	>"$TMPD/configure.log" 2>&1); then
	cat "$TMPD/configure.log"
	fail "configure"
	finish
	exit 1
fi

# the refusal first: it must come before anything is built
checks=$((checks + 1))
if make -C "$b" pgo SAN_CFLAGS=-fsanitize=address >"$TMPD/san.log" 2>&1; then
	fail "make pgo with sanitizers succeeded"
elif grep -q "not in a build configured with --enable-sanitizers" "$TMPD/san.log" &&
	[ ! -e "$b/sipnab" ]; then
	pass "make pgo refuses a sanitizer build, before building"
else
	cat "$TMPD/san.log"
	fail "make pgo with sanitizers: wrong message or built something"
fi

if command -v clang >/dev/null 2>&1; then
	checks=$((checks + 1))
	if make -C "$b" pgo CC=clang >"$TMPD/clang.log" 2>&1; then
		fail "make pgo with clang succeeded"
	elif grep -q "make pgo: needs GCC" "$TMPD/clang.log" && [ ! -e "$b/sipnab" ]; then
		pass "make pgo refuses clang, before building"
	else
		cat "$TMPD/clang.log"
		fail "make pgo with clang: wrong message or built something"
	fi
fi

# a training that fails: make pgo fails, and leaves no instrumented object behind for the
# next plain make to pick up
checks=$((checks + 1))
if make -C "$b" -j2 pgo PGO_TRAIN=false >"$TMPD/fail.log" 2>&1; then
	fail "make pgo with a failing training succeeded"
elif grep -q "make pgo: failed; its instrumented objects are removed" "$TMPD/fail.log" &&
	[ -z "$(find "$b" -name '*.o' -print | head -n 1)" ] && [ ! -e "$b/sipnab" ]; then
	pass "make pgo with a failing training fails and removes its objects"
else
	tail -n 20 "$TMPD/fail.log"
	fail "make pgo with a failing training: wrong message, or objects left"
fi
checks=$((checks + 1))
if make -C "$b" -j2 sipnab >"$TMPD/plain.log" 2>&1 && "$b/sipnab" -V >/dev/null 2>&1; then
	pass "a plain make builds sipnab after it"
else
	tail -n 20 "$TMPD/plain.log"
	fail "a plain make after the failed make pgo"
fi

checks=$((checks + 1))
if make -C "$b" -j2 pgo >"$TMPD/pgo.log" 2>&1; then
	pass "make pgo"
else
	tail -n 30 "$TMPD/pgo.log"
	fail "make pgo"
	finish
	exit 1
fi
expect_eq "training line" "$(grep -c '^pgo-train: trained' "$TMPD/pgo.log")" 1
for o in src/sip/libsncore_a-sip_msg src/engine/libsncore_a-eng_pipeline \
	src/sdp/libsncore_a-sdp analysis/libsnana_a-ana_report src/sipnab-main; do
	checks=$((checks + 1))
	if [ -s "$b/$o.gcda" ]; then pass "profile $o.gcda"; else fail "no profile $o.gcda"; fi
done
if command -v readelf >/dev/null 2>&1; then
	readelf -d "$b/sipnab" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' >"$TMPD/needed"
	expect_eq "libc among the shared libraries needed" "$(grep -c '^libc\.so' "$TMPD/needed")" 1
	expect_eq "shared GLib, PCRE2 or zlib needed" \
		"$(grep -cE '^lib(glib-2\.0|pcre2-8|z)\.so' "$TMPD/needed")" 0
fi
if command -v nm >/dev/null 2>&1; then
	expect_eq "gcov symbols in the binary" "$(nm "$b/sipnab" | grep -c __gcov_)" 0
fi
if command -v strings >/dev/null 2>&1; then
	# the compiler's switches, as GCC records them in the debug information (-g)
	strings -a "$b/sipnab" | grep -E '^GNU (C|GIMPLE)' >"$TMPD/producers"
	expect_eq "units compiled with -fprofile-use" \
		"$(grep -c -- '-fprofile-use' "$TMPD/producers" | sed 's/^[1-9][0-9]*$/some/')" some
	expect_eq "units compiled with -fprofile-generate" \
		"$(grep -c -- '-fprofile-generate' "$TMPD/producers")" 0
fi
find "$b" -name '*.gcda' -exec md5sum {} + | sort >"$TMPD/gcda.before"

python3 "$SIPNAB_SRCDIR/bench/carrier.py" --calls 60 --loss 3 --reorder 2 --jitter-ms 20 \
	--seed 5 --out "$TMPD/impaired.pcap" >/dev/null 2>&1 || fail "carrier.py"
for f in "$SIPNAB_CORPUS"/pcap/*.pcap "$TMPD/impaired.pcap"; do
	for cores in 1 2; do
		name="$(basename "$f") --cores $cores"
		"$b/sipnab" -N -I "$f" --cores "$cores" --report=json >"$TMPD/pgo.json" 2>&1 ||
			fail "$name: the pgo binary failed"
		"$SIPNAB_BIN" -N -I "$f" --cores "$cores" --report=json >"$TMPD/ref.json" 2>&1 ||
			fail "$name: the binary under test failed"
		checks=$((checks + 1))
		if cmp -s "$TMPD/pgo.json" "$TMPD/ref.json"; then
			pass "$name: same report"
		else
			diff "$TMPD/ref.json" "$TMPD/pgo.json" | head -n 10
			fail "$name: the reports differ"
		fi
	done
done
find "$b" -name '*.gcda' -exec md5sum {} + | sort >"$TMPD/gcda.after"
checks=$((checks + 1))
if cmp -s "$TMPD/gcda.before" "$TMPD/gcda.after"; then
	pass "running the pgo binary wrote no profile"
else
	fail "running the pgo binary changed the profiles"
fi
finish
