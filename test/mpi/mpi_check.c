/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mpi_check: an MPI program whose every result is checked, run by
 * test/mpi/mpi.sh with one rank on each test host (Open MPI, pml ucx, over
 * rocepmd).
 *
 *   mpi_check [ITERS]
 *
 *  - ping-pong between ranks 0 and 1 at sizes from 1 B (UCX eager short)
 *    to 1 MiB (rendezvous): every message carries a pattern of (size,
 *    iteration, sender) that the receiver checks byte by byte;
 *  - MPI_Allreduce (MPI_SUM of int64, MPI_MAX of double) over 1 to 2^18
 *    elements, against the sum and maximum computed locally;
 *  - MPI_Alltoall of 1 to 2^16 int32 per peer, each block naming its
 *    sender, its receiver and its index.
 *
 * Prints one line per step with the figures (rank 0) and "mpi_check: PASS"
 * at the end; any mismatch prints what differed and aborts the job.
 */

#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#define MC_PP_TAG	7
#define MC_DIM(a)	(sizeof(a) / sizeof((a)[0]))

static int mc_rank;
static int mc_size;

static void
mc_fail(const char *step, const char *fmt, ...)
	__attribute__((format(printf, 2, 3), noreturn));

static void
mc_fail(const char *step, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "mpi_check: rank %d: FAIL: %s: ", mc_rank, step);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fflush(stderr);
	MPI_Abort(MPI_COMM_WORLD, 1);
	exit(1);
}

/* Byte i of the message of `size` bytes sent at `iter` by `from`. */
static uint8_t
mc_pp_byte(size_t size, int iter, int from, size_t i)
{
	uint64_t x = (uint64_t)size * 2654435761u + (uint64_t)iter * 40503u +
		(uint64_t)from * 977u + i;

	return (uint8_t)(x ^ (x >> 7) ^ (i >> 9));
}

static void
mc_pp_fill(uint8_t *buf, size_t size, int iter, int from)
{
	size_t i;

	for (i = 0; i < size; i++)
		buf[i] = mc_pp_byte(size, iter, from, i);
}

static void
mc_pp_check(const uint8_t *buf, size_t size, int iter, int from)
{
	size_t i;

	for (i = 0; i < size; i++)
		if (buf[i] != mc_pp_byte(size, iter, from, i))
			mc_fail("ping-pong", "%zu B, iteration %d from rank "
				"%d: byte %zu is 0x%02x, expected 0x%02x",
				size, iter, from, i, buf[i],
				mc_pp_byte(size, iter, from, i));
}

/* Ranks 0 and 1 bounce messages of each size; the others wait. */
static void
mc_pingpong(int iters)
{
	static const size_t sizes[] = {
		1, 64, 4096, 8192, 65536, 262144, 1048576,
	};
	int peer = mc_rank == 0 ? 1 : 0;
	uint8_t *out, *in;
	size_t s;
	int it;

	out = malloc(sizes[MC_DIM(sizes) - 1]);
	in = malloc(sizes[MC_DIM(sizes) - 1]);
	if (out == NULL || in == NULL)
		mc_fail("ping-pong", "out of memory");
	for (s = 0; s < MC_DIM(sizes); s++) {
		size_t size = sizes[s];
		/* Large messages are slow on a loaded two-CPU machine. */
		int n = size >= 262144 ? (iters + 9) / 10 : iters;
		MPI_Status st;
		double t0, t1;
		int count;

		MPI_Barrier(MPI_COMM_WORLD);
		t0 = MPI_Wtime();
		for (it = 0; it < n && mc_rank <= 1; it++) {
			memset(in, 0, size);
			if (mc_rank == 0) {
				mc_pp_fill(out, size, it, 0);
				MPI_Send(out, (int)size, MPI_BYTE, peer,
					 MC_PP_TAG, MPI_COMM_WORLD);
				MPI_Recv(in, (int)size, MPI_BYTE, peer,
					 MC_PP_TAG, MPI_COMM_WORLD, &st);
				mc_pp_check(in, size, it, 1);
			} else {
				MPI_Recv(in, (int)size, MPI_BYTE, peer,
					 MC_PP_TAG, MPI_COMM_WORLD, &st);
				mc_pp_check(in, size, it, 0);
				mc_pp_fill(out, size, it, 1);
				MPI_Send(out, (int)size, MPI_BYTE, peer,
					 MC_PP_TAG, MPI_COMM_WORLD);
			}
			MPI_Get_count(&st, MPI_BYTE, &count);
			if ((size_t)count != size || st.MPI_SOURCE != peer ||
			    st.MPI_TAG != MC_PP_TAG)
				mc_fail("ping-pong", "%zu B: received %d B from "
					"rank %d tag %d", size, count,
					st.MPI_SOURCE, st.MPI_TAG);
		}
		t1 = MPI_Wtime();
		if (mc_rank == 0)
			printf("mpi_check: ping-pong %7zu B x %4d: %9.1f us "
			       "round trip, %8.1f MB/s\n", size, n,
			       (t1 - t0) * 1e6 / n,
			       2.0 * (double)size * n / (t1 - t0) / 1e6);
	}
	free(out);
	free(in);
}

