"""sip_pcap.py - SIP over UDP written as a classic pcap, for the shell tests' generated
captures (tests/xcid_legs.sh, tests/sip_malformed.sh, tests/merge_many.sh,
tests/cli_input.sh). Standard library only.

    cap = SipPcap(path)                # microsecond pcap, Ethernet, first packet at 1.8e9 s
    cap.packet("10.0.0.1", "10.0.0.2", "INVITE sip:bob@... SIP/2.0\\n...", dt=0.01)

Each packet is one IPv4/UDP datagram from port 5060 to port 5060, dt seconds after the one
before; its text's LF line ends become CRLF. cap.udp(src, sport, dst, dport, payload, dt)
writes any other datagram (RTP, for instance).
"""
import struct


class SipPcap:
    def __init__(self, path, start=1800000000.0):
        self.out = open(path, "wb")
        self.out.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
        self.t = start

    @staticmethod
    def _csum(b):
        if len(b) % 2:
            b += b"\0"
        s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
        while s >> 16:
            s = (s & 0xffff) + (s >> 16)
        return ~s & 0xffff

    @staticmethod
    def _ip(a):
        return bytes(int(x) for x in a.split("."))

    def packet(self, src, dst, text, dt=0.01):
        self.udp(src, 5060, dst, 5060, text.replace("\n", "\r\n").encode(), dt)

    def udp(self, src, sport, dst, dport, payload, dt=0.01):
        """Any UDP datagram (bytes), dt seconds after the packet before."""
        self.t += dt
        udp = struct.pack("!HHHH", sport, dport, 8 + len(payload), 0) + payload
        hdr = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 1, 0, 64, 17, 0,
                          self._ip(src), self._ip(dst))
        hdr = hdr[:10] + struct.pack("!H", self._csum(hdr)) + hdr[12:]
        frame = b"\x02\0\0\0\0\x02" + b"\x02\0\0\0\0\x01" + b"\x08\x00" + hdr + udp
        sec = int(self.t)
        self.out.write(struct.pack("<IIII", sec, int(round((self.t - sec) * 1e6)), len(frame),
                                   len(frame)))
        self.out.write(frame)

    def close(self):
        self.out.close()
