/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Test helpers shared by test/unit and test/fuzz: a minimal classic-pcap
 * reader (no libpcap; both byte orders, microsecond and nanosecond
 * variants), directory listing, whole-capture loading, and a reference
 * ICRC written independently of pmd/wire/rp_icrc.c.
 */

#ifndef _TP_UTIL_H_
#define _TP_UTIL_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct tp_pcap {
	uint8_t *buf;		/* whole file, owned */
	size_t len;
	size_t pos;
	bool swap;		/* file written with the other byte order */
	bool nsec;		/* timestamps in nanoseconds */
	uint32_t linktype;	/* 1 = Ethernet */
};

/* 0 on success, -1 on I/O error or bad header. */
int tp_pcap_open(struct tp_pcap *pc, const char *path);

/* Takes ownership of a malloc'ed buffer. */
int tp_pcap_open_mem(struct tp_pcap *pc, uint8_t *buf, size_t len);

/* 1 with the next record, 0 at the end, -1 on a truncated record. */
int tp_pcap_next(struct tp_pcap *pc, const uint8_t **data, uint32_t *caplen,
		 uint64_t *ts_ns);

void tp_pcap_close(struct tp_pcap *pc);

/*
 * Sorted names (without directory) of files in dir ending in suffix.
 * Returns the count; *names is an array of malloc'ed strings, freed with
 * tp_list_free().
 */
int tp_list(const char *dir, const char *suffix, char ***names);
void tp_list_free(char **names, int n);

struct tp_frame {
	uint8_t *data;		/* malloc'ed, exactly len bytes */
	uint32_t len;
};

/* All frames of dir/name; returns the count or -1. */
int tp_load(const char *dir, const char *name, struct tp_frame **frames);
void tp_frames_free(struct tp_frame *f, int n);

/*
 * Reference ICRC over l3[0, len): a full masked copy of the packet, CRC'd
 * in one go.  Handles IPv4 (with options) and IPv6 without extension
 * headers.
 */
uint32_t tp_ref_icrc(const uint8_t *l3, uint32_t len);

/* Byte offsets (from l3) of the fields the ICRC masks; returns the count. */
int tp_icrc_variant(const uint8_t *l3, uint32_t pos[16]);

#endif /* _TP_UTIL_H_ */
