/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Stand-in for a libFuzzer run, for compilers without libFuzzer: feeds
 * LLVMFuzzerTestOneInput() a stream of inputs (seed printed, fuzz_smoke.h)
 * mutated from the rxe captures (argv[1]) plus built IPv6 and VLAN frames:
 * byte flips, interesting values in length fields, truncation, extension,
 * splicing and pure noise.  Each input sits in an exact-size heap buffer,
 * so a sanitizer build flags any overread.
 */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rp_icrc.h"
#include "rp_pkt.h"
#include "tp_util.h"

#include "fuzz_pkt.h"
#include "fuzz_smoke.h"

#define SMOKE_ITERS	200000u
#define SMOKE_MAXLEN	(9216u + 64u)

struct seed {
	uint8_t *data;
	uint32_t len;
};

static struct seed *seeds;
static unsigned int nseeds;

static void
add_seed(const uint8_t *d, uint32_t len)
{
	struct seed *ns = realloc(seeds, sizeof(*ns) * (nseeds + 1));

	if (ns == NULL)
		abort();
	seeds = ns;
	seeds[nseeds].data = malloc(len);
	memcpy(seeds[nseeds].data, d, len);
	seeds[nseeds].len = len;
	nseeds++;
}

/* IPv6 and VLAN-tagged frames: the captures have neither. */
static void
add_built_seeds(void)
{
	static const struct rp_pkt_addr a6 = {
		.sgid = { 0xfe, 0x80, [15] = 1 },
		.dgid = { 0xfe, 0x80, [15] = 2 },
		.sport = 0xc000,
		.ttl = 64,
	};
	static const uint8_t ops[] = {
		RP_OP_SEND_ONLY_IMM, RP_OP_WRITE_ONLY_IMM, RP_OP_READ_RESP_FIRST,
		RP_OP_ATOMIC_ACK, RP_OP_CMP_SWAP, RP_OP_SEND_ONLY_INV,
		RP_OP_UD | RP_OP_SEND_ONLY_IMM, RP_OP_CNP | 1,
	};
	static uint8_t buf[2048], vlan[2048];
	unsigned int i;

	for (i = 0; i < sizeof(ops); i++) {
		uint32_t pay = (rp_opcode[ops[i]].mask & RP_M_PAYLOAD) ?
			i * 5 + 1 : 0;
		uint32_t flen;

		if (ops[i] == (RP_OP_CNP | 1))
			pay = 16;
		flen = rp_pkt_frame_len(&a6, ops[i], pay);
		memset(buf, (int)i, flen);
		rp_pkt_build(buf, &a6, ops[i], 1, i, 1, i, pay);
		rp_pkt_finish(buf, &a6, flen, true);
		add_seed(buf, flen);
		memcpy(vlan, buf, 12);
		vlan[12] = 0x81;
		vlan[13] = 0x00;
		vlan[14] = 0;
		vlan[15] = 7;
		memcpy(vlan + 16, buf + 12, flen - 12);
		add_seed(vlan, flen + 4);
	}
}

static int
load_seeds(const char *dir)
{
	char **names;
	int nf, i, j;

	nf = tp_list(dir, ".pcap", &names);
	for (i = 0; i < nf; i++) {
		struct tp_frame *fr;
		int n = tp_load(dir, names[i], &fr);

		for (j = 0; j < n; j++)
			add_seed(fr[j].data, fr[j].len);
		if (n > 0)
			tp_frames_free(fr, n);
	}
	tp_list_free(names, nf);
	add_built_seeds();
	return nf;
}

/* Offsets worth hitting: the length, version and header fields. */
static const uint16_t hot_off[] = {
	12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25,
	18 + 0, 18 + 4, 18 + 5, 18 + 6,	/* IPv6 / tagged IPv4 */
	34, 35, 36, 37, 38, 39, 40, 41,	/* UDP */
	42, 43, 46, 47,			/* BTH */
	54, 55, 58, 59, 62, 63,		/* tagged / IPv6 UDP */
};

static const uint8_t hot_val[] = {
	0x00, 0x01, 0x03, 0x04, 0x05, 0x06, 0x07, 0x0f, 0x10, 0x11, 0x12,
	0x14, 0x16, 0x17, 0x20, 0x3f, 0x40, 0x45, 0x4f, 0x60, 0x64, 0x65,
	0x7f, 0x80, 0x81, 0x86, 0xdd, 0xfe, 0xff, 0x12, 0xb7,
};

