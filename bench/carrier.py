#!/usr/bin/env python3
"""carrier.py - deterministic generator of a carrier-like SIP/RTP capture.

Writes a classic little-endian microsecond pcap (linktype Ethernet) of N
G.711 calls over IPv4/UDP.  Each call is INVITE (SDP offer), 100 Trying,
180 Ringing, 200 OK (SDP answer), ACK, 50 RTP packets each way, BYE, 200 OK:
7 SIP messages + 100 RTP packets = 107 packets per call.

Calls reuse K Call-IDs (--call-ids) and K RTP stream pairs (--stream-pairs);
calls that share a stream pair run one after the other and continue the same
RTP streams (5-tuple, SSRC, sequence numbers, media clock).  Impairments
(--loss, --jitter-ms, --reorder) apply to RTP only; --truth writes what was
sent and what was written, per stream.  Same arguments -> same bytes.

Standard library only.  See bench/README.md.
"""

import argparse
import heapq
import json
import math
import random
import struct
import sys
import time

# ---------------------------------------------------------------- constants

DEFAULT_START = 1767225600  # 2026-01-01T00:00:00Z
SIP_PORT = 5060
RTP_PER_DIR = 50            # packets each way per call
PTIME_MS = 20               # G.711 packetisation
TS_PER_PKT = 160            # 8000 Hz * 20 ms
PAYLOAD_LEN = 160
PT_PCMU = 0
N_CALLER_HOSTS = 64         # 10.1.0.10 ..
N_CALLEE_HOSTS = 16         # 10.2.0.10 ..
CALLER_RTP_BASE = 16384
CALLEE_RTP_BASE = 20000
MIN_INTERVAL_MS = 5         # a new call at least every 5 ms
GUARD_MS = 20               # idle time between two calls on one stream pair

# Call timeline, milliseconds from the call's start (INVITE).
T_TRYING = 2
T_RINGING = 40
T_OK = 200
T_ACK = 205
T_RTP_A = 210               # first caller->callee RTP packet
T_RTP_B = 213               # first callee->caller RTP packet
T_RTP_LAST = T_RTP_B + (RTP_PER_DIR - 1) * PTIME_MS
# BYE = T_RTP_LAST + PTIME_MS + ceil(jitter); 200 OK 3 ms later.

ETH_IP_UDP = 14 + 20 + 8
PCAP_GLOBAL = struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1)


def ip_str(ip):
    return "%d.%d.%d.%d" % ((ip >> 24) & 255, (ip >> 16) & 255, (ip >> 8) & 255, ip & 255)


def caller_ip(h):
    return (10 << 24) | (1 << 16) | (10 + h)


def callee_ip(h):
    return (10 << 24) | (2 << 16) | (10 + h)


def mac_of(ip):
    return b"\x02\x00" + struct.pack("!I", ip)


def ip_checksum(hdr):
    s = sum(struct.unpack("!10H", hdr))
    s = (s & 0xFFFF) + (s >> 16)
    s = (s & 0xFFFF) + (s >> 16)
    return (~s) & 0xFFFF


def l2l3(src, sport, dst, dport, payload_len):
    """Ethernet + IPv4 (DF, ID 0, TTL 64, valid checksum) + UDP (checksum 0)."""
    eth = mac_of(dst) + mac_of(src) + b"\x08\x00"
    total = 20 + 8 + payload_len
    ip = bytearray(struct.pack("!BBHHHBBHII", 0x45, 0, total, 0, 0x4000, 64, 17, 0, src, dst))
    struct.pack_into("!H", ip, 10, ip_checksum(ip))
    udp = struct.pack("!HHHH", sport, dport, 8 + payload_len, 0)
    return eth + bytes(ip) + udp


def ulaw(sample):
    """G.711 mu-law encoding of a 16-bit linear sample."""
    BIAS, CLIP = 0x84, 32635
    sign = 0x80 if sample < 0 else 0
    if sample < 0:
        sample = -sample
    sample = min(sample, CLIP) + BIAS
    exp = 7
    mask = 0x4000
    while exp > 0 and not (sample & mask):
        exp -= 1
        mask >>= 1
    mant = (sample >> (exp + 3)) & 0x0F
    return (~(sign | (exp << 4) | mant)) & 0xFF


def tone(freq):
    # 400 Hz and 1000 Hz both repeat exactly within 160 samples.
    return bytes(ulaw(int(6000 * math.sin(2 * math.pi * freq * n / 8000))) for n in range(PAYLOAD_LEN))


# ---------------------------------------------------------------- model

