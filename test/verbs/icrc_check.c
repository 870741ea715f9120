/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * icrc_check: verify every RoCEv2 packet of pcap files with the project's
 * own parser and ICRC code (rp_pkt_parse() from pmd/wire/rp_pkt.c), since
 * tshark 4.0 decodes RoCEv2 but does not check the ICRC.
 *
 *   icrc_check [--min N] [--flip] FILE.pcap...
 *
 * Every frame of every file is parsed with the ICRC check on.  A frame
 * that is RoCEv2 (UDP port 4791) must parse and carry a correct ICRC;
 * anything else is counted and ignored.  Fails (exit 1) when a RoCEv2
 * frame is malformed, has a bad ICRC or was truncated by the capture, or
 * when fewer than N RoCEv2 frames were seen in all (--min, default 1).
 *
 * --flip is the checker's own test: it flips one bit of the BTH (the PSN,
 * which the ICRC covers) of every RoCEv2 frame and then requires every one
 * of them to fail with a bad ICRC.
 *
 * Reads classic pcap (tcpdump -w), microsecond or nanosecond, either byte
 * order, link type Ethernet; pcapng is refused with a message.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rp_opcode.h"
#include "rp_pkt.h"

#define IC_MAGIC_US	0xa1b2c3d4u
#define IC_MAGIC_NS	0xa1b23c4du
#define IC_MAGIC_NG	0x0a0d0d0au	/* pcapng section header block */
#define IC_LINK_EN10MB	1
#define IC_SNAP_MAX	(256u * 1024)

struct ic_count {
	uint64_t frames;
	uint64_t roce;		/* RoCEv2 frames (checked) */
	uint64_t ok;		/* right ICRC (--flip: bad ICRC detected) */
	uint64_t bad_icrc;	/* --flip: flip not detected */
	uint64_t malformed;
	uint64_t truncated;
	uint64_t other;		/* not RoCEv2 */
};

static bool ic_flip;

static uint32_t
ic_u32(const uint8_t *p, bool swap)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return swap ? __builtin_bswap32(v) : v;
}

static const char *
ic_opname(uint8_t op)
{
	const char *n = rp_opcode[op].name;

	return n != NULL ? n : "undefined";
}

static void
ic_frame(const char *file, uint64_t no, uint8_t *f, uint32_t caplen,
	 uint32_t len, struct ic_count *c)
{
	struct rp_pkt pkt;
	int rc;

	c->frames++;
	rc = rp_pkt_parse(f, caplen, false, &pkt);
	if (rc == RP_PKT_NOT_ROCE) {
		c->other++;
		return;
	}
	c->roce++;
	if (caplen < len) {
		c->truncated++;
		printf("%s: frame %" PRIu64 ": truncated by the capture (%u of "
		       "%u bytes): cannot check the ICRC\n", file, no, caplen,
		       len);
		return;
	}
	if (rc != 0) {
		c->malformed++;
		printf("%s: frame %" PRIu64 ": malformed RoCEv2 packet (%s)\n",
		       file, no, rc == RP_PKT_BAD_OP ? "undefined opcode" :
		       "bad lengths or header");
		return;
	}
	if (ic_flip)
		f[pkt.bth_off + 11] ^= 0x01;	/* PSN, bit 0 */
	rc = rp_pkt_parse(f, caplen, true, &pkt);
	if (ic_flip) {
		if (rc == RP_PKT_BAD_ICRC) {
			c->ok++;
		} else {
			c->bad_icrc++;
			printf("%s: frame %" PRIu64 ": a flipped PSN bit was "
			       "not detected (parse returned %d)\n", file, no,
			       rc);
		}
		return;
	}
	if (rc == 0) {
		c->ok++;
	} else if (rc == RP_PKT_BAD_ICRC) {
		c->bad_icrc++;
		printf("%s: frame %" PRIu64 ": BAD ICRC: %s qpn 0x%06x psn %u "
		       "payload %u\n", file, no, ic_opname(pkt.opcode),
		       pkt.qpn, pkt.psn, pkt.paylen);
	} else {
		c->malformed++;
		printf("%s: frame %" PRIu64 ": parse with ICRC check returned "
		       "%d\n", file, no, rc);
	}
}

