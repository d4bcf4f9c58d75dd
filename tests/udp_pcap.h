/*
 * udp_pcap.h - test helper shared by check_eng_run.c, check_eng_giveback.c and
 * check_eng_streams.c: the bytes of a classic pcap file (Ethernet, microseconds, host byte
 * order) holding IPv4/UDP packets, for tests that write captures of many generated packets.
 * Included by test programs only.
 */
#ifndef SIPNAB_TESTS_UDP_PCAP_H
#define SIPNAB_TESTS_UDP_PCAP_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define UDP_PCAP_HDR 24u              /* the file header */
#define UDP_PCAP_OVERHEAD (16u + 42u) /* a record's header, Ethernet, IPv4 and UDP */

static inline void udp_pcap_put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4); /* little-endian host: the file is written in host order */
}

/* The file header into @p hdr (UDP_PCAP_HDR bytes): pcap 2.4, snaplen 65535, Ethernet. */
static inline void udp_pcap_header(uint8_t *hdr)
{
	memset(hdr, 0, UDP_PCAP_HDR);
	udp_pcap_put32(hdr, 0xa1b2c3d4u);
	hdr[4] = 2;
	hdr[6] = 4;
	udp_pcap_put32(hdr + 16, 65535);
	udp_pcap_put32(hdr + 20, 1);
}

/*
 * One record into @p buf (UDP_PCAP_OVERHEAD + @p len bytes): at @p sec.@p usec, IPv4 @p src
 * port @p sport to @p dst port @p dport (TTL 64, header checksum set, UDP checksum 0),
 * carrying @p len bytes of @p payload. Returns the record's length.
 */
static inline size_t udp_pcap_record(uint8_t *buf, uint32_t sec, uint32_t usec,
				     const uint8_t src[4], uint16_t sport, const uint8_t dst[4],
				     uint16_t dport, const void *payload, size_t len)
{
	uint8_t *eth = buf + 16, *ip = eth + 14, *udp = ip + 20;
	uint32_t ip_len = 20 + 8 + (uint32_t)len, sum = 0;

	memset(eth, 0, 14 + 20 + 8);
	eth[12] = 0x08;
	ip[0] = 0x45;
	ip[2] = (uint8_t)(ip_len >> 8);
	ip[3] = (uint8_t)ip_len;
	ip[8] = 64;
	ip[9] = 17;
	memcpy(ip + 12, src, 4);
	memcpy(ip + 16, dst, 4);
	for (int k = 0; k < 20; k += 2) {
		sum += (uint32_t)(ip[k] << 8 | ip[k + 1]);
	}
	while (sum >> 16) {
		sum = (sum & 0xffff) + (sum >> 16);
	}
	ip[10] = (uint8_t)(~sum >> 8);
	ip[11] = (uint8_t)~sum;
	udp[0] = (uint8_t)(sport >> 8);
	udp[1] = (uint8_t)sport;
	udp[2] = (uint8_t)(dport >> 8);
	udp[3] = (uint8_t)dport;
	udp[4] = (uint8_t)((8 + len) >> 8);
	udp[5] = (uint8_t)(8 + len);
	memcpy(udp + 8, payload, len);
	udp_pcap_put32(buf, sec);
	udp_pcap_put32(buf + 4, usec);
	udp_pcap_put32(buf + 8, 14 + ip_len);
	udp_pcap_put32(buf + 12, 14 + ip_len);
	return 16 + 14 + ip_len;
}

/* Create a capture file named from the mkstemp() template @p path (rewritten with the name)
 * and write its header: the stream to write records to, or NULL. */
static inline FILE *udp_pcap_create(char *path)
{
	uint8_t hdr[UDP_PCAP_HDR];
	int fd = mkstemp(path);
	FILE *f = fd >= 0 ? fdopen(fd, "wb") : NULL;

	if (f) {
		udp_pcap_header(hdr);
		if (fwrite(hdr, 1, sizeof(hdr), f) != sizeof(hdr)) {
			fclose(f);
			return NULL;
		}
	}
	return f;
}

#endif
