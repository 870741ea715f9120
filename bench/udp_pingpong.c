/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * udp_pingpong: kernel UDP ping-pong, the baseline of bench/pingpong.sh.
 *
 *   server:  udp_pingpong [-p PORT] [-s SIZE] [-n ITERS] [-w WARMUP] [-m poll|block]
 *   client:  udp_pingpong ... SERVER_IPV4
 *
 * poll: both sides spin on recvfrom(MSG_DONTWAIT); block: blocking recvfrom.
 * Prints the same RESULT line as rp_pingpong (engine fields are 0).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static double
now_us(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int
cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int
main(int argc, char **argv)
{
	int port = 18700, iters = 20000, warmup = 1000, poll = 1, c;
	size_t size = 64;
	const char *server = NULL;

	while ((c = getopt(argc, argv, "p:s:n:w:m:")) != -1) {
		switch (c) {
		case 'p': port = atoi(optarg); break;
		case 's': size = (size_t)atol(optarg); break;
		case 'n': iters = atoi(optarg); break;
		case 'w': warmup = atoi(optarg); break;
		case 'm': poll = strcmp(optarg, "block") != 0; break;
		default:
			fprintf(stderr, "usage: udp_pingpong [-p port] [-s size] [-n iters] [-w warmup] [-m poll|block] [server]\n");
			return 1;
		}
	}
	if (optind < argc)
		server = argv[optind];

	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	struct sockaddr_in me = { .sin_family = AF_INET, .sin_port = htons(port) };
	struct sockaddr_in peer = { .sin_family = AF_INET, .sin_port = htons(port) };
	socklen_t pl = sizeof(peer);
	char buf[65536];
	struct timeval tv = { .tv_sec = 2 };

	if (size > sizeof(buf))
		size = sizeof(buf);
	memset(buf, 0x5a, size);
	if (server) {
		me.sin_port = 0;
		inet_pton(AF_INET, server, &peer.sin_addr);
	}
	if (bind(fd, (struct sockaddr *)&me, sizeof(me))) {
		perror("bind");
		return 1;
	}
	/* a lost datagram must not hang a blocking run for ever */
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));

	int total = warmup + iters, lost = 0;
	double *rtt = calloc((size_t)iters, sizeof(double));
	double tw0 = 0, tc0 = 0;

	for (int i = 0; i < total; i++) {
		double t0;
		ssize_t r;

		if (i == warmup) {
			tw0 = now_us(CLOCK_MONOTONIC);
			tc0 = now_us(CLOCK_THREAD_CPUTIME_ID);
		}
		t0 = now_us(CLOCK_MONOTONIC);
		if (server && sendto(fd, buf, size, 0, (struct sockaddr *)&peer,
				     sizeof(peer)) < 0) {
			perror("sendto");
			return 1;
		}
		double tstart = now_us(CLOCK_MONOTONIC);

		for (;;) {
			pl = sizeof(peer);
			r = recvfrom(fd, buf, sizeof(buf), poll ? MSG_DONTWAIT : 0,
				     (struct sockaddr *)&peer, &pl);
			if (r >= 0)
				break;
			if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
				if (now_us(CLOCK_MONOTONIC) - tstart > 2e6)
					break;
				continue;
			}
			perror("recvfrom");
			return 1;
		}
		if (r < 0) {
			/* lost: the client resends, the server waits again */
			lost++;
			if (lost > 100) {
				fprintf(stderr, "udp_pingpong: too many losses\n");
				return 1;
			}
			i--;
			continue;
		}
		if (!server && sendto(fd, buf, (size_t)r, 0, (struct sockaddr *)&peer,
				      pl) < 0) {
			perror("sendto");
			return 1;
		}
		if (server && i >= warmup)
			rtt[i - warmup] = now_us(CLOCK_MONOTONIC) - t0;
	}
	double wall = now_us(CLOCK_MONOTONIC) - tw0;
	double cpu = now_us(CLOCK_THREAD_CPUTIME_ID) - tc0;

	printf("RESULT role=%s mode=udp-%s msgs=%d size=%zu", server ? "client" : "server",
	       poll ? "poll" : "block", iters, size);
	if (server) {
		double sum = 0;

		qsort(rtt, (size_t)iters, sizeof(double), cmp_dbl);
		for (int i = 0; i < iters; i++)
			sum += rtt[i];
		printf(" rtt_med_us=%.2f rtt_p99_us=%.2f rtt_mean_us=%.2f",
		       rtt[iters / 2], rtt[(size_t)((double)iters * 0.99)], sum / iters);
	}
	printf(" wall_s=%.3f app_cpu_us_per_msg=%.2f app_cpu_share=%.3f"
	       " engine_cpu_share=0 other_cpu_share=0 cq_events_per_msg=0"
	       " waits_per_msg=0 lost=%d\n",
	       wall / 1e6, cpu / iters, cpu / wall, lost);
	free(rtt);
	return 0;
}
