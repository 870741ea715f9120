/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gid_watch: the GID table of rocepmd0, then (after printing "ready") the
 * next asynchronous event, which must be IBV_EVENT_GID_CHANGE, and the
 * table again.  A plain libibverbs program (test/xdp/xdp.sh runs it while
 * it adds an address to the device's interface).  Exits 0 on a GID change
 * within 20 s, 1 otherwise.
 */

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/verbs.h>

static void
print_gids(struct ibv_context *ctx, const char *when)
{
	static const uint8_t zero[16];
	char s[INET6_ADDRSTRLEN];
	union ibv_gid gid;

	for (int i = 0; i < 8; i++) {
		if (ibv_query_gid(ctx, 1, i, &gid) != 0 ||
		    memcmp(gid.raw, zero, 16) == 0)
			continue;
		inet_ntop(AF_INET6, gid.raw, s, sizeof(s));
		printf("%s GID[%d] %s\n", when, i, s);
	}
}

int
main(void)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_async_event ev;
	struct ibv_context *ctx;

	if (list == NULL || list[0] == NULL) {
		fprintf(stderr, "gid_watch: no device\n");
		return 1;
	}
	ctx = ibv_open_device(list[0]);
	if (ctx == NULL) {
		fprintf(stderr, "gid_watch: cannot open %s\n",
			ibv_get_device_name(list[0]));
		return 1;
	}
	print_gids(ctx, "before");
	printf("ready\n");
	fflush(stdout);
	alarm(20);
	for (;;) {
		if (ibv_get_async_event(ctx, &ev) != 0) {
			fprintf(stderr, "gid_watch: ibv_get_async_event failed\n");
			return 1;
		}
		printf("event %s\n", ibv_event_type_str(ev.event_type));
		ibv_ack_async_event(&ev);
		if (ev.event_type == IBV_EVENT_GID_CHANGE)
			break;
	}
	print_gids(ctx, "after");
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	return 0;
}
