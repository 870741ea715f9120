/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Stand-in for a libFuzzer run of the attach protocol target, for
 * compilers without libFuzzer (CI's gcc build): runs every input of the
 * seed corpus (argv[1], test/fuzz/corpus/fuzz_attach) as it is, then a
 * stream of mutations of them (seed printed, fuzz_smoke.h): byte flips,
 * interesting values, new random records, truncation and splicing.
 *
 *   fuzz_attach_smoke CORPUS_DIR [ITERATIONS]
 */

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz_attach.h"
#include "fuzz_smoke.h"

#define SMOKE_ITERS	10000u
#define SMOKE_MAXLEN	2048u

static struct {
	uint8_t data[SMOKE_MAXLEN];
	uint32_t len;
} seeds[64];
static unsigned int nseeds;

/* The input being run, written out if it aborts. */
static const uint8_t *cur;
static uint32_t cur_len;

static void
on_abort(int sig)
{
	char path[256];
	int fd;

	snprintf(path, sizeof(path), "%s/fuzz_attach-crash-%d",
		 getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp",
		 (int)getpid());
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd >= 0) {
		if (write(fd, cur, cur_len) != (ssize_t)cur_len)
			path[0] = '\0';
		close(fd);
	}
	fprintf(stderr, "fuzz_attach_smoke: an input failed; saved as %s "
		"(replay: fuzz_attach_smoke DIR_WITH_IT 0)\n", path);
	signal(sig, SIG_DFL);
	raise(sig);
}

static int
load_corpus(const char *dir)
{
	struct dirent *de;
	DIR *d = opendir(dir);

	if (d == NULL)
		return -1;
	while ((de = readdir(d)) != NULL && nseeds < sizeof(seeds) / sizeof(seeds[0])) {
		char path[4096];
		FILE *f;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		f = fopen(path, "rb");
		if (f == NULL)
			continue;
		seeds[nseeds].len = (uint32_t)fread(seeds[nseeds].data, 1,
						    SMOKE_MAXLEN, f);
		fclose(f);
		nseeds++;
	}
	closedir(d);
	return 0;
}

static uint32_t
mutate(uint8_t *buf, uint32_t len)
{
	static const uint8_t hot[] = {
		0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x07, 0x0d, 0x0f, 0x10,
		0x1c, 0x20, 0x40, 0x7f, 0x80, 0xb0, 0xd8, 0xf0, 0xfe, 0xff,
	};
	unsigned int n = 1 + smoke_below(4);

	for (unsigned int k = 0; k < n; k++) {
		uint32_t r = smoke_below(100), i, cnt, at;

		if (r < 35 && len > 0) {		/* flip bits */
			buf[smoke_below(len)] ^=
				(uint8_t)(1u << smoke_below(8));
		} else if (r < 55 && len > 0) {	/* interesting value */
			buf[smoke_below(len)] = hot[smoke_below(sizeof(hot))];
		} else if (r < 75 && len + 64 < SMOKE_MAXLEN) {
			/* a new record of random bytes */
			at = 1 + smoke_below(len > 1 ? len : 1);
			at = at > len ? len : at;
			cnt = FA_REC_HDR + smoke_below(48);
			memmove(buf + at + cnt, buf + at, len - at);
			for (i = 0; i < cnt; i++)
				buf[at + i] = (uint8_t)smoke_rnd();
			buf[at + 4] = (uint8_t)(cnt - FA_REC_HDR);
			len += cnt;
		} else if (r < 88) {			/* truncate */
			len = smoke_below(len + 1);
		} else {				/* splice a seed's tail */
			unsigned int s = smoke_below(nseeds);

			at = smoke_below(len + 1);
			cnt = smoke_below(seeds[s].len + 1);
			if (at + cnt > SMOKE_MAXLEN)
				cnt = SMOKE_MAXLEN - at;
			memcpy(buf + at, seeds[s].data + seeds[s].len - cnt,
			       cnt);
			if (at + cnt > len)
				len = at + cnt;
		}
	}
	return len;
}

static void
run_one(const uint8_t *d, uint32_t len)
{
	uint8_t *in = malloc(len ? len : 1);

	if (in == NULL)
		abort();
	memcpy(in, d, len);
	cur = in;
	cur_len = len;
	LLVMFuzzerTestOneInput(in, len);
	free(in);
}

int
main(int argc, char **argv)
{
	static uint8_t work[SMOKE_MAXLEN];
	const char *dir = argc > 1 ? argv[1] : "test/fuzz/corpus/fuzz_attach";
	unsigned long iters = argc > 2 ? strtoul(argv[2], NULL, 0) :
		SMOKE_ITERS;

	smoke_seed("fuzz_attach_smoke");
	if (load_corpus(dir) < 0 || nseeds == 0) {
		fprintf(stderr, "no corpus in %s\n", dir);
		return 1;
	}
	LLVMFuzzerInitialize(&argc, &argv);
	signal(SIGABRT, on_abort);
	for (unsigned int i = 0; i < nseeds; i++)
		run_one(seeds[i].data, seeds[i].len);
	for (unsigned long it = 0; it < iters; it++) {
		const unsigned int s = smoke_below(nseeds);
		uint32_t len = seeds[s].len;

		memcpy(work, seeds[s].data, len);
		len = mutate(work, len);
		run_one(work, len);
	}
	printf("fuzz_attach_smoke: %u seeds and %lu mutations run, every invariant held\n",
	       nseeds, iters);
	return 0;
}