static int
ic_file(const char *file, struct ic_count *total)
{
	struct ic_count c = { 0 };
	uint8_t gh[24], rh[16];
	uint8_t *buf = NULL;
	uint64_t no = 0;
	uint32_t magic;
	bool swap;
	FILE *fp;
	int ret = -1;

	fp = fopen(file, "rb");
	if (fp == NULL) {
		fprintf(stderr, "icrc_check: %s: %s\n", file, strerror(errno));
		return -1;
	}
	if (fread(gh, 1, sizeof(gh), fp) != sizeof(gh)) {
		fprintf(stderr, "icrc_check: %s: no pcap header (empty "
			"capture?)\n", file);
		goto out;
	}
	memcpy(&magic, gh, 4);
	if (magic == IC_MAGIC_US || magic == IC_MAGIC_NS) {
		swap = false;
	} else if (__builtin_bswap32(magic) == IC_MAGIC_US ||
		   __builtin_bswap32(magic) == IC_MAGIC_NS) {
		swap = true;
	} else if (magic == IC_MAGIC_NG) {
		fprintf(stderr, "icrc_check: %s: pcapng is not supported; "
			"write classic pcap (tcpdump -w, or tshark -F pcap)\n",
			file);
		goto out;
	} else {
		fprintf(stderr, "icrc_check: %s: not a pcap file (magic "
			"0x%08x)\n", file, magic);
		goto out;
	}
	if (ic_u32(gh + 20, swap) != IC_LINK_EN10MB) {
		fprintf(stderr, "icrc_check: %s: link type %u, only Ethernet "
			"(1) is supported: capture on the interface, not "
			"'any'\n", file, ic_u32(gh + 20, swap));
		goto out;
	}
	buf = malloc(IC_SNAP_MAX);
	if (buf == NULL) {
		fprintf(stderr, "icrc_check: out of memory\n");
		goto out;
	}
	for (;;) {
		size_t n = fread(rh, 1, sizeof(rh), fp);
		uint32_t caplen, len;

		if (n == 0)
			break;
		if (n != sizeof(rh)) {
			fprintf(stderr, "icrc_check: %s: truncated record "
				"header after frame %" PRIu64 "\n", file, no);
			goto out;
		}
		caplen = ic_u32(rh + 8, swap);
		len = ic_u32(rh + 12, swap);
		if (caplen > IC_SNAP_MAX) {
			fprintf(stderr, "icrc_check: %s: frame %" PRIu64
				": captured length %u is implausible\n", file,
				no + 1, caplen);
			goto out;
		}
		if (fread(buf, 1, caplen, fp) != caplen) {
			fprintf(stderr, "icrc_check: %s: frame %" PRIu64
				" cut short (file truncated)\n", file, no + 1);
			goto out;
		}
		ic_frame(file, ++no, buf, caplen, len, &c);
	}
	printf("icrc_check: %s: %" PRIu64 " frames, %" PRIu64 " RoCEv2: %"
	       PRIu64 " %s, %" PRIu64 " %s, %" PRIu64 " malformed, %" PRIu64
	       " truncated; %" PRIu64 " other\n", file, c.frames, c.roce,
	       c.ok, ic_flip ? "flips detected" : "ICRC ok", c.bad_icrc,
	       ic_flip ? "flips missed" : "bad ICRC", c.malformed,
	       c.truncated, c.other);
	total->frames += c.frames;
	total->roce += c.roce;
	total->ok += c.ok;
	total->bad_icrc += c.bad_icrc;
	total->malformed += c.malformed;
	total->truncated += c.truncated;
	total->other += c.other;
	ret = 0;
out:
	free(buf);
	fclose(fp);
	return ret;
}

int
main(int argc, char **argv)
{
	struct ic_count t = { 0 };
	uint64_t min = 1;
	int i, nfiles = 0, err = 0;

	rp_opcode_init();
	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--flip") == 0) {
			ic_flip = true;
		} else if (strcmp(argv[i], "--min") == 0 && i + 1 < argc) {
			min = strtoull(argv[++i], NULL, 0);
		} else if (argv[i][0] == '-') {
			fprintf(stderr, "usage: icrc_check [--min N] [--flip] "
				"FILE.pcap...\n");
			return 2;
		} else {
			nfiles++;
		}
	}
	if (nfiles == 0) {
		fprintf(stderr, "usage: icrc_check [--min N] [--flip] "
			"FILE.pcap...\n");
		return 2;
	}
	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--min") == 0) {
			i++;
			continue;
		}
		if (argv[i][0] == '-')
			continue;
		if (ic_file(argv[i], &t) != 0)
			err = 1;
	}
	if (nfiles > 1)
		printf("icrc_check: all: %" PRIu64 " frames, %" PRIu64
		       " RoCEv2, %" PRIu64 " %s\n", t.frames, t.roce, t.ok,
		       ic_flip ? "flips detected" : "ICRC ok");
	if (err)
		return 1;
	if (t.bad_icrc != 0 || t.malformed != 0 || t.truncated != 0) {
		printf("icrc_check: FAIL: %" PRIu64 " %s, %" PRIu64
		       " malformed, %" PRIu64 " truncated RoCEv2 frames\n",
		       t.bad_icrc, ic_flip ? "undetected flips" :
		       "bad ICRCs", t.malformed, t.truncated);
		return 1;
	}
	if (t.roce < min) {
		printf("icrc_check: FAIL: %" PRIu64 " RoCEv2 frames, expected "
		       "at least %" PRIu64 "\n", t.roce, min);
		return 1;
	}
	return 0;
}
