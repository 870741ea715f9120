/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Stand-in for a libFuzzer run of the transport target, for compilers
 * without libFuzzer (CI's gcc build): runs every input of the seed corpus
 * (argv[1], test/fuzz/corpus/fuzz_transport) as it is, then a stream of
 * mutations of them (seed printed, fuzz_smoke.h): byte flips and
 * interesting values anywhere, new random records, a record repeated,
 * truncation and splicing.  Each input sits in an exact-size heap buffer,
 * so a sanitizer build flags any overread.
 *
 *   fuzz_transport_smoke CORPUS_DIR [ITERATIONS]
 */

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fuzz_smoke.h"
#include "fuzz_transport.h"

#define SMOKE_ITERS	20000u
#define SMOKE_MAXLEN	4096u

struct seed {
	uint8_t *data;
	uint32_t len;
	char *name;
};

static struct seed *seeds;
static unsigned int nseeds;

/* The input being run, written out if it aborts. */
static const uint8_t *cur;
static uint32_t cur_len;
static char cur_what[4200];

static void
on_abort(int sig)
{
	char path[256];
	int fd;

	snprintf(path, sizeof(path), "%s/fuzz_transport-crash-%d",
		 getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp",
		 (int)getpid());
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd >= 0) {
		if (write(fd, cur, cur_len) != (ssize_t)cur_len)
			path[0] = '\0';
		close(fd);
	}
	fprintf(stderr, "fuzz_transport_smoke: %s failed; input saved as %s "
		"(replay: fuzz_transport_smoke DIR_WITH_IT 0)\n", cur_what,
		path);
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
	while ((de = readdir(d)) != NULL) {
		char path[4096];
		struct seed *ns;
		size_t nlen = strlen(de->d_name) + 1;
		FILE *f;
		long len;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		f = fopen(path, "rb");
		if (f == NULL)
			continue;
		fseek(f, 0, SEEK_END);
		len = ftell(f);
		rewind(f);
		ns = realloc(seeds, sizeof(*ns) * (nseeds + 1));
		if (ns == NULL || len <= 0 || len > SMOKE_MAXLEN)
			abort();
		seeds = ns;
		seeds[nseeds].data = malloc((size_t)len);
		seeds[nseeds].name = malloc(nlen);
		if (seeds[nseeds].name == NULL)
			abort();
		memcpy(seeds[nseeds].name, de->d_name, nlen);
		seeds[nseeds].len = (uint32_t)len;
		if (seeds[nseeds].data == NULL ||
		    fread(seeds[nseeds].data, 1, (size_t)len, f) != (size_t)len)
			abort();
		fclose(f);
		nseeds++;
	}
	closedir(d);
	return 0;
}

static const uint8_t hot_val[] = {
	0x00, 0x01, 0x02, 0x03, 0x04, 0x06, 0x0a, 0x0c, 0x0d, 0x10, 0x11,
	0x12, 0x13, 0x14, 0x1f, 0x20, 0x3f, 0x40, 0x60, 0x64, 0x7f, 0x80,
	0x81, 0xc0, 0xfe, 0xff,
};

static uint32_t
mutate(uint8_t *buf, uint32_t len)
{
	unsigned int n = 1 + smoke_below(4);

	for (unsigned int k = 0; k < n; k++) {
		uint32_t r = smoke_below(100), i, cnt, at;

		if (r < 35 && len > 0) {		/* flip bits */
			cnt = 1 + smoke_below(4);
			for (i = 0; i < cnt; i++)
				buf[smoke_below(len)] ^=
					(uint8_t)(1u << smoke_below(8));
		} else if (r < 55 && len > 0) {		/* interesting value */
			buf[smoke_below(len)] =
				hot_val[smoke_below(sizeof(hot_val))];
		} else if (r < 70 && len + 24 < SMOKE_MAXLEN) {
			/* a new record: frame, step or action */
			at = FZ_HDR_LEN + smoke_below(len > FZ_HDR_LEN ?
						     len - FZ_HDR_LEN + 1 : 1);
			at = at > len ? len : at;
			cnt = 3 + smoke_below(FZ_FRAME_LEN - 2);
			memmove(buf + at + cnt, buf + at, len - at);
			for (i = 0; i < cnt; i++)
				buf[at + i] = (uint8_t)smoke_rnd();
			buf[at] &= (uint8_t)~0x1u;	/* not raw */
			len += cnt;
		} else if (r < 80 && len > FZ_HDR_LEN) { /* repeat a chunk */
			at = FZ_HDR_LEN + smoke_below(len - FZ_HDR_LEN);
			cnt = 1 + smoke_below(len - at);
			if (len + cnt > SMOKE_MAXLEN)
				cnt = SMOKE_MAXLEN - len;
			/* the chunk, then the chunk again and the rest */
			memmove(buf + at + cnt, buf + at, len - at);
			len += cnt;
		} else if (r < 90) {			/* truncate */
			len = smoke_below(len + 1);
		} else {				/* splice a seed's tail */
			const struct seed *s = &seeds[smoke_below(nseeds)];

			at = smoke_below(len + 1);
			cnt = smoke_below(s->len + 1);
			if (at + cnt > SMOKE_MAXLEN)
				cnt = SMOKE_MAXLEN - at;
			memcpy(buf + at, s->data + s->len - cnt, cnt);
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
	const struct fz_stats *st = &fz_stats;
	const char *dir = argc > 1 ? argv[1] : "test/fuzz/corpus/fuzz_transport";
	unsigned long iters = argc > 2 ? strtoul(argv[2], NULL, 0) :
		SMOKE_ITERS;
	struct timespec t0, t1;
	double secs;

	smoke_seed("fuzz_transport_smoke");
	if (load_corpus(dir) < 0 || nseeds == 0) {
		fprintf(stderr, "no corpus in %s\n", dir);
		return 1;
	}
	LLVMFuzzerInitialize(&argc, &argv);
	signal(SIGABRT, on_abort);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (unsigned int i = 0; i < nseeds; i++) {
		snprintf(cur_what, sizeof(cur_what), "corpus input %s",
			 seeds[i].name);
		run_one(seeds[i].data, seeds[i].len);
	}
	for (unsigned long it = 0; it < iters; it++) {
		const struct seed *sd = &seeds[smoke_below(nseeds)];

		snprintf(cur_what, sizeof(cur_what),
			 "mutation %lu (of %s)", it, sd->name);
		memcpy(work, sd->data, sd->len);
		run_one(work, mutate(work, sd->len));
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	secs = (double)(t1.tv_sec - t0.tv_sec) +
		(double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	printf("%lu inputs (%u seeds) in %.1f s, %.0f exec/s: %lu records, "
	       "%lu frames in, %lu frames out, %lu CQEs (%lu errors)\n",
	       st->inputs, nseeds, secs, (double)st->inputs / secs,
	       st->records, st->frames, st->tx_frames, st->cqes, st->cqe_err);
	/* the inputs must make the engine answer and complete, with
	 * successes and errors, or they test little */
	if (st->tx_frames == 0 || st->cqes == st->cqe_err || st->cqe_err == 0) {
		fprintf(stderr, "the inputs did not reach the transport\n");
		return 1;
	}
	while (nseeds > 0) {
		free(seeds[--nseeds].data);
		free(seeds[nseeds].name);
	}
	free(seeds);
	return 0;
}
