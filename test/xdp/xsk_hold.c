/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * xsk_hold IFACE QUEUE: an AF_XDP socket bound to receive queue QUEUE of
 * IFACE (copy mode, no program of its own), printing "bound" once it is,
 * held until a signal ends the process.  test/xdp/xdp.sh starts an engine
 * on the interface meanwhile and ends this process once the engine waits:
 * as when the last engine on the interface exits, whose sockets the
 * kernel lets go a while later (rp_port.c).  Exits 1 if the socket could
 * not be bound within XH_WAIT_MS.
 */

#include <errno.h>
#include <linux/if_xdp.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#define XH_AF_XDP	44	/* AF_XDP and SOL_XDP, which older libcs lack */
#define XH_SOL_XDP	283
#define XH_FRAME	4096u
#define XH_FRAMES	64u
#define XH_RING		64
#define XH_WAIT_MS	5000u	/* the queue still bound: retry so long */

int
main(int argc, char **argv)
{
	struct xdp_umem_reg reg = {
		.len = XH_FRAME * XH_FRAMES,
		.chunk_size = XH_FRAME,
	};
	struct sockaddr_xdp sa = {
		.sxdp_family = XH_AF_XDP,
		.sxdp_flags = XDP_COPY,
	};
	int n = XH_RING, fd;
	void *area;

	if (argc != 3) {
		fprintf(stderr, "usage: %s IFACE QUEUE\n", argv[0]);
		return 1;
	}
	sa.sxdp_ifindex = if_nametoindex(argv[1]);
	sa.sxdp_queue_id = (unsigned int)atoi(argv[2]);
	if (sa.sxdp_ifindex == 0) {
		fprintf(stderr, "xsk_hold: no interface %s\n", argv[1]);
		return 1;
	}
	area = mmap(NULL, reg.len, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	fd = socket(XH_AF_XDP, SOCK_RAW, 0);
	if (area == MAP_FAILED || fd < 0) {
		fprintf(stderr, "xsk_hold: %s\n", strerror(errno));
		return 1;
	}
	reg.addr = (unsigned long)area;
	if (setsockopt(fd, XH_SOL_XDP, XDP_UMEM_REG, &reg, sizeof(reg)) != 0 ||
	    setsockopt(fd, XH_SOL_XDP, XDP_UMEM_FILL_RING, &n, sizeof(n)) != 0 ||
	    setsockopt(fd, XH_SOL_XDP, XDP_UMEM_COMPLETION_RING, &n,
		       sizeof(n)) != 0 ||
	    setsockopt(fd, XH_SOL_XDP, XDP_RX_RING, &n, sizeof(n)) != 0) {
		fprintf(stderr, "xsk_hold: %s\n", strerror(errno));
		return 1;
	}
	/* The engine that ran on the interface just before may still hold
	 * the queue: the kernel lets a closed socket go from a work queue,
	 * which the engine waits for too (rp_port.c).  A fresh-clone suite
	 * found it bound once: wait up to XH_WAIT_MS, as the engine does. */
	for (unsigned int ms = 0;; ms += 10) {
		if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0)
			break;
		if (errno != EBUSY || ms >= XH_WAIT_MS) {
			fprintf(stderr, "xsk_hold: queue %u of %s: %s\n",
				sa.sxdp_queue_id, argv[1], strerror(errno));
			return 1;
		}
		usleep(10000);
	}
	printf("bound\n");
	fflush(stdout);
	for (;;)
		pause();
}