/* Element i of rank r's allreduce input. */
static int64_t
mc_ar_val(int r, int i)
{
	return (int64_t)(r + 1) * 1000003 - (int64_t)i * (r % 3 + 1);
}

static void
mc_allreduce(void)
{
	static const int counts[] = { 1, 1000, 262144 };
	size_t c;
	int i, r;

	for (c = 0; c < MC_DIM(counts); c++) {
		int n = counts[c];
		int64_t *in = malloc(n * sizeof(*in));
		int64_t *sum = malloc(n * sizeof(*sum));
		double *din = malloc(n * sizeof(*din));
		double *dmax = malloc(n * sizeof(*dmax));
		double t0, t1;

		if (in == NULL || sum == NULL || din == NULL || dmax == NULL)
			mc_fail("allreduce", "out of memory");
		for (i = 0; i < n; i++) {
			in[i] = mc_ar_val(mc_rank, i);
			/* The maximum moves from rank to rank with i. */
			din[i] = (double)((i + mc_rank) % mc_size) + i * 0.5;
		}
		MPI_Barrier(MPI_COMM_WORLD);
		t0 = MPI_Wtime();
		MPI_Allreduce(in, sum, n, MPI_INT64_T, MPI_SUM,
			      MPI_COMM_WORLD);
		MPI_Allreduce(din, dmax, n, MPI_DOUBLE, MPI_MAX,
			      MPI_COMM_WORLD);
		t1 = MPI_Wtime();
		for (i = 0; i < n; i++) {
			int64_t want = 0;

			for (r = 0; r < mc_size; r++)
				want += mc_ar_val(r, i);
			if (sum[i] != want)
				mc_fail("allreduce", "MPI_SUM of %d int64: "
					"element %d is %" PRId64 ", expected "
					"%" PRId64, n, i, sum[i], want);
			if (dmax[i] != (double)(mc_size - 1) + i * 0.5)
				mc_fail("allreduce", "MPI_MAX of %d double: "
					"element %d is %g, expected %g", n, i,
					dmax[i], (double)(mc_size - 1) + i * 0.5);
		}
		if (mc_rank == 0)
			printf("mpi_check: allreduce %6d elements (SUM int64, "
			       "MAX double): %9.1f us\n", n, (t1 - t0) * 1e6);
		free(in);
		free(sum);
		free(din);
		free(dmax);
	}
}

/* Element k of the block rank `from` sends rank `to`. */
static int32_t
mc_a2a_val(int from, int to, int k)
{
	return (int32_t)(((uint32_t)from << 24) ^ ((uint32_t)to << 16) ^
			 (uint32_t)k * 7u);
}

static void
mc_alltoall(void)
{
	static const int counts[] = { 1, 1024, 65536 };
	size_t c;
	int k, r;

	for (c = 0; c < MC_DIM(counts); c++) {
		int n = counts[c];
		size_t total = (size_t)n * mc_size;
		int32_t *out = malloc(total * sizeof(*out));
		int32_t *in = malloc(total * sizeof(*in));
		double t0, t1;

		if (out == NULL || in == NULL)
			mc_fail("alltoall", "out of memory");
		for (r = 0; r < mc_size; r++)
			for (k = 0; k < n; k++)
				out[(size_t)r * n + k] = mc_a2a_val(mc_rank, r,
								    k);
		memset(in, 0xa5, total * sizeof(*in));
		MPI_Barrier(MPI_COMM_WORLD);
		t0 = MPI_Wtime();
		MPI_Alltoall(out, n, MPI_INT32_T, in, n, MPI_INT32_T,
			     MPI_COMM_WORLD);
		t1 = MPI_Wtime();
		for (r = 0; r < mc_size; r++)
			for (k = 0; k < n; k++)
				if (in[(size_t)r * n + k] !=
				    mc_a2a_val(r, mc_rank, k))
					mc_fail("alltoall", "%d int32 per "
						"rank: element %d from rank %d "
						"is 0x%08x, expected 0x%08x",
						n, k, r,
						(uint32_t)in[(size_t)r * n + k],
						(uint32_t)mc_a2a_val(r, mc_rank,
								     k));
		if (mc_rank == 0)
			printf("mpi_check: alltoall %6d int32 per rank: "
			       "%9.1f us\n", n, (t1 - t0) * 1e6);
		free(out);
		free(in);
	}
}

int
main(int argc, char **argv)
{
	int iters = argc > 1 ? atoi(argv[1]) : 100;
	char host[MPI_MAX_PROCESSOR_NAME];
	int len;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &mc_rank);
	MPI_Comm_size(MPI_COMM_WORLD, &mc_size);
	MPI_Get_processor_name(host, &len);
	printf("mpi_check: rank %d of %d on %s\n", mc_rank, mc_size, host);
	fflush(stdout);
	if (mc_size < 2)
		mc_fail("start", "needs at least 2 ranks, not %d", mc_size);
	if (iters < 1)
		mc_fail("start", "ITERS must be at least 1");
	mc_pingpong(iters);
	mc_allreduce();
	mc_alltoall();
	MPI_Barrier(MPI_COMM_WORLD);
	if (mc_rank == 0)
		printf("mpi_check: PASS (%d ranks)\n", mc_size);
	MPI_Finalize();
	return 0;
}
