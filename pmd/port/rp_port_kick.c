/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Kicking the TX ring of an af_packet port whose frames pass the qdisc
 * layer (devargs qdisc_bypass=0).
 *
 * On such a socket the kernel does not lose a frame that the egress path
 * refuses (an nftables egress rule, a full qdisc): tpacket_snd() puts it
 * back in the ring as "send request", stops, and sendto() fails with
 * ENOBUFS.  net_af_packet (22.11) calls sendto() once per burst and
 * ignores that error, so the frame and every later one wait for the next
 * burst.  A requester that has filled its window sends no further burst,
 * and a responder sends one only when a request arrives: both ends wait
 * for the retransmit timer, and a 10% egress drop turns into a stream of
 * timeouts and RETRY_EXC_ERR (issue 9).
 *
 * The engine therefore finds the PMD's packet socket at start and, after
 * any burst, calls sendto() on it again (one call per pass of the lcore,
 * not per frame) until the kernel reports the ring drained.  Bursts on a
 * busy port have no gaps, so the kicks cost nothing there; only a port
 * that holds frames back pays a system call per pass.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rte_ethdev.h>

#include "rp_log.h"
#include "rp_port.h"

/* An af_packet port's (rp_port.c), after its start. */
void
rp_port_kick_init(struct rp_port *p, unsigned int ifindex)
{
	int found = -1;
	unsigned int n;

	p->kick_fd = -1;
	if (ifindex == 0 ||
	    strstr(p->cfg->device, "qdisc_bypass=0") == NULL)
		return;
	n = rp_port_ring_sockets(ifindex, &found, 1);
	if (n != 1) {
		/* Several sockets (qpairs > 1) or none: do without. */
		RP_LOGT(rp_logtype_port, WARNING,
			"%s: %u packet sockets on the interface, TX ring not kicked: frames the egress path refuses wait for the next burst",
			p->cfg->device, n);
		return;
	}
	p->kick_fd = found;
	RP_LOGT(rp_logtype_port, DEBUG, "%s: TX ring of socket %d kicked after bursts",
		p->cfg->device, found);
}

bool
rp_port_kick(struct rp_port_q *pq)
{
	/* The socket is queue 0's (one socket only, above). */
	if (!pq->kick_pending)
		return false;
	if (sendto(pq->port->kick_fd, NULL, 0, MSG_DONTWAIT, NULL, 0) < 0 &&
	    (errno == ENOBUFS || errno == EAGAIN)) {
		/* A frame went back to the ring: try again next pass. */
		rp_stats_inc(pq->stats, RP_STAT_TX_KICK);
		return true;
	}
	pq->kick_pending = false;
	return false;
}