static uint32_t
mutate(uint8_t *buf, uint32_t len)
{
	unsigned int n = 1 + smoke_below(4), k;

	for (k = 0; k < n; k++) {
		uint32_t r = smoke_below(100), i, cnt;

		if (r < 30 && len > 0) {		/* flip bytes */
			cnt = 1 + smoke_below(8);
			for (i = 0; i < cnt; i++)
				buf[smoke_below(len)] ^= (uint8_t)(1u << smoke_below(8));
		} else if (r < 50) {			/* interesting values */
			uint32_t off = hot_off[smoke_below(RTE_DIM(hot_off))];

			if (off < len)
				buf[off] = hot_val[smoke_below(RTE_DIM(hot_val))];
		} else if (r < 65) {			/* truncate */
			len = smoke_below(len + 1);
		} else if (r < 75) {			/* extend */
			cnt = smoke_below(64);
			if (len + cnt > SMOKE_MAXLEN)
				cnt = SMOKE_MAXLEN - len;
			for (i = 0; i < cnt; i++)
				buf[len + i] = (uint8_t)smoke_rnd();
			len += cnt;
		} else if (r < 85 && len > 0) {		/* random 16-bit field */
			uint32_t off = smoke_below(len);
			uint32_t v = smoke_rnd();

			buf[off] = (uint8_t)(v >> 8);
			if (off + 1 < len)
				buf[off + 1] = (uint8_t)v;
		} else if (r < 92) {			/* splice another seed */
			const struct seed *s = &seeds[smoke_below(nseeds)];
			uint32_t at = smoke_below(len + 1);

			cnt = smoke_below(s->len + 1);
			if (at + cnt > SMOKE_MAXLEN)
				cnt = SMOKE_MAXLEN - at;
			memcpy(buf + at, s->data + s->len - cnt, cnt);
			if (at + cnt > len)
				len = at + cnt;
		} else if (r < 96) {			/* fix the ICRC back */
			/* let the mutation reach past the ICRC check */
			uint32_t ihl = len > 14 ? (buf[14] & 0xfu) * 4u : 0;
			uint32_t tot = len > 17 ? (uint32_t)buf[16] << 8 | buf[17] : 0;

			if (len > 14 && (buf[14] >> 4) == 4 && tot >= ihl + 4 &&
			    14 + tot <= len)
				rp_icrc_put(buf + 14, tot - 4);
		} else {				/* noise */
			len = smoke_below(128);
			for (i = 0; i < len; i++)
				buf[i] = (uint8_t)smoke_rnd();
		}
	}
	return len;
}

int
main(int argc, char **argv)
{
	static uint8_t work[SMOKE_MAXLEN];
	const struct fuzz_pkt_stats *s = &fuzz_pkt_stats;
	const char *dir = argc > 1 ? argv[1] : "test/data/rxe";
	unsigned long iters = argc > 2 ? strtoul(argv[2], NULL, 0) :
		SMOKE_ITERS;
	unsigned long it;
	int nf;

	smoke_seed("fuzz_pkt_smoke");
	nf = load_seeds(dir);
	if (nf == 0 || nseeds == 0) {
		fprintf(stderr, "no pcaps in %s\n", dir);
		return 1;
	}
	/* the unmutated seeds first: every one must parse */
	for (it = 0; it < nseeds; it++)
		LLVMFuzzerTestOneInput(seeds[it].data, seeds[it].len);
	if (s->ok_icrc != nseeds) {
		fprintf(stderr, "only %lu of %u seeds parse\n", s->ok_icrc,
			nseeds);
		return 1;
	}
	for (it = 0; it < iters; it++) {
		const struct seed *sd = &seeds[smoke_below(nseeds)];
		uint32_t len;
		uint8_t *in;

		memcpy(work, sd->data, sd->len);
		len = mutate(work, sd->len);
		in = malloc(len ? len : 1);
		memcpy(in, work, len);
		LLVMFuzzerTestOneInput(in, len);
		free(in);
	}
	printf("%lu inputs from %u seeds (%d pcaps): ok(icrc)=%lu "
	       "ok(no icrc)=%lu not_roce=%lu bad=%lu bad_op=%lu bad_icrc=%lu\n",
	       iters, nseeds, nf, s->ok_icrc, s->ok_noicrc, s->not_roce,
	       s->bad, s->bad_op, s->bad_icrc);
	/* the mutations must reach every outcome, or they test little */
	if (s->ok_icrc <= nseeds || s->not_roce == 0 || s->bad == 0 ||
	    s->bad_op == 0 || s->bad_icrc == 0) {
		fprintf(stderr, "mutations did not reach every result\n");
		return 1;
	}
	while (nseeds > 0)
		free(seeds[--nseeds].data);
	free(seeds);
	return 0;
}