class Stream:
    """One RTP direction of one stream pair; persists across calls."""
    __slots__ = ("src", "sport", "dst", "dport", "ssrc", "seq_ext", "seq0", "ts", "last_ms",
                 "template", "sent", "received", "first_recv", "last_recv", "max_seen",
                 "first_arr", "last_arr",
                 "reordered", "swapped", "calls")

    def __init__(self, src, sport, dst, dport, ssrc, seq0, ts0, payload):
        self.src, self.sport, self.dst, self.dport = src, sport, dst, dport
        self.ssrc = ssrc
        self.seq0 = seq0          # first sequence number sent
        self.seq_ext = 0          # packets sent so far (extended seq offset)
        self.ts = ts0             # RTP timestamp of the next packet ...
        self.last_ms = None       # ... nominal time (ms) of the previous packet
        rec_len = ETH_IP_UDP + 12 + PAYLOAD_LEN
        self.template = bytearray(
            struct.pack("<IIII", 0, 0, rec_len, rec_len)
            + l2l3(src, sport, dst, dport, 12 + PAYLOAD_LEN)
            + struct.pack("!BBHII", 0x80, PT_PCMU, 0, 0, ssrc)
            + payload)
        self.sent = self.received = 0
        self.first_recv = self.last_recv = self.max_seen = None
        self.first_arr = self.last_arr = None   # seq of the first / last packet written
        self.reordered = self.swapped = self.calls = 0


class Pair:
    __slots__ = ("a_ip", "a_port", "b_ip", "b_port", "fwd", "rev")


