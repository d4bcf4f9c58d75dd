/*
 * floor.c - the floor for reading a capture: libpcap's bare read loop over the file, touching
 * each packet's first byte so the data is really read. Prints packets, bytes and seconds.
 * Usage: bench/floor FILE
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include <pcap/pcap.h>

int main(int argc, char **argv)
{
	char err[PCAP_ERRBUF_SIZE];
	struct pcap_pkthdr *h;
	const u_char *data;
	struct timespec t0, t1;
	uint64_t n = 0, bytes = 0, sum = 0;
	pcap_t *p;

	if (argc != 2) {
		fprintf(stderr, "usage: floor FILE\n");
		return 2;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	p = pcap_open_offline(argv[1], err);
	if (!p) {
		fprintf(stderr, "floor: %s\n", err);
		return 2;
	}
	while (pcap_next_ex(p, &h, &data) == 1) {
		n++;
		bytes += h->caplen;
		sum += data[0];
	}
	pcap_close(p);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("packets %llu bytes %llu seconds %.6f (checksum %llu)\n", (unsigned long long)n,
	       (unsigned long long)bytes,
	       (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9,
	       (unsigned long long)(sum & 0xff));
	return 0;
}
