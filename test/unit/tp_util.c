/* SPDX-License-Identifier: BSD-3-Clause */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "tp_util.h"

#define TP_PCAP_MAGIC_US	0xa1b2c3d4u
#define TP_PCAP_MAGIC_NS	0xa1b23c4du
#define TP_PCAP_GHDR		24u
#define TP_PCAP_RHDR		16u

static uint32_t
tp_rd32(const struct tp_pcap *pc, size_t off)
{
	uint32_t v;

	memcpy(&v, pc->buf + off, 4);
	return pc->swap ? __builtin_bswap32(v) : v;
}

int
tp_pcap_open_mem(struct tp_pcap *pc, uint8_t *buf, size_t len)
{
	uint32_t magic;

	memset(pc, 0, sizeof(*pc));
	pc->buf = buf;
	pc->len = len;
	if (len < TP_PCAP_GHDR)
		goto err;
	memcpy(&magic, buf, 4);
	if (magic == __builtin_bswap32(TP_PCAP_MAGIC_US) ||
	    magic == __builtin_bswap32(TP_PCAP_MAGIC_NS)) {
		pc->swap = true;
		magic = __builtin_bswap32(magic);
	}
	if (magic != TP_PCAP_MAGIC_US && magic != TP_PCAP_MAGIC_NS)
		goto err;
	pc->nsec = magic == TP_PCAP_MAGIC_NS;
	pc->linktype = tp_rd32(pc, 20);
	pc->pos = TP_PCAP_GHDR;
	return 0;
err:
	free(buf);
	pc->buf = NULL;
	return -1;
}

int
tp_pcap_open(struct tp_pcap *pc, const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	long sz;

	if (f == NULL)
		return -1;
	if (fseek(f, 0, SEEK_END) != 0 || (sz = ftell(f)) < 0 ||
	    fseek(f, 0, SEEK_SET) != 0 || (buf = malloc((size_t)sz + 1)) == NULL) {
		fclose(f);
		return -1;
	}
	if (fread(buf, 1, (size_t)sz, f) != (size_t)sz) {
		free(buf);
		fclose(f);
		return -1;
	}
	fclose(f);
	return tp_pcap_open_mem(pc, buf, (size_t)sz);
}

int
tp_pcap_next(struct tp_pcap *pc, const uint8_t **data, uint32_t *caplen,
	     uint64_t *ts_ns)
{
	uint32_t sec, frac, incl;

	if (pc->pos == pc->len)
		return 0;
	if (pc->len - pc->pos < TP_PCAP_RHDR)
		return -1;
	sec = tp_rd32(pc, pc->pos);
	frac = tp_rd32(pc, pc->pos + 4);
	incl = tp_rd32(pc, pc->pos + 8);
	if (pc->len - pc->pos - TP_PCAP_RHDR < incl)
		return -1;
	*data = pc->buf + pc->pos + TP_PCAP_RHDR;
	*caplen = incl;
	if (ts_ns != NULL)
		*ts_ns = (uint64_t)sec * 1000000000u +
			 (pc->nsec ? frac : (uint64_t)frac * 1000u);
	pc->pos += TP_PCAP_RHDR + incl;
	return 1;
}

void
tp_pcap_close(struct tp_pcap *pc)
{
	free(pc->buf);
	memset(pc, 0, sizeof(*pc));
}

static int
tp_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int
tp_list(const char *dir, const char *suffix, char ***names)
{
	size_t sl = strlen(suffix);
	char **v = NULL;
	struct dirent *de;
	int n = 0;
	DIR *d;

	*names = NULL;
	d = opendir(dir);
	if (d == NULL)
		return 0;
	while ((de = readdir(d)) != NULL) {
		size_t l = strlen(de->d_name);
		char **nv;

		if (l <= sl || strcmp(de->d_name + l - sl, suffix) != 0)
			continue;
		nv = realloc(v, sizeof(*v) * (size_t)(n + 1));
		if (nv == NULL)
			break;
		v = nv;
		v[n++] = strdup(de->d_name);
	}
	closedir(d);
	if (n > 0)
		qsort(v, (size_t)n, sizeof(*v), tp_cmp);
	*names = v;
	return n;
}

void
tp_list_free(char **names, int n)
{
	int i;

	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

int
tp_load(const char *dir, const char *name, struct tp_frame **frames)
{
	struct tp_frame *v = NULL, *nv;
	const uint8_t *d;
	struct tp_pcap pc;
	char path[1024];
	uint32_t l;
	int n = 0, r;

	*frames = NULL;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (tp_pcap_open(&pc, path) != 0)
		return -1;
	while ((r = tp_pcap_next(&pc, &d, &l, NULL)) == 1) {
		nv = realloc(v, sizeof(*v) * (size_t)(n + 1));
		if (nv == NULL)
			break;
		v = nv;
		v[n].data = malloc(l ? l : 1);
		v[n].len = l;
		memcpy(v[n].data, d, l);
		n++;
	}
	tp_pcap_close(&pc);
	if (r < 0) {
		tp_frames_free(v, n);
		return -1;
	}
	*frames = v;
	return n;
}

void
tp_frames_free(struct tp_frame *f, int n)
{
	int i;

	for (i = 0; i < n; i++)
		free(f[i].data);
	free(f);
}

int
tp_icrc_variant(const uint8_t *l3, uint32_t pos[16])
{
	uint32_t iph;
	int n = 0;

	if ((l3[0] >> 4) == 6) {
		/* byte 0 only in its low nibble: callers handle it */
		pos[n++] = 1;
		pos[n++] = 2;
		pos[n++] = 3;
		pos[n++] = 7;
		iph = 40;
	} else {
		pos[n++] = 1;
		pos[n++] = 8;
		pos[n++] = 10;
		pos[n++] = 11;
		iph = (l3[0] & 0xfu) * 4u;
	}
	pos[n++] = iph + 6;
	pos[n++] = iph + 7;
	pos[n++] = iph + 8 + 4;
	return n;
}

uint32_t
tp_ref_icrc(const uint8_t *l3, uint32_t len)
{
	static const uint8_t ones[8] = {
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	};
	uint8_t *copy = malloc(len ? len : 1);
	uint32_t pos[16];
	uLong crc;
	int i, n;

	memcpy(copy, l3, len);
	n = tp_icrc_variant(l3, pos);
	for (i = 0; i < n; i++)
		if (pos[i] < len)
			copy[pos[i]] = 0xff;
	if ((l3[0] >> 4) == 6)
		copy[0] |= 0x0f;
	crc = crc32(0, ones, sizeof(ones));
	crc = crc32(crc, copy, len);
	free(copy);
	return (uint32_t)crc;
}