def make_pair(p, rng, pay_a, pay_b):
    pr = Pair()
    ha = p % N_CALLER_HOSTS
    hb = (p + p // N_CALLER_HOSTS) % N_CALLEE_HOSTS
    pr.a_ip, pr.b_ip = caller_ip(ha), callee_ip(hb)
    pr.a_port = CALLER_RTP_BASE + 2 * (p // N_CALLER_HOSTS)
    pr.b_port = CALLEE_RTP_BASE + 2 * (p // N_CALLEE_HOSTS)
    pr.fwd = Stream(pr.a_ip, pr.a_port, pr.b_ip, pr.b_port, rng.getrandbits(32),
                    rng.getrandbits(16), rng.getrandbits(32), pay_a)
    pr.rev = Stream(pr.b_ip, pr.b_port, pr.a_ip, pr.a_port, rng.getrandbits(32),
                    rng.getrandbits(16), rng.getrandbits(32), pay_b)
    return pr


def sdp(ip, port, sess, ver):
    a = ip_str(ip)
    return ("v=0\r\n"
            "o=- %d %d IN IP4 %s\r\n"
            "s=-\r\n"
            "c=IN IP4 %s\r\n"
            "t=0 0\r\n"
            "m=audio %d RTP/AVP 0 101\r\n"
            "a=rtpmap:0 PCMU/8000\r\n"
            "a=rtpmap:101 telephone-event/8000\r\n"
            "a=fmtp:101 0-16\r\n"
            "a=ptime:20\r\n"
            "a=sendrecv\r\n") % (sess, ver, a, a, port)


def sip_messages(i, pr, call_id, cseq, rng):
    """The 7 SIP messages of call i: list of (offset_ms, from_caller, bytes)."""
    a, b = ip_str(pr.a_ip), ip_str(pr.b_ip)
    ftag = "%08x" % rng.getrandbits(32)
    ttag = "%08x" % rng.getrandbits(32)
    br_inv = "z9hG4bK%08x%04x" % (rng.getrandbits(32), i & 0xFFFF)
    br_ack = "z9hG4bK%08x%04x" % (rng.getrandbits(32), i & 0xFFFF)
    br_bye = "z9hG4bK%08x%04x" % (rng.getrandbits(32), i & 0xFFFF)
    sess_a, sess_b = rng.getrandbits(31), rng.getrandbits(31)
    caller_num = "+1555%07d" % (1000000 + i % 9000000)
    callee_num = "+1666%07d" % (2000000 + (i * 7919) % 8000000)
    fr = "<sip:%s@%s>;tag=%s" % (caller_num, a, ftag)
    to = "<sip:%s@%s>" % (callee_num, b)
    to_t = to + ";tag=" + ttag
    ruri = "sip:%s@%s:%d" % (callee_num, b, SIP_PORT)
    c_contact = "<sip:%s@%s:%d>" % (caller_num, a, SIP_PORT)
    b_contact = "<sip:%s@%s:%d>" % (callee_num, b, SIP_PORT)
    ua_a = "User-Agent: carrier-gw/1.0\r\n"
    ua_b = "Server: carrier-core/1.0\r\n"

    def msg(first, via, frm, t, cseq_s, extra, body=""):
        s = (first + "\r\n"
             "Via: SIP/2.0/UDP %s:%d;branch=%s\r\n" % (a, SIP_PORT, via)
             + ("Max-Forwards: 70\r\n" if not first.startswith("SIP/") else "")
             + "From: %s\r\n" % frm
             + "To: %s\r\n" % t
             + "Call-ID: %s\r\n" % call_id
             + "CSeq: %s\r\n" % cseq_s
             + extra)
        if body:
            s += "Content-Type: application/sdp\r\n"
        s += "Content-Length: %d\r\n\r\n" % len(body) + body
        return s.encode("ascii")

    offer = sdp(pr.a_ip, pr.a_port, sess_a, 1)
    answer = sdp(pr.b_ip, pr.b_port, sess_b, 1)
    inv = "%d INVITE" % cseq
    allow = "Allow: INVITE, ACK, BYE, CANCEL, OPTIONS\r\n"
    return [
        (0, True, msg("INVITE %s SIP/2.0" % ruri, br_inv, fr, to, inv,
                      "Contact: %s\r\n" % c_contact + ua_a + allow, offer)),
        (T_TRYING, False, msg("SIP/2.0 100 Trying", br_inv, fr, to, inv, ua_b)),
        (T_RINGING, False, msg("SIP/2.0 180 Ringing", br_inv, fr, to_t, inv,
                               "Contact: %s\r\n" % b_contact + ua_b)),
        (T_OK, False, msg("SIP/2.0 200 OK", br_inv, fr, to_t, inv,
                          "Contact: %s\r\n" % b_contact + ua_b + allow, answer)),
        (T_ACK, True, msg("ACK %s SIP/2.0" % b_contact[1:-1], br_ack, fr, to_t, "%d ACK" % cseq,
                          ua_a)),
        (None, True, msg("BYE %s SIP/2.0" % b_contact[1:-1], br_bye, fr, to_t, "%d BYE" % (cseq + 1),
                         ua_a)),
        (None, False, msg("SIP/2.0 200 OK", br_bye, fr, to_t, "%d BYE" % (cseq + 1), ua_b)),
    ]


# ---------------------------------------------------------------- main

def parse_args(argv):
    ap = argparse.ArgumentParser(description="Deterministic carrier-like SIP/RTP pcap generator.")
    ap.add_argument("--calls", type=int, required=True, help="number of calls")
    ap.add_argument("--out", required=True, help="output pcap file")
    ap.add_argument("--call-ids", type=int, default=100, help="distinct Call-IDs (0 = one per call)")
    ap.add_argument("--stream-pairs", type=int, default=100,
                    help="distinct RTP address:port pairs (0 = one per call)")
    ap.add_argument("--loss", type=float, default=0.0, help="RTP loss, percent")
    ap.add_argument("--jitter-ms", type=float, default=0.0, help="RTP arrival jitter, uniform [0,J] ms")
    ap.add_argument("--reorder", type=float, default=0.0,
                    help="percent of RTP packets swapped with the next packet of their stream")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--truth", help="write per-stream ground truth JSON here")
    ap.add_argument("--start", type=int, default=DEFAULT_START, help="epoch seconds of the first call")
    a = ap.parse_args(argv)
    if a.calls < 1:
        ap.error("--calls must be >= 1")
    if a.call_ids < 0 or a.stream_pairs < 0:
        ap.error("--call-ids and --stream-pairs must be >= 0")
    for name in ("loss", "reorder"):
        v = getattr(a, name)
        if not 0 <= v <= 100:
            ap.error("--%s must be a percentage in [0, 100]" % name)
    if a.jitter_ms < 0:
        ap.error("--jitter-ms must be >= 0")
    if a.start < 0:
        ap.error("--start must be >= 0")
    return a


def main(argv=None):
    a = parse_args(sys.argv[1:] if argv is None else argv)
    t_begin = time.monotonic()
    n = a.calls
    n_ids = n if a.call_ids == 0 else min(a.call_ids, n)
    n_pairs = n if a.stream_pairs == 0 else min(a.stream_pairs, n)
    if n_pairs > 300000:
        sys.exit("carrier.py: at most 300000 stream pairs (RTP port space)")

    jit_ms = int(math.ceil(a.jitter_ms))
    t_bye = T_RTP_LAST + PTIME_MS + jit_ms
    t_bye_ok = t_bye + 3
    call_len = t_bye_ok
    # Calls sharing a stream pair must not overlap: pair p hosts calls p, p+K,
    # ... and call p+K starts K intervals after call p.
    if n_pairs < n:
        interval = max(MIN_INTERVAL_MS, -(-(call_len + GUARD_MS) // n_pairs))
    else:
        interval = MIN_INTERVAL_MS

    rng_ids = random.Random("carrier-ids-%d" % a.seed)
    rng_loss = random.Random("carrier-loss-%d" % a.seed)
    rng_jit = random.Random("carrier-jitter-%d" % a.seed)
    rng_reo = random.Random("carrier-reorder-%d" % a.seed)
    loss_p = a.loss / 100.0
    reo_p = a.reorder / 100.0
    jit_us = a.jitter_ms * 1000.0

    call_ids = ["%08x%08x-%04x@carrier.sipnab.invalid"
                % (rng_ids.getrandbits(32), rng_ids.getrandbits(32), c) for c in range(n_ids)]
    pay_a, pay_b = tone(400), tone(1000)
    pairs = [None] * n_pairs
    start_us = a.start * 1000000

    out = open(a.out, "wb")
    out.write(PCAP_GLOBAL)
    chunk = []
    chunk_bytes = 0
    written = sip_written = rtp_written = 0
    heap = []
    counter = 0
    pack_into = struct.pack_into
    heappush, heappop = heapq.heappush, heapq.heappop
    last_written_us = -1
    host_pairs = set()

    def flush_until(limit_us):
        nonlocal chunk_bytes, written, last_written_us
        while heap and heap[0][0] < limit_us:
            t_us, _, rec = heappop(heap)
            chunk.append(rec)
            chunk_bytes += len(rec)
            written += 1
            last_written_us = t_us
            if chunk_bytes >= (4 << 20):
                out.write(b"".join(chunk))
                chunk.clear()
                chunk_bytes = 0

    for i in range(n):
        t0_us = i * interval * 1000
        # every packet of calls >= i is at or after t0: safe to emit earlier ones
        flush_until(t0_us)
        p = i % n_pairs
        pr = pairs[p]
        if pr is None:
            pr = pairs[p] = make_pair(p, rng_ids, pay_a, pay_b)
            host_pairs.add((pr.a_ip, pr.b_ip))
        cseq = 1 + 2 * (i // n_ids) if n_ids < n else 1 + (i % 7) * 10

        # SIP
        for off, from_caller, body in sip_messages(i, pr, call_ids[i % n_ids], cseq, rng_ids):
            if off is None:
                off = t_bye if body.startswith(b"BYE") else t_bye_ok
            t_us = t0_us + off * 1000
            if from_caller:
                hdr = l2l3(pr.a_ip, SIP_PORT, pr.b_ip, SIP_PORT, len(body))
            else:
                hdr = l2l3(pr.b_ip, SIP_PORT, pr.a_ip, SIP_PORT, len(body))
            ts = start_us + t_us
            ln = len(hdr) + len(body)
            rec = struct.pack("<IIII", ts // 1000000, ts % 1000000, ln, ln) + hdr + body
            heappush(heap, (t_us, counter, rec))
            counter += 1
            sip_written += 1

        # RTP, both directions
        for st, first_ms in ((pr.fwd, T_RTP_A), (pr.rev, T_RTP_B)):
            st.calls += 1
            nominal0 = i * interval + first_ms          # ms since capture start
            if st.last_ms is not None:
                # media clock: 8 ticks per ms of wall time since the previous packet
                st.ts = (st.ts + 8 * (nominal0 - st.last_ms)) & 0xFFFFFFFF
            surv = []   # (arrival_us, ext_seq, ts, marker)
            for k in range(RTP_PER_DIR):
                ext = st.seq_ext + k
                ts = (st.ts + k * TS_PER_PKT) & 0xFFFFFFFF
                if loss_p and rng_loss.random() < loss_p:
                    continue
                arr = (nominal0 + k * PTIME_MS) * 1000
                if jit_us:
                    arr += int(round(rng_jit.uniform(0.0, jit_us)))
                surv.append([arr, ext, ts, k == 0])
            st.sent += RTP_PER_DIR
            st.seq_ext += RTP_PER_DIR
            st.last_ms = nominal0 + (RTP_PER_DIR - 1) * PTIME_MS
            st.ts = (st.ts + (RTP_PER_DIR - 1) * TS_PER_PKT) & 0xFFFFFFFF  # ts of the last packet
            if jit_us:
                surv.sort()
            if reo_p:
                k = 0
                while k < len(surv) - 1:
                    if rng_reo.random() < reo_p:
                        x, y = surv[k], surv[k + 1]
                        x[1:], y[1:] = y[1:], x[1:]   # exchange contents, keep arrival slots
                        st.swapped += 1
                        k += 2
                    else:
                        k += 1
            tmpl = st.template
            for arr, ext, ts, marker in surv:
                if st.max_seen is not None and ext < st.max_seen:
                    st.reordered += 1
                if st.max_seen is None or ext > st.max_seen:
                    st.max_seen = ext
                if st.first_arr is None:
                    st.first_arr = ext
                st.last_arr = ext
                if st.first_recv is None or ext < st.first_recv:
                    st.first_recv = ext
                if st.last_recv is None or ext > st.last_recv:
                    st.last_recv = ext
                st.received += 1
                buf = bytearray(tmpl)
                tsabs = start_us + arr
                pack_into("<II", buf, 0, tsabs // 1000000, tsabs % 1000000)
                pack_into("!BHI", buf, 16 + ETH_IP_UDP + 1, (0x80 if marker else 0) | PT_PCMU,
                          (st.seq0 + ext) & 0xFFFF, ts)
                heappush(heap, (arr, counter, buf))
                counter += 1
                rtp_written += 1

    flush_until(1 << 62)
    out.write(b"".join(chunk))
    out.close()

    span_s = last_written_us / 1e6
    elapsed = time.monotonic() - t_begin
    rtp_sent = 0
    streams = []
    for pr in pairs:
        if pr is None:
            continue
        for st in (pr.fwd, pr.rev):
            rtp_sent += st.sent
            if a.truth is None:
                continue
            d = {
                "src": "%s:%d" % (ip_str(st.src), st.sport),
                "dst": "%s:%d" % (ip_str(st.dst), st.dport),
                "ssrc": "0x%08X" % st.ssrc,
                "calls": st.calls,
                "sent": st.sent,
                "received": st.received,
                "lost": st.sent - st.received,
                "first_seq": st.seq0,
                "last_seq": (st.seq0 + st.sent - 1) & 0xFFFF,
                "reordered": st.reordered,
                "swapped": st.swapped,
            }
            if st.received:
                # RFC 3550 A.3: base = first packet received, max = highest seq.
                exp = st.last_recv - st.first_arr + 1
                # Wireshark (tap-rtp-analysis): first and LAST packet received.
                exp_ws = st.last_arr - st.first_arr + 1
                d["first_seq_received"] = (st.seq0 + st.first_recv) & 0xFFFF
                d["last_seq_received"] = (st.seq0 + st.last_recv) & 0xFFFF
                d["first_seq_arrived"] = (st.seq0 + st.first_arr) & 0xFFFF
                d["last_seq_arrived"] = (st.seq0 + st.last_arr) & 0xFFFF
                d["expected_rfc3550"] = exp
                d["lost_rfc3550"] = exp - st.received
                d["lost_wireshark"] = exp_ws - st.received
            else:
                for k in ("first_seq_received", "last_seq_received",
                          "first_seq_arrived", "last_seq_arrived"):
                    d[k] = None
                d["expected_rfc3550"] = d["lost_rfc3550"] = d["lost_wireshark"] = 0
            streams.append(d)

    summary = ("carrier.py: %d calls, %d packets (%d SIP, %d RTP written, %d RTP lost), "
               "%d Call-IDs, %d stream pairs (%d streams), %d host pairs, call every %d ms, "
               "span %.3f s, %.2f s to generate -> %s"
               % (n, written, sip_written, rtp_written, rtp_sent - rtp_written, n_ids, n_pairs,
                  2 * n_pairs, len(host_pairs), interval, span_s, elapsed, a.out))
    if a.truth is not None:
        truth = {
            "generator": "bench/carrier.py",
            "arguments": {
                "calls": n, "call_ids": a.call_ids, "stream_pairs": a.stream_pairs,
                "loss": a.loss, "jitter_ms": a.jitter_ms, "reorder": a.reorder,
                "seed": a.seed, "start": a.start,
            },
            "schedule": {
                "call_interval_ms": interval, "call_length_ms": call_len,
                "span_seconds": span_s, "call_ids": n_ids, "stream_pairs": n_pairs,
                "host_pairs": len(host_pairs),
            },
            "totals": {
                "packets": written,
                "sip_messages": sip_written,
                "rtp_packets": rtp_written,
                "rtp_sent": rtp_sent,
                "rtp_lost": rtp_sent - rtp_written,
                "rtp_reordered": sum(s["reordered"] for s in streams),
                "rtp_swapped": sum(s["swapped"] for s in streams),
                "streams": len(streams),
                "calls": n,
            },
            "streams": streams,
        }
        with open(a.truth, "w") as f:
            json.dump(truth, f, indent=1)
            f.write("\n")
    print(summary, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
