#!/usr/bin/env python3
"""Compare sipnab's RTP streams with reference values, stream by stream.

  rtp_compare.py refs SIPNAB REFS.tsv DIR...   check every reference row (exit 1 on a mismatch)
  rtp_compare.py tshark FILE...               print reference rows from tshark for FILEs

The reference rows are what `tshark -q -z rtp,streams -o rtp.heuristic_rtp:TRUE` prints
(tshark 4.0): packets, lost, max delta, mean jitter and max jitter per (src, dst, SSRC).
A row whose last column is not empty documents a stream where sipnab deliberately differs
from tshark: its values are sipnab's and the note says what tshark shows and why.
Standard library only.
"""
import json
import os
import re
import subprocess
import sys

ROW = re.compile(
    r"\s*([\d.]+)\s+([\d.]+)\s+(\S+)\s+(\d+)\s+(\S+)\s+(\d+)\s+(0x[0-9A-Fa-f]+)\s+(.*?)\s+"
    r"(\d+)\s+(-?\d+) \((-?[\d.]+)%\)\s+([-\d.]+)\s+([-\d.]+)\s+([-\d.]+)\s+([-\d.]+)\s+"
    r"([-\d.]+)\s+([-\d.]+)")


def ep(addr, port):
    return f"[{addr}]:{port}" if ":" in addr else f"{addr}:{port}"


def tshark_rows(path):
    out = subprocess.run(["tshark", "-q", "-z", "rtp,streams", "-o", "rtp.heuristic_rtp:TRUE",
                          "-r", path], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        m = ROW.match(line)
        if m:
            g = m.groups()
            yield [os.path.basename(path), ep(g[2], g[3]), ep(g[4], g[5]),
                   "0x%08X" % int(g[6], 16), g[8], g[9], g[13], g[15], g[16], ""]


def sipnab_streams(sipnab, path):
    out = subprocess.run([sipnab, "-N", "-I", path, "--report=json"], capture_output=True,
                         check=True).stdout
    return {(s["src"], s["dst"], s["ssrc"]): s for s in json.loads(out)["streams"]}


def check(sipnab, refs, dirs):
    rows = {}
    with open(refs) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            c = line.rstrip("\n").split("\t")
            rows.setdefault(c[0], []).append(c)
    checked = failed = skipped = 0
    for name, want in sorted(rows.items()):
        path = next((os.path.join(d, name) for d in dirs
                     if os.path.exists(os.path.join(d, name))), None)
        if not path:
            print(f"skip: {name} not found")
            skipped += 1
            continue
        got = sipnab_streams(sipnab, path)
        for c in want:
            key = (c[1], c[2], c[3])
            s = got.pop(key, None)
            checked += 1
            if s is None:
                print(f"FAIL: {name} {key}: stream missing")
                failed += 1
                continue
            bad = []
            if s["packets"] != int(c[4]):
                bad.append(f"packets {s['packets']} != {c[4]}")
            if s["lost"] != int(c[5]):
                bad.append(f"lost {s['lost']} != {c[5]}")
            for k, v in (("max_delta_ms", c[6]), ("jitter_mean_ms", c[7]),
                         ("jitter_max_ms", c[8])):
                ours = s[k] if s[k] is not None else 0.0
                if abs(round(ours, 3) - float(v)) > 0.0015:
                    bad.append(f"{k} {ours} != {v}")
            if bad:
                print(f"FAIL: {name} {key}: " + "; ".join(bad))
                failed += 1
            else:
                note = f" ({c[9]})" if len(c) > 9 and c[9] else ""
                print(f"ok: {name} {key[0]} -> {key[1]} {key[2]} {c[4]} pkts{note}")
        for key in got:
            print(f"FAIL: {name} {key}: stream not in the references")
            failed += 1
            checked += 1
    print(f"{checked - failed} passed, {failed} failed, {skipped} skipped")
    return 0 if failed == 0 and checked > 0 else (77 if checked == 0 else 1)


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "tshark":
        for path in sys.argv[2:]:
            for r in tshark_rows(path):
                print("\t".join(r))
        return 0
    if len(sys.argv) >= 5 and sys.argv[1] == "refs":
        return check(sys.argv[2], sys.argv[3], sys.argv[4:])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
