/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rp_verbs_test: engine tests through the verbs API, one process.
 *
 * A plain libibverbs program, built against <infiniband/verbs.h> and linked
 * with libibverbs like any verbs application.  meson runs it through
 * rocepmd-run, so the rocepmd shim stands in for libibverbs and every call
 * below reaches the engine running inside this process.  The configuration
 * (test/engine/two-ports.ini.in, one-port.ini.in) gives either two devices
 * wired back to back over memif (rocepmd0 = 192.0.2.1, rocepmd1 =
 * 192.0.2.2) or one device that talks to itself.
 *
 *   rp_verbs_test CASE        run one case of rt_cases[]
 *   rp_verbs_test list        print the cases
 *
 * Every case checks payloads byte for byte (random patterns, guard bytes
 * around every target) and every completion field that the verbs API
 * defines for it, and fails with a message naming the case, the step, and
 * the expected and actual values.  Waits are bounded: RP_TEST_TIMEOUT
 * seconds (default 20) per completion or event, and a watchdog alarm ends a
 * case stuck inside a verbs call.  RP_TEST_SEED=N replays a run's patterns.
 *
 * Exit status: 0 pass, 1 fail, 2 usage.
 */

#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "rp_testlib.h"

const char rt_prog[] = "rp_verbs_test";

/* ------------------------------------------------------------- devices */

static void
rt_gid_str(const union ibv_gid *gid, char *buf, size_t len)
{
	const uint8_t *r = gid->raw;

	snprintf(buf, len, "%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:"
		 "%02x%02x:%02x%02x:%02x%02x", r[0], r[1], r[2], r[3], r[4],
		 r[5], r[6], r[7], r[8], r[9], r[10], r[11], r[12], r[13],
		 r[14], r[15]);
}

/* ::ffff:a.b.c.d */
static void
rt_gid_v4(union ibv_gid *gid, uint32_t ipv4)
{
	memset(gid, 0, sizeof(*gid));
	gid->raw[10] = 0xff;
	gid->raw[11] = 0xff;
	gid->raw[12] = (uint8_t)(ipv4 >> 24);
	gid->raw[13] = (uint8_t)(ipv4 >> 16);
	gid->raw[14] = (uint8_t)(ipv4 >> 8);
	gid->raw[15] = (uint8_t)ipv4;
}

/* ------------------------------------------------------------ endpoints */

/*
 * An RC pair as rt_rc_pair() makes, with both starting PSNs a few packets
 * short of 2^24, so the first multi-packet message (and READ response)
 * crosses the 24-bit wrap.
 */
static void
rt_rc_pair_wrap(struct rt_ep *a, struct rt_dev *da, struct rt_ep *b,
		struct rt_dev *db, const struct rt_rc_opts *o)
{
	const struct rt_ep_opts eo = { .type = IBV_QPT_RC };

	rt_ep_create(a, da, &eo);
	rt_ep_create(b, db, &eo);
	a->psn = 0xfffffa;
	b->psn = 0xfffff0;
	rt_step("RC pair with PSNs 0x%06x / 0x%06x: the first messages cross "
		"the 24-bit PSN wrap", a->psn, b->psn);
	rt_rc_connect(a, b, o != NULL ? o : &rt_rc_default);
}

/* ---------------------------------------------------------- RC data path */

/* SEND a -> b of len bytes: every variant, checked byte for byte. */
static void
rt_rc_send_checks(struct rt_ep *a, struct rt_ep *b, size_t len)
{
	struct rt_buf src, dst;
	struct ibv_sge ss[RT_SGE], rs[RT_SGE];
	struct ibv_wc wc;
	uint8_t *exp;
	size_t room = 4 * len + 8 * RT_GUARD;
	uint32_t imm;
	int i;

	rt_buf_alloc(&src, a->dev, room, IBV_ACCESS_LOCAL_WRITE);
	rt_buf_alloc(&dst, b->dev, room, IBV_ACCESS_LOCAL_WRITE);
	exp = malloc(room);
	RT_CHECK(exp != NULL, "out of memory");

	/* one SGE each, receive buffer longer than the message */
	rt_step("SEND %zu B %s -> %s, 1 SGE", len, a->dev->name, b->dev->name);
	rt_fill_random(src.p, len);
	rs[0] = rt_sge(&dst, 0, len + RT_GUARD);
	rt_post_recv(b, 100, rs, 1);
	ss[0] = rt_sge(&src, 0, len);
	rt_post_send(a, 200, IBV_WR_SEND, ss, 1, IBV_SEND_SIGNALED, 0, 0, 0);
	rt_expect_wc(a->scq, "sender", 200, IBV_WC_SUCCESS, IBV_WC_SEND);
	wc = rt_expect_wc(b->rcq, "receiver", 100, IBV_WC_SUCCESS,
			  IBV_WC_RECV);
	RT_CHECK(wc.byte_len == len, "byte_len %u, sent %zu", wc.byte_len,
		 len);
	RT_CHECK(!(wc.wc_flags & IBV_WC_WITH_IMM), "IBV_WC_WITH_IMM set on a "
		 "SEND without immediate (wc_flags 0x%x)", wc.wc_flags);
	RT_CHECK(wc.qp_num == b->qp->qp_num, "wc.qp_num 0x%x, receiver QP "
		 "0x%x", wc.qp_num, b->qp->qp_num);
	rt_check_data(dst.p, src.p, len, "payload");
	rt_check_guard(dst.p + len, RT_GUARD, "receive buffer past the "
		       "message");

	/* with immediate */
	rt_step("SEND_WITH_IMM %zu B", len);
	memset(dst.p, RT_GUARD_BYTE, room);
	rt_fill_random(src.p, len);
	imm = rt_rand32();
	rs[0] = rt_sge(&dst, 0, len);
	rt_post_recv(b, 101, rs, 1);
	rt_post_send(a, 201, IBV_WR_SEND_WITH_IMM, ss, 1, IBV_SEND_SIGNALED,
		     imm, 0, 0);
	rt_expect_wc(a->scq, "sender", 201, IBV_WC_SUCCESS, IBV_WC_SEND);
	wc = rt_expect_wc(b->rcq, "receiver", 101, IBV_WC_SUCCESS,
			  IBV_WC_RECV);
	RT_CHECK(wc.byte_len == len, "byte_len %u, sent %zu", wc.byte_len,
		 len);
	RT_CHECK(wc.wc_flags & IBV_WC_WITH_IMM, "IBV_WC_WITH_IMM missing "
		 "(wc_flags 0x%x)", wc.wc_flags);
	RT_CHECK(be32toh(wc.imm_data) == imm, "imm_data 0x%08x, sent 0x%08x",
		 be32toh(wc.imm_data), imm);
	rt_check_data(dst.p, src.p, len, "payload");

	/*
	 * Scattered: three SGEs from separate places of src (gaps between
	 * them), into two SGEs of dst with a guard gap between them.
	 */
	rt_step("SEND %zu B, gather 3 SGEs, scatter to 2 SGEs", len);
	memset(src.p, 0, room);
	memset(dst.p, RT_GUARD_BYTE, room);
	rt_fill_random(exp, len);
	{
		size_t cut[4] = { 0, len / 3, 2 * len / 3, len };
		size_t r1 = len / 2 + 1 > len ? len : len / 2 + 1;
		size_t soff = RT_GUARD, n = 0;
		int ns = 0;

		if (len < 3) {
			cut[1] = len;
			cut[2] = len;
		}
		for (i = 0; i < 3; i++) {
			size_t l = cut[i + 1] - cut[i];

			if (l == 0)
				continue;
			memcpy(src.p + soff, exp + cut[i], l);
			ss[ns++] = rt_sge(&src, soff, l);
			soff += l + RT_GUARD;
		}
		rs[0] = rt_sge(&dst, 0, r1);
		rs[1] = rt_sge(&dst, r1 + RT_GUARD, len - r1 + RT_GUARD);
		rt_post_recv(b, 102, rs, 2);
		rt_post_send(a, 202, IBV_WR_SEND, ss, ns, IBV_SEND_SIGNALED,
			     0, 0, 0);
		rt_expect_wc(a->scq, "sender", 202, IBV_WC_SUCCESS,
			     IBV_WC_SEND);
		wc = rt_expect_wc(b->rcq, "receiver", 102, IBV_WC_SUCCESS,
				  IBV_WC_RECV);
		RT_CHECK(wc.byte_len == len, "byte_len %u, sent %zu",
			 wc.byte_len, len);
		rt_check_data(dst.p, exp, r1, "first receive SGE");
		rt_check_guard(dst.p + r1, RT_GUARD, "gap between receive "
			       "SGEs");
		n = len - r1;
		rt_check_data(dst.p + r1 + RT_GUARD, exp + r1, n,
			      "second receive SGE");
		rt_check_guard(dst.p + r1 + RT_GUARD + n, RT_GUARD,
			       "second receive SGE past the message");
	}

	/* inline: the buffer is not registered and is reused at once */
	if (a->max_inline > 0) {
		size_t il = len < a->max_inline ? len : a->max_inline;
		uint8_t *ib = malloc(il);

		RT_CHECK(ib != NULL, "out of memory");
		rt_step("SEND inline %zu B (max_inline_data %u), source "
			"overwritten right after the post", il, a->max_inline);
		rt_fill_random(ib, il);
		memcpy(exp, ib, il);
		memset(dst.p, RT_GUARD_BYTE, room);
		rs[0] = rt_sge(&dst, 0, il + RT_GUARD);
		rt_post_recv(b, 103, rs, 1);
		ss[0].addr = (uintptr_t)ib;
		ss[0].length = (uint32_t)il;
		ss[0].lkey = 0;
		rt_post_send(a, 203, IBV_WR_SEND, ss, 1,
			     IBV_SEND_SIGNALED | IBV_SEND_INLINE, 0, 0, 0);
		memset(ib, 0x5a, il);
		rt_expect_wc(a->scq, "sender", 203, IBV_WC_SUCCESS,
			     IBV_WC_SEND);
		wc = rt_expect_wc(b->rcq, "receiver", 103, IBV_WC_SUCCESS,
				  IBV_WC_RECV);
		RT_CHECK(wc.byte_len == il, "byte_len %u, sent %zu inline",
			 wc.byte_len, il);
		rt_check_data(dst.p, exp, il, "inline payload");
		rt_check_guard(dst.p + il, RT_GUARD, "past the inline message");
		free(ib);
	}

	/* a burst of 4 messages, in order, each its own pattern */
	rt_step("SEND 4 x %zu B back to back", len);
	memset(dst.p, RT_GUARD_BYTE, room);
	rt_fill_random(src.p, room);
	for (i = 0; i < 4; i++) {
		rs[0] = rt_sge(&dst, (size_t)i * (len + RT_GUARD), len);
		rt_post_recv(b, 110 + (uint64_t)i, rs, 1);
	}
	for (i = 0; i < 4; i++) {
		ss[0] = rt_sge(&src, (size_t)i * (len + RT_GUARD), len);
		rt_post_send(a, 210 + (uint64_t)i, IBV_WR_SEND, ss, 1,
			     IBV_SEND_SIGNALED, 0, 0, 0);
	}
	for (i = 0; i < 4; i++) {
		size_t off = (size_t)i * (len + RT_GUARD);

		rt_expect_wc(a->scq, "sender (burst)", 210 + (uint64_t)i,
			     IBV_WC_SUCCESS, IBV_WC_SEND);
		wc = rt_expect_wc(b->rcq, "receiver (burst)",
				  110 + (uint64_t)i, IBV_WC_SUCCESS,
				  IBV_WC_RECV);
		RT_CHECK(wc.byte_len == len, "burst message %d: byte_len %u, "
			 "sent %zu", i, wc.byte_len, len);
		rt_check_data(dst.p + off, src.p + off, len, "burst payload");
		rt_check_guard(dst.p + off + len, RT_GUARD, "burst guard");
	}

	/* the other way */
	rt_step("SEND %zu B %s -> %s (reverse)", len, b->dev->name,
		a->dev->name);
	memset(src.p, RT_GUARD_BYTE, room);
	rt_fill_random(dst.p, len);
	rs[0] = rt_sge(&src, 0, len + RT_GUARD);
	rt_post_recv(a, 104, rs, 1);
	ss[0] = rt_sge(&dst, 0, len);
	rt_post_send(b, 204, IBV_WR_SEND, ss, 1, IBV_SEND_SIGNALED, 0, 0, 0);
	rt_expect_wc(b->scq, "sender", 204, IBV_WC_SUCCESS, IBV_WC_SEND);
	wc = rt_expect_wc(a->rcq, "receiver", 104, IBV_WC_SUCCESS,
			  IBV_WC_RECV);
	RT_CHECK(wc.byte_len == len, "byte_len %u, sent %zu", wc.byte_len,
		 len);
	rt_check_data(src.p, dst.p, len, "payload");
	rt_check_guard(src.p + len, RT_GUARD, "past the message");

	/* zero-length SEND with immediate */
	rt_step("SEND_WITH_IMM 0 B");
	imm = rt_rand32();
	memset(dst.p, RT_GUARD_BYTE, room);
	rs[0] = rt_sge(&dst, 0, 16);
	rt_post_recv(b, 105, rs, 1);
	rt_post_send(a, 205, IBV_WR_SEND_WITH_IMM, NULL, 0, IBV_SEND_SIGNALED,
		     imm, 0, 0);
	rt_expect_wc(a->scq, "sender", 205, IBV_WC_SUCCESS, IBV_WC_SEND);
	wc = rt_expect_wc(b->rcq, "receiver", 105, IBV_WC_SUCCESS,
			  IBV_WC_RECV);
	RT_CHECK(wc.byte_len == 0, "byte_len %u for a 0-byte SEND",
		 wc.byte_len);
	RT_CHECK((wc.wc_flags & IBV_WC_WITH_IMM) &&
		 be32toh(wc.imm_data) == imm, "imm 0x%08x flags 0x%x, sent "
		 "0x%08x", be32toh(wc.imm_data), wc.wc_flags, imm);
	rt_check_guard(dst.p, 16, "receive buffer of a 0-byte SEND");

	rt_expect_empty(a->scq, 10, "sender CQ after the checks");
	rt_expect_empty(b->rcq, 10, "receiver CQ after the checks");
	free(exp);
	rt_buf_free(&src);
	rt_buf_free(&dst);
}

/* RDMA WRITE (with_imm: WRITE_WITH_IMM) of len bytes a -> b. */
static void
rt_rc_write_checks(struct rt_ep *a, struct rt_ep *b, size_t len,
		   bool with_imm)
{
	const size_t toff = RT_GUARD + 3;	/* unaligned target */
	struct rt_buf src, dst, small;
	struct ibv_sge ss[2], rs;
	struct ibv_wc wc;
	size_t l1 = len >= 2 ? len / 2 : len;
	uint32_t imm = rt_rand32();
	int nsge = len >= 2 ? 2 : 1;

	rt_step("RDMA %s %zu B %s -> %s, %d SGE(s), unaligned target",
		with_imm ? "WRITE_WITH_IMM" : "WRITE", len, a->dev->name,
		b->dev->name, nsge);
	rt_buf_alloc(&src, a->dev, len + 2 * RT_GUARD, IBV_ACCESS_LOCAL_WRITE);
	rt_buf_alloc(&dst, b->dev, len + 2 * RT_GUARD + 3, RT_ACCESS_ALL);
	rt_buf_alloc(&small, b->dev, 64, IBV_ACCESS_LOCAL_WRITE);
	rt_fill_random(src.p, src.len);
	ss[0] = rt_sge(&src, 0, l1);
	if (nsge == 2)
		ss[1] = rt_sge(&src, l1 + RT_GUARD, len - l1);

	/*
	 * A receive is posted either way: WRITE_WITH_IMM consumes it (0
	 * SGEs: the data goes to the RETH target, not here), plain WRITE
	 * must leave it alone.
	 */
	rs = rt_sge(&small, 0, 64);
	rt_post_recv(b, 300, &rs, with_imm ? 0 : 1);
	rt_post_send(a, 400, with_imm ? IBV_WR_RDMA_WRITE_WITH_IMM :
		     IBV_WR_RDMA_WRITE, ss, nsge, IBV_SEND_SIGNALED, imm,
		     (uintptr_t)(dst.p + toff), dst.mr->rkey);
	rt_expect_wc(a->scq, "requester", 400, IBV_WC_SUCCESS,
		     IBV_WC_RDMA_WRITE);
	if (with_imm) {
		wc = rt_expect_wc(b->rcq, "responder", 300, IBV_WC_SUCCESS,
				  IBV_WC_RECV_RDMA_WITH_IMM);
		RT_CHECK(wc.wc_flags & IBV_WC_WITH_IMM, "IBV_WC_WITH_IMM "
			 "missing (wc_flags 0x%x)", wc.wc_flags);
		RT_CHECK(be32toh(wc.imm_data) == imm, "imm_data 0x%08x, sent "
			 "0x%08x", be32toh(wc.imm_data), imm);
		RT_CHECK(wc.byte_len == len, "byte_len %u, wrote %zu",
			 wc.byte_len, len);
		RT_CHECK(wc.qp_num == b->qp->qp_num, "wc.qp_num 0x%x, QP "
			 "0x%x", wc.qp_num, b->qp->qp_num);
	}
	/* the data is in place once the requester has its completion */
	rt_check_data(dst.p + toff, src.p, l1, "written data (first SGE)");
	if (nsge == 2)
		rt_check_data(dst.p + toff + l1, src.p + l1 + RT_GUARD,
			      len - l1, "written data (second SGE)");
	rt_check_guard(dst.p, toff, "before the WRITE target");
	rt_check_guard(dst.p + toff + len, RT_GUARD, "after the WRITE target");
	rt_check_guard(small.p, 64, "receive buffer");
	if (!with_imm) {
		uint8_t msg[16];

		rt_expect_empty(b->rcq, RT_IDLE_MS, "responder CQ after a "
				"WRITE without immediate");
		/* ... and the receive is still there, first in line */
		rt_fill_random(msg, sizeof(msg));
		memcpy(src.p, msg, sizeof(msg));
		ss[0] = rt_sge(&src, 0, sizeof(msg));
		rt_post_send(a, 401, IBV_WR_SEND, ss, 1, IBV_SEND_SIGNALED, 0,
			     0, 0);
		rt_expect_wc(a->scq, "requester", 401, IBV_WC_SUCCESS,
			     IBV_WC_SEND);
		wc = rt_expect_wc(b->rcq, "responder (the receive posted "
				  "before the WRITE)", 300, IBV_WC_SUCCESS,
				  IBV_WC_RECV);
		RT_CHECK(wc.byte_len == sizeof(msg), "byte_len %u",
			 wc.byte_len);
		rt_check_data(small.p, msg, sizeof(msg), "SEND after WRITE");
	}
	rt_expect_empty(b->scq, 0, "responder send CQ");
	rt_buf_free(&src);
	rt_buf_free(&dst);
	rt_buf_free(&small);
}

/* RDMA READ of len bytes from b into a (two local SGEs when len >= 2). */
static void
rt_rc_read_checks(struct rt_ep *a, struct rt_ep *b, size_t len)
{
	const size_t roff = 5;		/* unaligned source */
	struct rt_buf src, dst;
	struct ibv_sge ls[2];
	struct ibv_wc wc;
	size_t l1 = len >= 2 ? len / 2 : len;
	int nsge = len >= 2 ? 2 : 1, i;

	rt_step("RDMA READ %zu B from %s into %d SGE(s) on %s", len,
		b->dev->name, nsge, a->dev->name);
	rt_buf_alloc(&src, b->dev, 4 * len + roff + RT_GUARD,
		     IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
	rt_buf_alloc(&dst, a->dev, 4 * (len + 3 * RT_GUARD),
		     IBV_ACCESS_LOCAL_WRITE);
	rt_fill_random(src.p, src.len);
	ls[0] = rt_sge(&dst, RT_GUARD, l1);
	if (nsge == 2)
		ls[1] = rt_sge(&dst, 2 * RT_GUARD + l1, len - l1);
	rt_post_send(a, 500, IBV_WR_RDMA_READ, ls, nsge, IBV_SEND_SIGNALED, 0,
		     (uintptr_t)(src.p + roff), src.mr->rkey);
	wc = rt_expect_wc(a->scq, "requester", 500, IBV_WC_SUCCESS,
			  IBV_WC_RDMA_READ);
	RT_CHECK(wc.byte_len == len, "READ completion byte_len %u, read %zu",
		 wc.byte_len, len);
	rt_check_guard(dst.p, RT_GUARD, "before the first SGE");
	rt_check_data(dst.p + RT_GUARD, src.p + roff, l1, "read data (first "
		      "SGE)");
	rt_check_guard(dst.p + RT_GUARD + l1, RT_GUARD, "after the first SGE");
	if (nsge == 2) {
		rt_check_data(dst.p + 2 * RT_GUARD + l1, src.p + roff + l1,
			      len - l1, "read data (second SGE)");
		rt_check_guard(dst.p + 2 * RT_GUARD + len, RT_GUARD,
			       "after the second SGE");
	}

	/* four READs in flight at once, from different offsets */
	rt_step("RDMA READ 4 x %zu B outstanding", len);
	memset(dst.p, RT_GUARD_BYTE, dst.len);
	for (i = 0; i < 4; i++) {
		ls[0] = rt_sge(&dst, (size_t)i * (len + RT_GUARD), len);
		rt_post_send(a, 510 + (uint64_t)i, IBV_WR_RDMA_READ, ls, 1,
			     IBV_SEND_SIGNALED, 0,
			     (uintptr_t)(src.p + (size_t)i * len),
			     src.mr->rkey);
	}
	for (i = 0; i < 4; i++) {
		size_t off = (size_t)i * (len + RT_GUARD);

		wc = rt_expect_wc(a->scq, "requester", 510 + (uint64_t)i,
				  IBV_WC_SUCCESS, IBV_WC_RDMA_READ);
		RT_CHECK(wc.byte_len == len, "READ %d: byte_len %u", i,
			 wc.byte_len);
		rt_check_data(dst.p + off, src.p + (size_t)i * len, len,
			      "read data");
		rt_check_guard(dst.p + off + len, RT_GUARD, "after a READ");
	}
	rt_expect_empty(b->rcq, 0, "responder receive CQ after READs");
	rt_expect_empty(b->scq, 0, "responder send CQ after READs");
	rt_buf_free(&src);
	rt_buf_free(&dst);
}

/* ---------------------------------------------------------------- cases */

/* devinfo: what the devices say about themselves is what the config says. */
static void
rt_check_one_dev(struct ibv_device *dev, const char *name, uint32_t ipv4)
{
	struct ibv_context *ctx;
	struct ibv_device_attr da;
	struct ibv_port_attr pa;
	struct ibv_gid_entry ge, table[8];
	union ibv_gid gid, want;
	char got_s[64], want_s[64];
	__be16 pkey;
	ssize_t n;
	int ret;

	rt_step("%s: device, port, GID and P_Key attributes", name);
	RT_CHECK(dev->node_type == IBV_NODE_CA, "%s: node_type %d, expected "
		 "IBV_NODE_CA", name, (int)dev->node_type);
	RT_CHECK(dev->transport_type == IBV_TRANSPORT_IB, "%s: transport %d, "
		 "expected IBV_TRANSPORT_IB (RoCE)", name,
		 (int)dev->transport_type);
	ctx = ibv_open_device(dev);
	RT_CHECK(ctx != NULL, "ibv_open_device(%s): %s", name,
		 strerror(errno));
	RT_CHECK(ctx->device == dev, "%s: context->device does not point "
		 "back at the device", name);

	ret = ibv_query_device(ctx, &da);
	RT_CHECK(ret == 0, "ibv_query_device(%s): %s", name, strerror(ret));
	RT_CHECK(da.phys_port_cnt == 1, "%s: phys_port_cnt %u, expected 1",
		 name, da.phys_port_cnt);
	RT_CHECK(da.node_guid == ibv_get_device_guid(dev), "%s: node_guid "
		 "0x%016" PRIx64 " != ibv_get_device_guid 0x%016" PRIx64, name,
		 be64toh(da.node_guid), be64toh(ibv_get_device_guid(dev)));
	RT_CHECK(da.node_guid != 0, "%s: node_guid is 0", name);
	RT_CHECK(da.max_qp > 0 && da.max_qp_wr > 0 && da.max_cq > 0 &&
		 da.max_cqe > 0 && da.max_mr > 0 && da.max_pd > 0 &&
		 da.max_sge > 0 && da.max_mr_size > 0,
		 "%s: a zero limit: max_qp %d max_qp_wr %d max_cq %d max_cqe "
		 "%d max_mr %d max_pd %d max_sge %d max_mr_size %" PRIu64,
		 name, da.max_qp, da.max_qp_wr, da.max_cq, da.max_cqe,
		 da.max_mr, da.max_pd, da.max_sge, da.max_mr_size);
	RT_CHECK(da.max_sge >= RT_SGE && da.max_qp_wr >= RT_WR &&
		 da.max_cqe >= RT_CQE, "%s: max_sge %d / max_qp_wr %d / "
		 "max_cqe %d below what these tests use (%d/%d/%d)", name,
		 da.max_sge, da.max_qp_wr, da.max_cqe, RT_SGE, RT_WR, RT_CQE);
	RT_CHECK(da.fw_ver[0] != '\0', "%s: empty fw_ver", name);
	printf("    fw_ver %s, max_qp %d, max_qp_wr %d, max_sge %d, max_cqe "
	       "%d, max_qp_rd_atom %d\n", da.fw_ver, da.max_qp, da.max_qp_wr,
	       da.max_sge, da.max_cqe, da.max_qp_rd_atom);

	rt_wait_active(ctx, name);
	ret = ibv_query_port(ctx, RT_PORT, &pa);
	RT_CHECK(ret == 0, "ibv_query_port(%s, 1): %s", name, strerror(ret));
	RT_CHECK(pa.state == IBV_PORT_ACTIVE, "%s: port state %s (%d), "
		 "expected PORT_ACTIVE", name, ibv_port_state_str(pa.state),
		 (int)pa.state);
	RT_CHECK(pa.link_layer == IBV_LINK_LAYER_ETHERNET, "%s: link_layer "
		 "%u, expected IBV_LINK_LAYER_ETHERNET", name, pa.link_layer);
	RT_CHECK(pa.active_mtu == RT_CFG_MTU, "%s: active_mtu %d, the config "
		 "says mtu = 1024 (%d)", name, (int)pa.active_mtu,
		 (int)RT_CFG_MTU);
	RT_CHECK(pa.max_mtu >= pa.active_mtu, "%s: max_mtu %d < active_mtu "
		 "%d", name, (int)pa.max_mtu, (int)pa.active_mtu);
	RT_CHECK(pa.gid_tbl_len >= 1 && pa.pkey_tbl_len >= 1, "%s: "
		 "gid_tbl_len %d, pkey_tbl_len %u", name, pa.gid_tbl_len,
		 pa.pkey_tbl_len);
	RT_CHECK(pa.phys_state == 5, "%s: phys_state %u, expected 5 "
		 "(LINK_UP)", name, pa.phys_state);
	RT_CHECK(ibv_query_port(ctx, 2, &pa) != 0, "%s: ibv_query_port of "
		 "port 2 succeeded on a one-port device", name);

	rt_gid_v4(&want, ipv4);
	rt_gid_str(&want, want_s, sizeof(want_s));
	ret = ibv_query_gid(ctx, RT_PORT, 0, &gid);
	RT_CHECK(ret == 0, "ibv_query_gid(%s, 1, 0): %s", name, strerror(ret));
	rt_gid_str(&gid, got_s, sizeof(got_s));
	RT_CHECK(memcmp(&gid, &want, sizeof(gid)) == 0, "%s: GID[0] %s, "
		 "expected %s", name, got_s, want_s);
	printf("    GID[0] %s\n", got_s);

	ret = ibv_query_gid_ex(ctx, RT_PORT, 0, &ge, 0);
	RT_CHECK(ret == 0, "ibv_query_gid_ex(%s, 1, 0): %s", name,
		 strerror(ret));
	RT_CHECK(ge.gid_type == IBV_GID_TYPE_ROCE_V2, "%s: GID[0] type %u, "
		 "expected IBV_GID_TYPE_ROCE_V2 (%u)", name, ge.gid_type,
		 (unsigned int)IBV_GID_TYPE_ROCE_V2);
	RT_CHECK(memcmp(&ge.gid, &want, sizeof(want)) == 0 &&
		 ge.gid_index == 0 && ge.port_num == RT_PORT,
		 "%s: ibv_query_gid_ex entry: index %u port %u, gid differs "
		 "from ibv_query_gid: %d", name, ge.gid_index, ge.port_num,
		 memcmp(&ge.gid, &want, sizeof(want)) != 0);
	n = ibv_query_gid_table(ctx, table, 8, 0);
	RT_CHECK(n >= 1, "ibv_query_gid_table(%s): %zd (%s)", name, n,
		 strerror(errno));
	RT_CHECK(table[0].gid_index == 0 &&
		 table[0].gid_type == IBV_GID_TYPE_ROCE_V2 &&
		 memcmp(&table[0].gid, &want, sizeof(want)) == 0,
		 "%s: ibv_query_gid_table entry 0 differs from GID[0]", name);

	ret = ibv_query_pkey(ctx, RT_PORT, 0, &pkey);
	RT_CHECK(ret == 0, "ibv_query_pkey(%s): %s", name, strerror(ret));
	RT_CHECK(be16toh(pkey) == 0xffff, "%s: P_Key[0] 0x%04x, expected "
		 "0xffff", name, be16toh(pkey));

	ret = ibv_close_device(ctx);
	RT_CHECK(ret == 0, "ibv_close_device(%s): %d", name, ret);
}

static void
rt_case_devinfo(void)
{
	struct ibv_device **list;
	struct ibv_device *d0 = NULL, *d1 = NULL;
	int i, n = -1;

	rt_step("ibv_get_device_list");
	list = ibv_get_device_list(&n);
	RT_CHECK(list != NULL, "ibv_get_device_list: %s", strerror(errno));
	RT_CHECK(n == 2, "%d devices listed, the config has 2 ports", n);
	RT_CHECK(list[n] == NULL, "device list not NULL-terminated");
	for (i = 0; i < n; i++) {
		const char *name = ibv_get_device_name(list[i]);

		printf("    device %d: %s guid 0x%016" PRIx64 "\n", i, name,
		       be64toh(ibv_get_device_guid(list[i])));
		if (strcmp(name, RT_DEV0) == 0)
			d0 = list[i];
		else if (strcmp(name, RT_DEV1) == 0)
			d1 = list[i];
	}
	RT_CHECK(d0 != NULL && d1 != NULL, "%s or %s missing from the list",
		 RT_DEV0, RT_DEV1);
	RT_CHECK(ibv_get_device_guid(d0) != ibv_get_device_guid(d1),
		 "both devices have GUID 0x%016" PRIx64,
		 be64toh(ibv_get_device_guid(d0)));
	rt_check_one_dev(d0, RT_DEV0, RT_IPV4_0);
	rt_check_one_dev(d1, RT_DEV1, RT_IPV4_1);
	ibv_free_device_list(list);

	/* the list can be taken again and the device opened again */
	rt_step("second ibv_get_device_list and open");
	list = ibv_get_device_list(&n);
	RT_CHECK(list != NULL && n == 2, "second ibv_get_device_list: %d", n);
	ibv_free_device_list(list);
}

static void
rt_rc_send_case(size_t len_or_mtu)
{
	struct rt_dev d0, d1;
	struct rt_ep a, b;
	size_t len;

	rt_dev_open(&d0, RT_DEV0);
	rt_dev_open(&d1, RT_DEV1);
	len = len_or_mtu == 0 ? d0.mtu : len_or_mtu;
	rt_rc_pair_wrap(&a, &d0, &b, &d1, NULL);
	rt_rc_send_checks(&a, &b, len);
	rt_ep_destroy(&a);
	rt_ep_destroy(&b);
	rt_dev_close(&d0);
	rt_dev_close(&d1);
}

static void rt_case_rc_send_1(void) { rt_rc_send_case(1); }
static void rt_case_rc_send_mtu(void) { rt_rc_send_case(0); }
static void rt_case_rc_send_64k(void) { rt_rc_send_case(65536); }

/* 0-byte WRITE and WRITE_WITH_IMM: nothing moves, both complete. */
static void
rt_rc_write_zero(struct rt_ep *a, struct rt_ep *b, bool with_imm)
{
	struct rt_buf dst;
	struct ibv_wc wc;
	uint32_t imm = rt_rand32();

	rt_step("RDMA %s 0 B", with_imm ? "WRITE_WITH_IMM" : "WRITE");
	rt_buf_alloc(&dst, b->dev, RT_GUARD, RT_ACCESS_ALL);
	if (with_imm)
		rt_post_recv(b, 600, NULL, 0);
	rt_post_send(a, 601, with_imm ? IBV_WR_RDMA_WRITE_WITH_IMM :
		     IBV_WR_RDMA_WRITE, NULL, 0, IBV_SEND_SIGNALED, imm,
		     (uintptr_t)dst.p, dst.mr->rkey);
	rt_expect_wc(a->scq, "requester", 601, IBV_WC_SUCCESS,
		     IBV_WC_RDMA_WRITE);
	if (with_imm) {
		wc = rt_expect_wc(b->rcq, "responder", 600, IBV_WC_SUCCESS,
				  IBV_WC_RECV_RDMA_WITH_IMM);
		RT_CHECK(wc.byte_len == 0 && (wc.wc_flags & IBV_WC_WITH_IMM) &&
			 be32toh(wc.imm_data) == imm, "0-byte WRITE_WITH_IMM: "
			 "byte_len %u flags 0x%x imm 0x%08x (sent 0x%08x)",
			 wc.byte_len, wc.wc_flags, be32toh(wc.imm_data), imm);
	}
	rt_check_guard(dst.p, RT_GUARD, "target of a 0-byte WRITE");
	rt_buf_free(&dst);
}

static void
rt_rc_write_case(bool with_imm, bool read)
{
	struct rt_dev d0, d1;
	struct rt_ep a, b;
	size_t sizes[3];
	uint64_t zc;
	int i;

	rt_dev_open(&d0, RT_DEV0);
	rt_dev_open(&d1, RT_DEV1);
	sizes[0] = 1;
	sizes[1] = d0.mtu + 1;
	sizes[2] = 65536;
	rt_rc_pair_wrap(&a, &d0, &b, &d1, NULL);
	if (!read)
		rt_rc_write_zero(&a, &b, with_imm);
	/* The payloads' sender: the requester's, or the READ responder's. */
	zc = rt_stat(read ? 1 : 0, "tx_zero_copy");
	for (i = 0; i < 3; i++) {
		if (read)
			rt_rc_read_checks(&a, &b, sizes[i]);
		else
			rt_rc_write_checks(&a, &b, sizes[i], with_imm);
	}
	/* memif copies a frame as it sends it: every full packet within one
	 * SGE went from the registered memory (rp_port.c, "Zero copy on
	 * transmit"); the checks above compared every byte that arrived. */
	zc = rt_stat(read ? 1 : 0, "tx_zero_copy") - zc;
	RT_CHECK(zc >= 65536 / d0.mtu, "%" PRIu64 " payloads sent from "
		 "registered memory, %u full packets (one may span the "
		 "SGEs)", zc, 65536 / d0.mtu + 1);
	printf("    payloads sent from registered memory: %" PRIu64 "\n", zc);
	/* and the other way, at the largest size */
	if (read)
		rt_rc_read_checks(&b, &a, sizes[2]);
	else
		rt_rc_write_checks(&b, &a, sizes[2], with_imm);
	rt_ep_destroy(&a);
	rt_ep_destroy(&b);
	rt_dev_close(&d0);
	rt_dev_close(&d1);
}

static void rt_case_rc_write(void) { rt_rc_write_case(false, false); }
static void rt_case_rc_write_imm(void) { rt_rc_write_case(true, false); }
static void rt_case_rc_read(void) { rt_rc_write_case(false, true); }

/* Two QPs of one device: the engine's loopback path. */
static void
rt_case_rc_loopback(void)
{
	struct rt_dev d0;
	struct rt_ep a, b;

	rt_dev_open(&d0, RT_DEV0);
	rt_rc_pair(&a, &d0, &b, &d0, NULL);
	rt_rc_send_checks(&a, &b, 1);
	rt_rc_send_checks(&a, &b, 65536);
	rt_rc_write_zero(&a, &b, true);
	rt_rc_write_checks(&a, &b, d0.mtu + 1, false);
	rt_rc_write_checks(&a, &b, 65536, true);
	rt_rc_read_checks(&a, &b, 1);
	rt_rc_read_checks(&a, &b, 65536);
	rt_rc_read_checks(&b, &a, d0.mtu + 1);
	rt_ep_destroy(&a);
	rt_ep_destroy(&b);

	/* a QP connected to itself */
	rt_step("RC QP connected to itself");
	{
		const struct rt_ep_opts eo = { .type = IBV_QPT_RC };
		struct rt_buf buf;
		struct ibv_sge s, r;
		struct ibv_wc wc;

		rt_ep_create(&a, &d0, &eo);
		rt_rc_connect(&a, &a, &rt_rc_default);
		rt_buf_alloc(&buf, &d0, 4096, RT_ACCESS_ALL);
		rt_fill_random(buf.p, 1000);
		r = rt_sge(&buf, 2048, 1000);
		s = rt_sge(&buf, 0, 1000);
		rt_post_recv(&a, 700, &r, 1);
		rt_post_send(&a, 701, IBV_WR_SEND, &s, 1, IBV_SEND_SIGNALED, 0,
			     0, 0);
		rt_expect_wc(a.scq, "sender", 701, IBV_WC_SUCCESS,
			     IBV_WC_SEND);
		wc = rt_expect_wc(a.rcq, "receiver", 700, IBV_WC_SUCCESS,
				  IBV_WC_RECV);
		RT_CHECK(wc.byte_len == 1000, "byte_len %u", wc.byte_len);
		rt_check_data(buf.p + 2048, buf.p, 1000, "self SEND");
		rt_buf_free(&buf);
		rt_ep_destroy(&a);
	}
	rt_dev_close(&d0);
}

/*
 * One bad-access scenario: WR 1 (the bad one, opcode op at raddr/rkey,
 * len bytes) then three SENDs, posted together, the responder QP with
 * qp_access.  WR 1 fails with `status` (the NAK's), the SENDs flush, both
 * QPs end in ERR and flush their receive queues, and the target memory is
 * untouched.
 */
static void
rt_bad_request(struct rt_dev *d0, struct rt_dev *d1, const char *what,
	       enum ibv_wr_opcode op, int target_access, size_t len,
	       size_t target_len, long offset, uint32_t rkey_xor,
	       int qp_access, enum ibv_wc_status status)
{
	struct rt_rc_opts o = rt_rc_default;
	struct rt_ep a, b;
	struct rt_buf lbuf, target;
	struct ibv_sge s;
	int i;

	rt_step("%s", what);
	o.access = qp_access;
	rt_rc_pair(&a, d0, &b, d1, &o);
	rt_buf_alloc(&lbuf, d0, len + 4096, IBV_ACCESS_LOCAL_WRITE);
	rt_buf_alloc(&target, d1, target_len, target_access);
	rt_fill_random(lbuf.p, lbuf.len);
	memset(target.p, RT_GUARD_BYTE, target.len);
	for (i = 0; i < 3; i++)
		rt_post_recv(&b, 800 + (uint64_t)i, NULL, 0);
	for (i = 0; i < 2; i++)
		rt_post_recv(&a, 810 + (uint64_t)i, NULL, 0);
	s = rt_sge(&lbuf, 0, len);
	rt_post_send(&a, 820, op, &s, 1, IBV_SEND_SIGNALED, 0,
		     (uint64_t)((intptr_t)target.p + offset),
		     target.mr->rkey ^ rkey_xor);
	for (i = 1; i < 4; i++) {
		s = rt_sge(&lbuf, 0, 8);
		rt_post_send(&a, 820 + (uint64_t)i, IBV_WR_SEND, &s, 1,
			     IBV_SEND_SIGNALED, 0, 0, 0);
	}
	rt_expect_wc(a.scq, "requester, the bad WR", 820, status, -1);
	for (i = 1; i < 4; i++)
		rt_expect_wc(a.scq, "requester, WR after the bad one",
			     820 + (uint64_t)i, IBV_WC_WR_FLUSH_ERR, -1);
	for (i = 0; i < 2; i++)
		rt_expect_wc(a.rcq, "requester's receive queue",
			     810 + (uint64_t)i, IBV_WC_WR_FLUSH_ERR, -1);
	rt_expect_qp_state(&a, IBV_QPS_ERR, "requester after the NAK");

	/* a WR posted in ERR completes with a flush error */
	s = rt_sge(&lbuf, 0, 8);
	rt_post_send(&a, 830, IBV_WR_SEND, &s, 1, IBV_SEND_SIGNALED, 0, 0, 0);
	rt_expect_wc(a.scq, "requester, WR posted in ERR", 830,
		     IBV_WC_WR_FLUSH_ERR, -1);

	/*
	 * The responder: an invalid R_Key, range or access right (or a
	 * misaligned atomic, "invalid request") is a class C responder error
	 * (IBTA 9.9.3.1.2: NAK "remote access error", responder QP to the
	 * Error state, as rxe's do_class_ac_error() and real HCAs do), so
	 * its receives flush.
	 */
	rt_expect_qp_state(&b, IBV_QPS_ERR, "responder after a remote access "
			   "error");
	for (i = 0; i < 3; i++)
		rt_expect_wc(b.rcq, "responder's receive queue",
			     800 + (uint64_t)i, IBV_WC_WR_FLUSH_ERR, -1);
	rt_check_guard(target.p, target.len, "target of the rejected access");
	rt_expect_empty(a.scq, 10, "requester CQ after the flushes");
	rt_ep_destroy(&a);
	rt_ep_destroy(&b);
	rt_buf_free(&lbuf);
	rt_buf_free(&target);
}

/* A remote access error, the responder QP taking every access. */
static void
rt_bad_access(struct rt_dev *d0, struct rt_dev *d1, const char *what,
	      enum ibv_wr_opcode op, int target_access, size_t len,
	      size_t target_len, long offset, uint32_t rkey_xor)
{
	rt_bad_request(d0, d1, what, op, target_access, len, target_len,
		       offset, rkey_xor, RT_ACCESS_ALL, IBV_WC_REM_ACCESS_ERR);
}

static void
rt_case_rc_bad_rkey(void)
{
	struct rt_dev d0, d1;

	rt_dev_open(&d0, RT_DEV0);
	rt_dev_open(&d1, RT_DEV1);
	rt_bad_access(&d0, &d1, "RDMA WRITE 64 B with a wrong rkey",
		      IBV_WR_RDMA_WRITE, RT_ACCESS_ALL, 64, 4096, 0, 0x80);
	rt_bad_access(&d0, &d1, "RDMA WRITE 3000 B with a wrong rkey "
		      "(multi-packet)", IBV_WR_RDMA_WRITE, RT_ACCESS_ALL, 3000,
		      4096, 0, 0x1000);
	rt_bad_access(&d0, &d1, "RDMA READ 64 B with a wrong rkey",
		      IBV_WR_RDMA_READ, RT_ACCESS_ALL, 64, 4096, 0, 0x80);
	rt_bad_access(&d0, &d1, "RDMA WRITE 100 B running past the end of "
		      "the MR (right rkey)", IBV_WR_RDMA_WRITE, RT_ACCESS_ALL,
		      100, 4096, 4096 - 10, 0);
	rt_bad_access(&d0, &d1, "RDMA WRITE 64 B before the start of the MR",
		      IBV_WR_RDMA_WRITE, RT_ACCESS_ALL, 64, 4096, -64, 0);
	rt_bad_access(&d0, &d1, "RDMA WRITE into an MR without "
		      "IBV_ACCESS_REMOTE_WRITE", IBV_WR_RDMA_WRITE,
		      IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ, 64,
		      4096, 0, 0);
	rt_bad_access(&d0, &d1, "RDMA READ from an MR without "
		      "IBV_ACCESS_REMOTE_READ", IBV_WR_RDMA_READ,
		      IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE, 64,
		      4096, 0, 0);
	/* An operation the responder's QP does not enable: "invalid
	 * request", as rxe answers it (check_op_valid), not "remote access
	 * error"; the responder QP goes to ERR all the same. */
	rt_bad_request(&d0, &d1, "RDMA WRITE to a QP without "
		       "IBV_ACCESS_REMOTE_WRITE: NAK invalid request",
		       IBV_WR_RDMA_WRITE, RT_ACCESS_ALL, 64, 4096, 0, 0,
		       IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ,
		       IBV_WC_REM_INV_REQ_ERR);
	rt_bad_request(&d0, &d1, "RDMA READ from a QP without "
		       "IBV_ACCESS_REMOTE_READ: NAK invalid request",
		       IBV_WR_RDMA_READ, RT_ACCESS_ALL, 64, 4096, 0, 0,
		       IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE,
		       IBV_WC_REM_INV_REQ_ERR);
	rt_dev_close(&d0);
	rt_dev_close(&d1);
}

/* A SEND that finds no receive, with rnr_retry as given. */
static void
rt_rnr_exhaust(struct rt_dev *d0, struct rt_dev *d1, uint8_t rnr_retry)
{
	struct rt_rc_opts o = rt_rc_default;
	struct rt_ep a, b;
	struct rt_buf buf;
	struct ibv_sge s;
	double t0;

	rt_step("SEND with no receive posted, rnr_retry %u, min_rnr_timer 1 "
		"(10 us): IBV_WC_RNR_RETRY_EXC_ERR", rnr_retry);
	o.rnr_retry = rnr_retry;
	o.min_rnr_timer = 1;
	rt_rc_pair(&a, d0, &b, d1, &o);
	rt_buf_alloc(&buf, d0, 256, IBV_ACCESS_LOCAL_WRITE);
	s = rt_sge(&buf, 0, 200);
	t0 = rt_now();
	rt_post_send(&a, 900, IBV_WR_SEND, &s, 1, IBV_SEND_SIGNALED, 0, 0, 0);
	rt_expect_wc(a.scq, "requester", 900, IBV_WC_RNR_RETRY_EXC_ERR, -1);
	printf("    RNR retries exhausted after %.2f ms\n",
	       (rt_now() - t0) * 1e3);
	rt_expect_qp_state(&a, IBV_QPS_ERR, "requester after "
			   "IBV_WC_RNR_RETRY_EXC_ERR");
	rt_expect_empty(b.rcq, 0, "responder receive CQ");
	rt_ep_destroy(&a);
	rt_ep_destroy(&b);
	rt_buf_free(&buf);
}

static void
rt_case_rc_rnr(void)
{
	struct rt_loss l;
	struct rt_rc_opts o = rt_rc_default;
	struct rt_dev d0, d1;
	struct rt_ep a, b;
	struct rt_buf src, dst;
	struct ibv_sge s, r;
	struct ibv_wc wc;
	size_t len;

	rt_dev_open(&d0, RT_DEV0);
	rt_dev_open(&d1, RT_DEV1);
	rt_rnr_exhaust(&d0, &d1, 0);
	rt_rnr_exhaust(&d0, &d1, 1);

	o.rnr_retry = 7;
	o.min_rnr_timer = 12;
	rt_rc_pair(&a, &d0, &b, &d1, &o);
	rt_buf_alloc(&src, &d0, 8192, IBV_ACCESS_LOCAL_WRITE);
	rt_buf_alloc(&dst, &d1, 8192, IBV_ACCESS_LOCAL_WRITE);
	for (len = 100; len <= 3000; len += 2900) {
		rt_step("SEND %zu B, rnr_retry 7, receive posted after 50 ms: "
			"success", len);
		rt_fill_random(src.p, len);
		memset(dst.p, RT_GUARD_BYTE, dst.len);
		s = rt_sge(&src, 0, len);
		rt_post_send(&a, 910, IBV_WR_SEND, &s, 1, IBV_SEND_SIGNALED,
			     0, 0, 0);
		rt_expect_empty(a.scq, 50, "requester during the RNR wait");
		r = rt_sge(&dst, 0, 4096);
		rt_post_recv(&b, 911, &r, 1);
		rt_expect_wc(a.scq, "requester", 910, IBV_WC_SUCCESS,
			     IBV_WC_SEND);
		wc = rt_expect_wc(b.rcq, "responder", 911, IBV_WC_SUCCESS,
				  IBV_WC_RECV);
		RT_CHECK(wc.byte_len == len, "byte_len %u, sent %zu",
			 wc.byte_len, len);
		rt_check_data(dst.p, src.p, len, "payload after RNR");
		rt_check_guard(dst.p + len, RT_GUARD, "past the payload");
		rt_expect_empty(b.rcq, 10, "responder: the message arrived "
				"once");
	}
	rt_expect_qp_state(&a, IBV_QPS_RTS, "requester after RNR recovery");
	rt_step("counters: every RNR NAK rocepmd1 sent reached rocepmd0");
	rt_loss_read(&l);
	rt_loss_check(&l, RT_NEED(RT_L_RNR_SENT) | RT_NEED(RT_L_RNR_RCVD));
	RT_CHECK(l.c[0][RT_L_RNR_RCVD] == l.c[1][RT_L_RNR_SENT] &&
		 l.c[1][RT_L_RNR_RCVD] == 0 && l.c[0][RT_L_RNR_SENT] == 0,
		 "RNR NAKs: rocepmd1 sent %" PRIu64 ", rocepmd0 received %"
		 PRIu64 " on a lossless wire", l.c[1][RT_L_RNR_SENT],
		 l.c[0][RT_L_RNR_RCVD]);
	rt_ep_destroy(&a);
	rt_ep_destroy(&b);
	rt_buf_free(&src);
	rt_buf_free(&dst);
	rt_dev_close(&d0);
	rt_dev_close(&d1);
}

static void
rt_case_rc_recv_too_small(void)
{
	static const size_t cases[][2] = {
		{ 200, 64 },		/* single packet */
		{ 3000, 2048 },		/* fails on the third packet */
	};
	struct rt_dev d0, d1;
	struct rt_ep a, b;
	struct rt_buf src, dst;
	struct ibv_sge s, r;
	unsigned int i;

	rt_dev_open(&d0, RT_DEV0);
	rt_dev_open(&d1, RT_DEV1);
	for (i = 0; i < 2; i++) {
		size_t len = cases[i][0], room = cases[i][1];

		rt_step("SEND %zu B into a %zu B receive: receiver "
			"IBV_WC_LOC_LEN_ERR, sender IBV_WC_REM_INV_REQ_ERR",
			len, room);
		rt_rc_pair(&a, &d0, &b, &d1, NULL);
		rt_buf_alloc(&src, &d0, len, IBV_ACCESS_LOCAL_WRITE);
		rt_buf_alloc(&dst, &d1, room + RT_GUARD,
			     IBV_ACCESS_LOCAL_WRITE);
		rt_fill_random(src.p, len);
		r = rt_sge(&dst, 0, room);
		rt_post_recv(&b, 1000, &r, 1);
		rt_post_recv(&b, 1001, &r, 1);
		s = rt_sge(&src, 0, len);
		rt_post_send(&a, 1010, IBV_WR_SEND, &s, 1, IBV_SEND_SIGNALED,
			     0, 0, 0);
		rt_expect_wc(b.rcq, "receiver", 1000, IBV_WC_LOC_LEN_ERR, -1);
		rt_expect_wc(a.scq, "sender", 1010, IBV_WC_REM_INV_REQ_ERR,
			     -1);
		rt_expect_wc(b.rcq, "receiver, next receive", 1001,
			     IBV_WC_WR_FLUSH_ERR, -1);
		rt_check_guard(dst.p + room, RT_GUARD, "past the receive "
			       "buffer");
		rt_expect_qp_state(&a, IBV_QPS_ERR, "sender");
		rt_expect_qp_state(&b, IBV_QPS_ERR, "receiver");
		rt_ep_destroy(&a);
		rt_ep_destroy(&b);
		rt_buf_free(&src);
		rt_buf_free(&dst);
	}

	/*
	 * A receive whose lkey names no MR of the QP's PD (issue 26: after
	 * ibv_rereg_mr moved it to another PD): a responder local protection
	 * fault, answered as the kernel's devices do, with the NAK "remote
	 * operational error".
	 */
	rt_step("SEND into a receive with a bad lkey: receiver "
		"IBV_WC_LOC_PROT_ERR, sender IBV_WC_REM_OP_ERR");
	rt_rc_pair(&a, &d0, &b, &d1, NULL);
	rt_buf_alloc(&src, &d0, 64, IBV_ACCESS_LOCAL_WRITE);
	rt_buf_alloc(&dst, &d1, 64, IBV_ACCESS_LOCAL_WRITE);
	r = rt_sge(&dst, 0, 64);
	r.lkey ^= 0x00f00000u;		/* another key index: no such MR */
	rt_post_recv(&b, 1100, &r, 1);
	s = rt_sge(&src, 0, 64);
	rt_post_send(&a, 1110, IBV_WR_SEND, &s, 1, IBV_SEND_SIGNALED, 0, 0, 0);
	rt_expect_wc(b.rcq, "receiver", 1100, IBV_WC_LOC_PROT_ERR, -1);
	rt_expect_wc(a.scq, "sender", 1110, IBV_WC_REM_OP_ERR, -1);
	rt_expect_qp_state(&a, IBV_QPS_ERR, "sender");
	rt_expect_qp_state(&b, IBV_QPS_ERR, "receiver");
	rt_ep_destroy(&a);
	rt_ep_destroy(&b);
	rt_buf_free(&src);
	rt_buf_free(&dst);
	rt_dev_close(&d0);
	rt_dev_close(&d1);
}

/* ibv_modify_qp must refuse with EINVAL and leave the state alone. */
static void
rt_modify_refused(struct rt_ep *ep, struct ibv_qp_attr *a, int mask,
		  enum ibv_qp_state still, const char *what)
{
	int ret;

	rt_step("refused: %s", what);
	ret = rt_modify(ep, a, mask);
	RT_CHECK(ret == EINVAL, "%s: ibv_modify_qp returned %d (%s), "
		 "expected EINVAL", what, ret, ret ? strerror(ret) : "success");
	rt_expect_qp_state(ep, still, what);
	RT_CHECK(ep->qp->state == still, "%s: qp->state %d changed by a "
		 "refused modify", what, (int)ep->qp->state);
}

static void
rt_qp_state_rc(struct rt_dev *d0)
{
	const struct rt_ep_opts eo = { .type = IBV_QPT_RC };
	const int init_mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
		IBV_QP_ACCESS_FLAGS;
	const int rtr_mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
		IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
		IBV_QP_MIN_RNR_TIMER;
	const int rts_mask = IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
		IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC;
	struct rt_ep a, b;
	struct ibv_qp_attr at, q;
	struct ibv_qp_init_attr qi;
	struct rt_buf buf;
	struct ibv_sge s;
	struct ibv_send_wr wr, *bad;
	int ret, round;

	rt_ep_create(&a, d0, &eo);
	rt_ep_create(&b, d0, &eo);
	rt_buf_alloc(&buf, d0, 4096, RT_ACCESS_ALL);

	rt_step("RC: a new QP is RESET; ibv_query_qp returns its caps");
	memset(&q, 0, sizeof(q));
	memset(&qi, 0, sizeof(qi));
	ret = ibv_query_qp(a.qp, &q, IBV_QP_STATE | IBV_QP_CAP, &qi);
	RT_CHECK(ret == 0, "ibv_query_qp: %s", strerror(ret));
	RT_CHECK(q.qp_state == IBV_QPS_RESET, "state %d", (int)q.qp_state);
	RT_CHECK(qi.qp_type == IBV_QPT_RC && qi.send_cq == a.scq &&
		 qi.recv_cq == a.rcq, "init_attr: type %d, send_cq %s, "
		 "recv_cq %s", (int)qi.qp_type, qi.send_cq == a.scq ? "ok" :
		 "wrong", qi.recv_cq == a.rcq ? "ok" : "wrong");
	RT_CHECK(qi.cap.max_send_wr >= RT_WR && qi.cap.max_recv_wr >= RT_WR &&
		 qi.cap.max_send_sge >= RT_SGE &&
		 qi.cap.max_recv_sge >= RT_SGE &&
		 qi.cap.max_inline_data >= RT_INLINE,
		 "queried caps below the requested ones: %u/%u WRs %u/%u "
		 "SGEs inline %u", qi.cap.max_send_wr, qi.cap.max_recv_wr,
		 qi.cap.max_send_sge, qi.cap.max_recv_sge,
		 qi.cap.max_inline_data);
	RT_CHECK(q.cap.max_send_wr == qi.cap.max_send_wr, "attr.cap and "
		 "init_attr.cap differ: %u / %u", q.cap.max_send_wr,
		 qi.cap.max_send_wr);

	for (round = 0; round < 2; round++) {
		rt_step("RC round %d: ibv_post_send in RESET: EINVAL", round);
		s = rt_sge(&buf, 0, 8);
		memset(&wr, 0, sizeof(wr));
		wr.wr_id = 1;
		wr.opcode = IBV_WR_SEND;
		wr.sg_list = &s;
		wr.num_sge = 1;
		wr.send_flags = IBV_SEND_SIGNALED;
		bad = NULL;
		ret = ibv_post_send(a.qp, &wr, &bad);
		RT_CHECK(ret == EINVAL && bad == &wr, "ibv_post_send in RESET "
			 "returned %d (%s), bad_wr %s; expected EINVAL and "
			 "bad_wr = the WR", ret, ret ? strerror(ret) : "ok",
			 bad == &wr ? "right" : "wrong");
		rt_expect_empty(a.scq, 20, "send CQ after a refused post");

		memset(&at, 0, sizeof(at));
		at.qp_state = IBV_QPS_RTS;
		at.sq_psn = 1;
		at.timeout = 14;
		at.retry_cnt = 7;
		at.rnr_retry = 7;
		at.max_rd_atomic = 1;
		rt_modify_refused(&a, &at, rts_mask, IBV_QPS_RESET,
				  "RESET->RTS");
		memset(&at, 0, sizeof(at));
		at.qp_state = IBV_QPS_RTR;
		at.path_mtu = IBV_MTU_1024;
		at.dest_qp_num = b.qp->qp_num;
		at.max_dest_rd_atomic = 1;
		at.min_rnr_timer = 12;
		rt_ah_attr(&at.ah_attr, &d0->gid);
		rt_modify_refused(&a, &at, rtr_mask, IBV_QPS_RESET,
				  "RESET->RTR");

		memset(&at, 0, sizeof(at));
		at.qp_state = IBV_QPS_INIT;
		at.port_num = RT_PORT;
		at.qp_access_flags = RT_ACCESS_ALL;
		rt_modify_refused(&a, &at, IBV_QP_STATE | IBV_QP_PORT |
				  IBV_QP_ACCESS_FLAGS, IBV_QPS_RESET,
				  "RESET->INIT without IBV_QP_PKEY_INDEX");
		rt_modify_refused(&a, &at, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				  IBV_QP_PORT, IBV_QPS_RESET,
				  "RESET->INIT without IBV_QP_ACCESS_FLAGS");
		at.qkey = RT_QKEY;
		rt_modify_refused(&a, &at, init_mask | IBV_QP_QKEY,
				  IBV_QPS_RESET, "RC RESET->INIT with "
				  "IBV_QP_QKEY (a UD attribute)");
		at.port_num = 2;
		rt_modify_refused(&a, &at, init_mask, IBV_QPS_RESET,
				  "RESET->INIT with port_num 2 (no such "
				  "port)");
		at.port_num = RT_PORT;

		rt_step("RESET->INIT");
		at.qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
			IBV_ACCESS_REMOTE_READ;
		ret = rt_modify(&a, &at, init_mask);
		RT_CHECK(ret == 0, "RESET->INIT: %s", strerror(ret));
		RT_CHECK(a.qp->state == IBV_QPS_INIT, "qp->state %d after "
			 "RESET->INIT", (int)a.qp->state);
		memset(&q, 0, sizeof(q));
		ret = ibv_query_qp(a.qp, &q, IBV_QP_STATE | IBV_QP_PORT |
				   IBV_QP_PKEY_INDEX | IBV_QP_ACCESS_FLAGS,
				   &qi);
		RT_CHECK(ret == 0 && q.qp_state == IBV_QPS_INIT &&
			 q.port_num == RT_PORT && q.pkey_index == 0 &&
			 q.qp_access_flags == (IBV_ACCESS_REMOTE_WRITE |
					       IBV_ACCESS_REMOTE_READ),
			 "query after INIT: ret %d state %d port %u pkey_index "
			 "%u access 0x%x", ret, (int)q.qp_state, q.port_num,
			 q.pkey_index, q.qp_access_flags);
		rt_rc_init(&b, RT_ACCESS_ALL);

		rt_step("INIT->INIT changes the access flags");
		memset(&at, 0, sizeof(at));
		at.qp_state = IBV_QPS_INIT;
		at.qp_access_flags = RT_ACCESS_ALL;
		ret = rt_modify(&a, &at, IBV_QP_STATE | IBV_QP_ACCESS_FLAGS);
		RT_CHECK(ret == 0, "INIT->INIT: %s", strerror(ret));
		ret = ibv_query_qp(a.qp, &q, IBV_QP_ACCESS_FLAGS, &qi);
		RT_CHECK(ret == 0 && q.qp_access_flags == RT_ACCESS_ALL,
			 "access flags after INIT->INIT: 0x%x",
			 q.qp_access_flags);

		/*
		 * MR-only bits in qp_access_flags (issue 26): the kernel's
		 * devices accept them and ignore what does not apply to a
		 * QP; so does rocepmd, which keeps the QP's four.
		 */
		rt_step("INIT->INIT with MR-only access bits: accepted, ignored");
		at.qp_access_flags = RT_ACCESS_ALL | IBV_ACCESS_ON_DEMAND |
			IBV_ACCESS_MW_BIND | IBV_ACCESS_ZERO_BASED |
			IBV_ACCESS_RELAXED_ORDERING;
		ret = rt_modify(&a, &at, IBV_QP_STATE | IBV_QP_ACCESS_FLAGS);
		RT_CHECK(ret == 0, "INIT->INIT with IBV_ACCESS_ON_DEMAND and "
			 "other MR-only bits: %s", strerror(ret));
		ret = ibv_query_qp(a.qp, &q, IBV_QP_ACCESS_FLAGS, &qi);
		RT_CHECK(ret == 0 && q.qp_access_flags == RT_ACCESS_ALL,
			 "access flags after MR-only bits: 0x%x (want 0x%x)",
			 q.qp_access_flags, RT_ACCESS_ALL);

		memset(&at, 0, sizeof(at));
		at.qp_state = IBV_QPS_RTS;
		at.sq_psn = a.psn;
		at.timeout = 14;
		at.retry_cnt = 7;
		at.rnr_retry = 7;
		at.max_rd_atomic = 1;
		rt_modify_refused(&a, &at, rts_mask, IBV_QPS_INIT,
				  "INIT->RTS");

		memset(&at, 0, sizeof(at));
		at.qp_state = IBV_QPS_RTR;
		at.path_mtu = IBV_MTU_1024;
		at.dest_qp_num = b.qp->qp_num;
		at.rq_psn = b.psn;
		at.max_dest_rd_atomic = 4;
		at.min_rnr_timer = 14;
		rt_ah_attr(&at.ah_attr, &d0->gid);
		rt_modify_refused(&a, &at, rtr_mask & ~IBV_QP_AV,
				  IBV_QPS_INIT, "INIT->RTR without IBV_QP_AV");
		rt_modify_refused(&a, &at, rtr_mask & ~IBV_QP_DEST_QPN,
				  IBV_QPS_INIT, "INIT->RTR without "
				  "IBV_QP_DEST_QPN");
		rt_modify_refused(&a, &at, rtr_mask & ~IBV_QP_RQ_PSN,
				  IBV_QPS_INIT, "INIT->RTR without "
				  "IBV_QP_RQ_PSN");
		rt_modify_refused(&a, &at, rtr_mask | IBV_QP_SQ_PSN,
				  IBV_QPS_INIT, "INIT->RTR with IBV_QP_SQ_PSN "
				  "(an RTS attribute)");

		rt_step("INIT->RTR");
		ret = rt_modify(&a, &at, rtr_mask);
		RT_CHECK(ret == 0, "INIT->RTR: %s", strerror(ret));
		memset(&q, 0, sizeof(q));
		ret = ibv_query_qp(a.qp, &q, rtr_mask, &qi);
		RT_CHECK(ret == 0, "ibv_query_qp in RTR: %s", strerror(ret));
		RT_CHECK(q.qp_state == IBV_QPS_RTR &&
			 q.path_mtu == IBV_MTU_1024 &&
			 q.dest_qp_num == b.qp->qp_num && q.rq_psn == b.psn &&
			 q.max_dest_rd_atomic == 4 && q.min_rnr_timer == 14,
			 "query in RTR: state %d path_mtu %d dest_qp 0x%x "
			 "(set 0x%x) rq_psn 0x%x (set 0x%x) max_dest_rd_atomic "
			 "%u (set 4) min_rnr_timer %u (set 14)",
			 (int)q.qp_state, (int)q.path_mtu, q.dest_qp_num,
			 b.qp->qp_num, q.rq_psn, b.psn, q.max_dest_rd_atomic,
			 q.min_rnr_timer);
		RT_CHECK(q.ah_attr.is_global == 1 &&
			 memcmp(&q.ah_attr.grh.dgid, &d0->gid,
				sizeof(d0->gid)) == 0 &&
			 q.ah_attr.grh.sgid_index == RT_GID_INDEX &&
			 q.ah_attr.port_num == RT_PORT,
			 "query in RTR: ah_attr is_global %u sgid_index %u "
			 "port %u, dgid %s", q.ah_attr.is_global,
			 q.ah_attr.grh.sgid_index, q.ah_attr.port_num,
			 memcmp(&q.ah_attr.grh.dgid, &d0->gid,
				sizeof(d0->gid)) == 0 ? "right" : "wrong");
		rt_rc_rtr(&b, &a, &rt_rc_default);

		memset(&at, 0, sizeof(at));
		at.qp_state = IBV_QPS_RTS;
		at.sq_psn = a.psn;
		at.timeout = 17;
		at.retry_cnt = 5;
		at.rnr_retry = 6;
		at.max_rd_atomic = 2;
		rt_modify_refused(&a, &at, rts_mask & ~IBV_QP_SQ_PSN,
				  IBV_QPS_RTR, "RTR->RTS without "
				  "IBV_QP_SQ_PSN");
		rt_modify_refused(&a, &at, rts_mask | IBV_QP_DEST_QPN,
				  IBV_QPS_RTR, "RTR->RTS with IBV_QP_DEST_QPN "
				  "(an RTR attribute)");
		rt_step("RTR->RTS");
		ret = rt_modify(&a, &at, rts_mask);
		RT_CHECK(ret == 0, "RTR->RTS: %s", strerror(ret));
		memset(&q, 0, sizeof(q));
		ret = ibv_query_qp(a.qp, &q, rts_mask, &qi);
		RT_CHECK(ret == 0 && q.qp_state == IBV_QPS_RTS &&
			 q.sq_psn == a.psn && q.timeout == 17 &&
			 q.retry_cnt == 5 && q.rnr_retry == 6 &&
			 q.max_rd_atomic == 2,
			 "query in RTS: ret %d state %d sq_psn 0x%x (set 0x%x) "
			 "timeout %u (17) retry_cnt %u (5) rnr_retry %u (6) "
			 "max_rd_atomic %u (2)", ret, (int)q.qp_state,
			 q.sq_psn, a.psn, q.timeout, q.retry_cnt, q.rnr_retry,
			 q.max_rd_atomic);
		RT_CHECK(a.qp->state == IBV_QPS_RTS, "qp->state %d",
			 (int)a.qp->state);
		rt_rc_rts(&b, &rt_rc_default);

		memset(&at, 0, sizeof(at));
		at.qp_state = IBV_QPS_RTR;
		rt_modify_refused(&a, &at, IBV_QP_STATE, IBV_QPS_RTS,
				  "RTS->RTR");
		at.qp_state = IBV_QPS_INIT;
		rt_modify_refused(&a, &at, IBV_QP_STATE, IBV_QPS_RTS,
				  "RTS->INIT");

		rt_step("RTS->RTS changes min_rnr_timer");
		memset(&at, 0, sizeof(at));
		at.qp_state = IBV_QPS_RTS;
		at.min_rnr_timer = 3;
		ret = rt_modify(&a, &at, IBV_QP_STATE | IBV_QP_MIN_RNR_TIMER);
		RT_CHECK(ret == 0, "RTS->RTS: %s", strerror(ret));
		ret = ibv_query_qp(a.qp, &q, IBV_QP_MIN_RNR_TIMER, &qi);
		RT_CHECK(ret == 0 && q.min_rnr_timer == 3, "min_rnr_timer %u "
			 "after RTS->RTS, set 3", q.min_rnr_timer);

		rt_step("the QP works: SEND both ways");
		{
			struct ibv_sge r1, r2, s1, s2;
			struct ibv_wc wc;

			rt_fill_random(buf.p, 256);
			s1 = rt_sge(&buf, 0, 100);
			s2 = rt_sge(&buf, 100, 100);
			r1 = rt_sge(&buf, 1024, 100);
			r2 = rt_sge(&buf, 2048, 100);
			rt_post_recv(&b, 2, &r1, 1);
			rt_post_recv(&a, 3, &r2, 1);
			rt_post_send(&a, 4, IBV_WR_SEND, &s1, 1,
				     IBV_SEND_SIGNALED, 0, 0, 0);
			rt_post_send(&b, 5, IBV_WR_SEND, &s2, 1,
				     IBV_SEND_SIGNALED, 0, 0, 0);
			rt_expect_wc(a.scq, "a send", 4, IBV_WC_SUCCESS,
				     IBV_WC_SEND);
			rt_expect_wc(b.scq, "b send", 5, IBV_WC_SUCCESS,
				     IBV_WC_SEND);
			wc = rt_expect_wc(b.rcq, "b recv", 2, IBV_WC_SUCCESS,
					  IBV_WC_RECV);
			RT_CHECK(wc.byte_len == 100, "byte_len %u",
				 wc.byte_len);
			wc = rt_expect_wc(a.rcq, "a recv", 3, IBV_WC_SUCCESS,
					  IBV_WC_RECV);
			RT_CHECK(wc.byte_len == 100, "byte_len %u",
				 wc.byte_len);
			rt_check_data(buf.p + 1024, buf.p, 100, "a -> b");
			rt_check_data(buf.p + 2048, buf.p + 100, 100,
				      "b -> a");
		}

		rt_step("RTS->ERR flushes a posted receive");
		rt_post_recv(&a, 6, NULL, 0);
		memset(&at, 0, sizeof(at));
		at.qp_state = IBV_QPS_ERR;
		ret = rt_modify(&a, &at, IBV_QP_STATE);
		RT_CHECK(ret == 0, "RTS->ERR: %s", strerror(ret));
		rt_expect_wc(a.rcq, "receive posted before ERR", 6,
			     IBV_WC_WR_FLUSH_ERR, -1);
		rt_expect_qp_state(&a, IBV_QPS_ERR, "after RTS->ERR");

		rt_step("ERR->RESET, RTS->RESET: both QPs back to RESET");
		at.qp_state = IBV_QPS_RESET;
		ret = rt_modify(&a, &at, IBV_QP_STATE);
		RT_CHECK(ret == 0, "ERR->RESET: %s", strerror(ret));
		ret = rt_modify(&b, &at, IBV_QP_STATE);
		RT_CHECK(ret == 0, "RTS->RESET: %s", strerror(ret));
		rt_expect_qp_state(&a, IBV_QPS_RESET, "after ERR->RESET");
		rt_expect_qp_state(&b, IBV_QPS_RESET, "after RTS->RESET");
		/* round 1 runs the same path on the reset QPs, new PSNs */
		a.psn = rt_rand32() & 0xffffff;
		b.psn = rt_rand32() & 0xffffff;
	}
	rt_buf_free(&buf);
	rt_ep_destroy(&a);
	rt_ep_destroy(&b);
}

static void
rt_qp_state_ud(struct rt_dev *d0)
{
	const struct rt_ep_opts eo = { .type = IBV_QPT_UD };
	struct ibv_qp_attr at, q;
	struct ibv_qp_init_attr qi;
	struct rt_ep u;
	int ret;

	rt_ep_create(&u, d0, &eo);
	memset(&at, 0, sizeof(at));
	at.qp_state = IBV_QPS_INIT;
	at.port_num = RT_PORT;
	at.qkey = RT_QKEY;
	at.qp_access_flags = RT_ACCESS_ALL;
	rt_modify_refused(&u, &at, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT, IBV_QPS_RESET,
			  "UD RESET->INIT without IBV_QP_QKEY");
	rt_modify_refused(&u, &at, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_QKEY | IBV_QP_ACCESS_FLAGS,
			  IBV_QPS_RESET, "UD RESET->INIT with "
			  "IBV_QP_ACCESS_FLAGS (an RC attribute)");
	rt_step("UD RESET->INIT");
	ret = rt_modify(&u, &at, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			IBV_QP_PORT | IBV_QP_QKEY);
	RT_CHECK(ret == 0, "UD RESET->INIT: %s", strerror(ret));
	memset(&at, 0, sizeof(at));
	at.qp_state = IBV_QPS_RTR;
	at.dest_qp_num = 5;
	rt_modify_refused(&u, &at, IBV_QP_STATE | IBV_QP_DEST_QPN,
			  IBV_QPS_INIT, "UD INIT->RTR with IBV_QP_DEST_QPN");
	rt_step("UD INIT->RTR->RTS");
	ret = rt_modify(&u, &at, IBV_QP_STATE);
	RT_CHECK(ret == 0, "UD INIT->RTR: %s", strerror(ret));
	memset(&at, 0, sizeof(at));
	at.qp_state = IBV_QPS_RTS;
	rt_modify_refused(&u, &at, IBV_QP_STATE, IBV_QPS_RTR,
			  "UD RTR->RTS without IBV_QP_SQ_PSN");
	at.sq_psn = 0x123456;
	ret = rt_modify(&u, &at, IBV_QP_STATE | IBV_QP_SQ_PSN);
	RT_CHECK(ret == 0, "UD RTR->RTS: %s", strerror(ret));
	memset(&q, 0, sizeof(q));
	ret = ibv_query_qp(u.qp, &q, IBV_QP_STATE | IBV_QP_QKEY |
			   IBV_QP_SQ_PSN | IBV_QP_PORT, &qi);
	RT_CHECK(ret == 0 && q.qp_state == IBV_QPS_RTS && q.qkey == RT_QKEY &&
		 q.sq_psn == 0x123456 && q.port_num == RT_PORT &&
		 qi.qp_type == IBV_QPT_UD, "UD query: ret %d state %d qkey "
		 "0x%x sq_psn 0x%x port %u type %d", ret, (int)q.qp_state,
		 q.qkey, q.sq_psn, q.port_num, (int)qi.qp_type);
	rt_ep_destroy(&u);
}

static void
rt_case_qp_state(void)
{
	struct rt_dev d0;

	rt_dev_open(&d0, RT_DEV0);
	rt_qp_state_rc(&d0);
	rt_qp_state_ud(&d0);
	rt_dev_close(&d0);
}

/* Checksum of a 20-byte IPv4 header, 0 when it is right. */
static uint16_t
rt_ip_csum(const uint8_t *h)
{
	uint32_t sum = 0;
	int i;

	for (i = 0; i < 20; i += 2)
		sum += (uint32_t)h[i] << 8 | h[i + 1];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/* wc.sl of a RoCEv2 UD receive, as mlx5 gives it: UDP (8) | L3 type. */
#define RT_WC_SL_ROCEV2_IPV4	0xa
#define RT_WC_SL_ROCEV2_IPV6	0x9

/*
 * The 40 bytes before a UD payload.  RoCEv2 over IPv4 (rdma-core and the
 * kernel's convention): the IPv4 header in bytes 20..39; over IPv6 or an
 * IB-style GRH: version 6 and the two GIDs.  The completion says which in
 * wc.sl (UCX's ud_verbs drops the datagram otherwise), and has no LIDs.
 */
static void
rt_check_grh(const uint8_t *g, const struct ibv_wc *wc,
	     const struct rt_dev *src, const struct rt_dev *dst)
{
	RT_CHECK(wc->slid == 0 && wc->dlid_path_bits == 0, "UD receive: "
		 "slid %u dlid_path_bits %u, RoCE has no LIDs", wc->slid,
		 wc->dlid_path_bits);
	if (g[20] == 0x45) {
		const uint8_t *ip = g + 20;
		uint32_t s = (uint32_t)ip[12] << 24 | (uint32_t)ip[13] << 16 |
			(uint32_t)ip[14] << 8 | ip[15];
		uint32_t d = (uint32_t)ip[16] << 24 | (uint32_t)ip[17] << 16 |
			(uint32_t)ip[18] << 8 | ip[19];
		uint32_t want_s = (uint32_t)src->gid.raw[12] << 24 |
			(uint32_t)src->gid.raw[13] << 16 |
			(uint32_t)src->gid.raw[14] << 8 | src->gid.raw[15];
		uint32_t want_d = (uint32_t)dst->gid.raw[12] << 24 |
			(uint32_t)dst->gid.raw[13] << 16 |
			(uint32_t)dst->gid.raw[14] << 8 | dst->gid.raw[15];

		RT_CHECK(ip[9] == 17, "GRH area: IPv4 protocol %u, expected "
			 "17 (UDP)", ip[9]);
		RT_CHECK(s == want_s && d == want_d, "GRH area: IPv4 "
			 "0x%08x -> 0x%08x, expected 0x%08x -> 0x%08x", s, d,
			 want_s, want_d);
		RT_CHECK(rt_ip_csum(ip) == 0, "GRH area: IPv4 header checksum "
			 "wrong (ibv_init_ah_from_wc would not take it for "
			 "IPv4)");
		RT_CHECK(wc->sl == RT_WC_SL_ROCEV2_IPV4, "UD receive over "
			 "IPv4: wc.sl 0x%x, expected 0x%x (RoCEv2 IPv4 packet "
			 "type)", wc->sl, RT_WC_SL_ROCEV2_IPV4);
		printf("    GRH area: IPv4 header at bytes 20..39\n");
		return;
	}
	RT_CHECK((g[0] >> 4) == 6, "GRH area: neither an IPv4 header at byte "
		 "20 (0x%02x) nor a version 6 GRH at byte 0 (0x%02x)", g[20],
		 g[0]);
	RT_CHECK(memcmp(g + 8, &src->gid, 16) == 0, "GRH area: SGID is not "
		 "the sender's GID");
	RT_CHECK(memcmp(g + 24, &dst->gid, 16) == 0, "GRH area: DGID is not "
		 "the receiver's GID");
	RT_CHECK(wc->sl == RT_WC_SL_ROCEV2_IPV6, "UD receive over IPv6: "
		 "wc.sl 0x%x, expected 0x%x (RoCEv2 IPv6 packet type)", wc->sl,
		 RT_WC_SL_ROCEV2_IPV6);
	printf("    GRH area: IPv6-style GRH\n");
}

static void
rt_case_ud_send(void)
{
	const struct rt_ep_opts eo = { .type = IBV_QPT_UD };
	struct rt_dev d0, d1;
	struct rt_ep a, b;
	struct rt_buf src, dst;
	struct ibv_ah_attr aa;
	struct ibv_ah *ah, *back;
	struct ibv_sge s, r;
	struct ibv_send_wr wr, *bad;
	struct ibv_wc wc;
	size_t sizes[4], len;
	uint32_t imm;
	int i, ret;

	rt_dev_open(&d0, RT_DEV0);
	rt_dev_open(&d1, RT_DEV1);
	rt_ep_create(&a, &d0, &eo);
	rt_ep_create(&b, &d1, &eo);
	rt_ud_up(&a);
	rt_ud_up(&b);
	rt_buf_alloc(&src, &d0, 8192, IBV_ACCESS_LOCAL_WRITE);
	rt_buf_alloc(&dst, &d1, 8192, IBV_ACCESS_LOCAL_WRITE);
	rt_ah_attr(&aa, &d1.gid);
	ah = ibv_create_ah(d0.pd, &aa);
	RT_CHECK(ah != NULL, "ibv_create_ah to %s: %s", d1.name,
		 strerror(errno));

	sizes[0] = 1;
	sizes[1] = 512;
	sizes[2] = d0.mtu;
	sizes[3] = 0;
	for (i = 0; i < 4; i++) {
		bool with_imm = i & 1;

		len = sizes[i];
		imm = rt_rand32();
		rt_step("UD SEND%s %zu B: GRH + payload, src_qp, byte_len",
			with_imm ? "_WITH_IMM" : "", len);
		rt_fill_random(src.p, len);
		memset(dst.p, RT_GUARD_BYTE, dst.len);
		r = rt_sge(&dst, 0, RT_GRH_LEN + len + RT_GUARD);
		rt_post_recv(&b, 1100, &r, 1);
		s = rt_sge(&src, 0, len);
		memset(&wr, 0, sizeof(wr));
		wr.wr_id = 1101;
		wr.opcode = with_imm ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND;
		wr.sg_list = &s;
		wr.num_sge = len ? 1 : 0;
		wr.send_flags = IBV_SEND_SIGNALED;
		wr.imm_data = htobe32(imm);
		wr.wr.ud.ah = ah;
		wr.wr.ud.remote_qpn = b.qp->qp_num;
		wr.wr.ud.remote_qkey = RT_QKEY;
		ret = ibv_post_send(a.qp, &wr, &bad);
		RT_CHECK(ret == 0, "UD ibv_post_send: %s", strerror(ret));
		rt_expect_wc(a.scq, "UD sender", 1101, IBV_WC_SUCCESS,
			     IBV_WC_SEND);
		wc = rt_expect_wc(b.rcq, "UD receiver", 1100, IBV_WC_SUCCESS,
				  IBV_WC_RECV);
		RT_CHECK(wc.byte_len == len + RT_GRH_LEN, "byte_len %u, "
			 "expected payload %zu + 40 (GRH)", wc.byte_len, len);
		RT_CHECK(wc.wc_flags & IBV_WC_GRH, "IBV_WC_GRH not set "
			 "(wc_flags 0x%x): RoCE always carries a GRH",
			 wc.wc_flags);
		RT_CHECK(wc.src_qp == a.qp->qp_num, "src_qp 0x%x, sender QP "
			 "0x%x", wc.src_qp, a.qp->qp_num);
		RT_CHECK(wc.qp_num == b.qp->qp_num, "qp_num 0x%x, receiver "
			 "QP 0x%x", wc.qp_num, b.qp->qp_num);
		RT_CHECK(wc.pkey_index == 0, "pkey_index %u", wc.pkey_index);
		if (with_imm)
			RT_CHECK((wc.wc_flags & IBV_WC_WITH_IMM) &&
				 be32toh(wc.imm_data) == imm, "imm: flags "
				 "0x%x value 0x%08x, sent 0x%08x",
				 wc.wc_flags, be32toh(wc.imm_data), imm);
		else
			RT_CHECK(!(wc.wc_flags & IBV_WC_WITH_IMM),
				 "IBV_WC_WITH_IMM set without immediate");
		rt_check_grh(dst.p, &wc, &d0, &d1);
		rt_check_data(dst.p + RT_GRH_LEN, src.p, len, "UD payload");
		rt_check_guard(dst.p + RT_GRH_LEN + len, RT_GUARD,
			       "past the UD payload");
	}

	/* reply through an AH made from the completion */
	rt_step("UD reply %s -> %s through ibv_create_ah_from_wc", d1.name,
		d0.name);
	back = ibv_create_ah_from_wc(d1.pd, &wc, (struct ibv_grh *)dst.p,
				     RT_PORT);
	RT_CHECK(back != NULL, "ibv_create_ah_from_wc: %s", strerror(errno));
	memset(src.p, RT_GUARD_BYTE, src.len);
	rt_fill_random(dst.p + 4096, 300);
	r = rt_sge(&src, 0, RT_GRH_LEN + 300 + RT_GUARD);
	rt_post_recv(&a, 1110, &r, 1);
	s = rt_sge(&dst, 4096, 300);
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 1111;
	wr.opcode = IBV_WR_SEND;
	wr.sg_list = &s;
	wr.num_sge = 1;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.ud.ah = back;
	wr.wr.ud.remote_qpn = wc.src_qp;
	wr.wr.ud.remote_qkey = RT_QKEY;
	ret = ibv_post_send(b.qp, &wr, &bad);
	RT_CHECK(ret == 0, "UD reply post: %s", strerror(ret));
	rt_expect_wc(b.scq, "UD reply sender", 1111, IBV_WC_SUCCESS,
		     IBV_WC_SEND);
	wc = rt_expect_wc(a.rcq, "UD reply receiver", 1110, IBV_WC_SUCCESS,
			  IBV_WC_RECV);
	RT_CHECK(wc.byte_len == 340 && wc.src_qp == b.qp->qp_num,
		 "reply: byte_len %u (340) src_qp 0x%x (0x%x)", wc.byte_len,
		 wc.src_qp, b.qp->qp_num);
	rt_check_grh(src.p, &wc, &d1, &d0);
	rt_check_data(src.p + RT_GRH_LEN, dst.p + 4096, 300, "UD reply");

	/* wrong Q_Key: dropped by the receiver, the receive stays posted */
	rt_step("UD SEND with a wrong Q_Key: not delivered");
	memset(dst.p, RT_GUARD_BYTE, dst.len);
	r = rt_sge(&dst, 0, 1024);
	rt_post_recv(&b, 1120, &r, 1);
	rt_fill_random(src.p, 64);
	s = rt_sge(&src, 0, 64);
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 1121;
	wr.opcode = IBV_WR_SEND;
	wr.sg_list = &s;
	wr.num_sge = 1;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = b.qp->qp_num;
	wr.wr.ud.remote_qkey = RT_QKEY ^ 0x1;
	ret = ibv_post_send(a.qp, &wr, &bad);
	RT_CHECK(ret == 0, "UD post: %s", strerror(ret));
	rt_expect_wc(a.scq, "UD sender (wrong Q_Key)", 1121, IBV_WC_SUCCESS,
		     IBV_WC_SEND);
	rt_expect_empty(b.rcq, 200, "receiver of a wrong-Q_Key datagram");
	rt_check_guard(dst.p, 1024, "receive buffer of a wrong-Q_Key "
		       "datagram");
	rt_step("UD SEND to a QPN that does not exist: not delivered");
	wr.wr_id = 1122;
	wr.wr.ud.remote_qkey = RT_QKEY;
	wr.wr.ud.remote_qpn = b.qp->qp_num ^ 0x800;
	ret = ibv_post_send(a.qp, &wr, &bad);
	RT_CHECK(ret == 0, "UD post: %s", strerror(ret));
	rt_expect_wc(a.scq, "UD sender (bad QPN)", 1122, IBV_WC_SUCCESS,
		     IBV_WC_SEND);
	rt_expect_empty(b.rcq, 100, "receiver of a datagram to another QPN");
	rt_step("UD SEND with the right Q_Key takes the same receive");
	rt_fill_random(src.p, 64);
	wr.wr_id = 1123;
	wr.wr.ud.remote_qpn = b.qp->qp_num;
	ret = ibv_post_send(a.qp, &wr, &bad);
	RT_CHECK(ret == 0, "UD post: %s", strerror(ret));
	rt_expect_wc(a.scq, "UD sender", 1123, IBV_WC_SUCCESS, IBV_WC_SEND);
	wc = rt_expect_wc(b.rcq, "UD receiver", 1120, IBV_WC_SUCCESS,
			  IBV_WC_RECV);
	RT_CHECK(wc.byte_len == 64 + RT_GRH_LEN, "byte_len %u", wc.byte_len);
	rt_check_data(dst.p + RT_GRH_LEN, src.p, 64, "UD payload after the "
		      "dropped ones");

	ret = ibv_destroy_ah(ah);
	RT_CHECK(ret == 0, "ibv_destroy_ah: %s", strerror(ret));
	ret = ibv_destroy_ah(back);
	RT_CHECK(ret == 0, "ibv_destroy_ah: %s", strerror(ret));
	rt_ep_destroy(&a);
	rt_ep_destroy(&b);
	rt_buf_free(&src);
	rt_buf_free(&dst);
	rt_dev_close(&d0);
	rt_dev_close(&d1);
}

/*
 * UD sends posted right before ibv_destroy_qp still go out (mckey -s -o
 * posts unsignalled datagrams, destroys its AH, then its QP): rxe sends
 * them inside ibv_post_send, rocepmd's destroys send what its lcore had
 * not taken.
 */
#define RT_UD_DESTROY_N	32

/* One UD SEND of src[off, off + len) to peer's QP, completed or not. */
static void
rt_ud_post(struct rt_ep *ep, struct ibv_ah *ah, const struct rt_ep *peer,
	   struct rt_buf *src, size_t off, size_t len, uint64_t wr_id,
	   unsigned int flags)
{
	struct ibv_send_wr wr, *bad;
	struct ibv_sge s = rt_sge(src, off, len);
	int ret;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id;
	wr.opcode = IBV_WR_SEND;
	wr.sg_list = &s;
	wr.num_sge = 1;
	wr.send_flags = flags;
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = peer->qp->qp_num;
	wr.wr.ud.remote_qkey = RT_QKEY;
	ret = ibv_post_send(ep->qp, &wr, &bad);
	RT_CHECK(ret == 0, "UD ibv_post_send: %s", strerror(ret));
}

static void
rt_case_ud_destroy_sends(void)
{
	const struct rt_ep_opts eo = { .type = IBV_QPT_UD,
				       .max_send_wr = RT_UD_DESTROY_N,
				       .max_recv_wr = RT_UD_DESTROY_N };
	const size_t len = 200, slot = RT_GRH_LEN + 256;
	struct rt_dev d0, d1;
	struct rt_ep a, b;
	struct rt_buf src, dst;
	struct ibv_ah_attr aa;
	struct ibv_ah *ah;
	struct ibv_sge r;
	struct ibv_wc wc;
	int round, i, ret;

	rt_dev_open(&d0, RT_DEV0);
	rt_dev_open(&d1, RT_DEV1);
	rt_ep_create(&b, &d1, &eo);
	rt_ud_up(&b);
	rt_buf_alloc(&src, &d0, RT_UD_DESTROY_N * len, IBV_ACCESS_LOCAL_WRITE);
	rt_buf_alloc(&dst, &d1, RT_UD_DESTROY_N * slot,
		     IBV_ACCESS_LOCAL_WRITE);
	rt_ah_attr(&aa, &d1.gid);
	for (round = 0; round < 2; round++) {
		rt_ep_create(&a, &d0, &eo);
		rt_ud_up(&a);
		ah = ibv_create_ah(d0.pd, &aa);
		RT_CHECK(ah != NULL, "ibv_create_ah to %s: %s", d1.name,
			 strerror(errno));
		rt_fill_random(src.p, src.len);
		if (round == 0) {
			/* The destroy waits for no ARP answer. */
			rt_step("one UD SEND, completed: the peer's address "
				"is resolved");
			r = rt_sge(&dst, 0, slot);
			rt_post_recv(&b, 2999, &r, 1);
			rt_ud_post(&a, ah, &b, &src, 0, len, 3999,
				   IBV_SEND_SIGNALED);
			rt_expect_wc(a.scq, "UD sender", 3999, IBV_WC_SUCCESS,
				     IBV_WC_SEND);
			rt_expect_wc(b.rcq, "UD receiver", 2999,
				     IBV_WC_SUCCESS, IBV_WC_RECV);
		}
		for (i = 0; i < RT_UD_DESTROY_N; i++) {
			r = rt_sge(&dst, (size_t)i * slot, slot);
			rt_post_recv(&b, 3000 + (uint64_t)i, &r, 1);
		}
		rt_step("post %d unsignalled UD SENDs, destroy %s at once",
			RT_UD_DESTROY_N, round == 0 ? "the QP" :
			"the AH, then the QP");
		for (i = 0; i < RT_UD_DESTROY_N; i++)
			rt_ud_post(&a, ah, &b, &src, (size_t)i * len, len,
				   4000 + (uint64_t)i, 0);
		if (round == 1) {
			ret = ibv_destroy_ah(ah);
			RT_CHECK(ret == 0, "ibv_destroy_ah: %s",
				 strerror(ret));
		}
		rt_ep_destroy(&a);
		if (round == 0) {
			ret = ibv_destroy_ah(ah);
			RT_CHECK(ret == 0, "ibv_destroy_ah: %s",
				 strerror(ret));
		}

		rt_step("the peer receives all %d, in order",
			RT_UD_DESTROY_N);
		for (i = 0; i < RT_UD_DESTROY_N; i++) {
			wc = rt_expect_wc(b.rcq, "UD receiver",
					  3000 + (uint64_t)i, IBV_WC_SUCCESS,
					  IBV_WC_RECV);
			RT_CHECK(wc.byte_len == len + RT_GRH_LEN, "datagram "
				 "%d: byte_len %u", i, wc.byte_len);
			rt_check_data(dst.p + (size_t)i * slot + RT_GRH_LEN,
				      src.p + (size_t)i * len, len,
				      "UD payload");
		}
		RT_CHECK(!rt_poll_wc(b.rcq, &wc, 0.2), "a datagram too many");
	}

	rt_ep_destroy(&b);
	rt_buf_free(&src);
	rt_buf_free(&dst);
	rt_dev_close(&d0);
	rt_dev_close(&d1);
}

/* ----------------------------------------------------- completion channel */

static int rt_magic_scq = 0x5c;
static int rt_magic_rcq = 0x7c;

struct rt_destroy_arg {
	struct ibv_cq *cq;
	atomic_int done;
	int ret;
};

static void *
rt_destroy_thread(void *p)
{
	struct rt_destroy_arg *d = p;

	d->ret = ibv_destroy_cq(d->cq);
	atomic_store(&d->done, 1);
	return NULL;
}

/*
 * More CQs on one channel than one pass checks the arms of at its end
 * (RP_SHARD_NOTIFY, rp_cq.c): a SEND to each of RT_CHAN_MANY receivers,
 * all posted before any is awaited, so that passes complete into many
 * CQs at once.  Exactly one event per armed CQ, none lost, none twice.
 */
#define RT_CHAN_MANY	40

static void
rt_chan_many(struct rt_dev *d0, struct rt_dev *d1,
	     struct ibv_comp_channel *ch, struct rt_buf *abuf,
	     struct rt_buf *bbuf)
{
	static struct rt_ep sa[RT_CHAN_MANY], rb[RT_CHAN_MANY];
	static int ctxs[RT_CHAN_MANY];
	bool seen[RT_CHAN_MANY] = { false };
	struct rt_ep_opts eo = { .type = IBV_QPT_RC };
	uint64_t ev0 = rt_stat(1, "completion_events");
	struct ibv_sge s, r;
	struct ibv_cq *cq;
	void *ctx;
	int i, k;

	rt_step("%d CQs on one channel, a SEND to each posted together: one "
		"event per CQ", RT_CHAN_MANY);
	for (i = 0; i < RT_CHAN_MANY; i++) {
		eo.chan = NULL;
		rt_ep_create(&sa[i], d0, &eo);
		eo.chan = ch;
		eo.rcq_ctx = &ctxs[i];
		eo.scq_ctx = NULL;
		rt_ep_create(&rb[i], d1, &eo);
		rt_rc_connect(&sa[i], &rb[i], &rt_rc_default);
		r = rt_sge(bbuf, 2048, 64);
		rt_post_recv(&rb[i], 200000 + (uint64_t)i, &r, 1);
		rt_arm(rb[i].rcq, 0);
	}
	s = rt_sge(abuf, 0, 32);
	for (i = 0; i < RT_CHAN_MANY; i++)
		rt_post_send(&sa[i], 300000 + (uint64_t)i, IBV_WR_SEND, &s, 1,
			     IBV_SEND_SIGNALED, 0, 0, 0);
	for (i = 0; i < RT_CHAN_MANY; i++) {
		RT_CHECK(rt_chan_readable(ch, (int)(rt_timeout_s * 1000)),
			 "%d CQs: %d events, then none within %.0f s",
			 RT_CHAN_MANY, i, rt_timeout_s);
		RT_CHECK(ibv_get_cq_event(ch, &cq, &ctx) == 0,
			 "ibv_get_cq_event: %s", strerror(errno));
		for (k = 0; k < RT_CHAN_MANY && ctx != &ctxs[k]; k++)
			;
		RT_CHECK(k < RT_CHAN_MANY && cq == rb[k].rcq && !seen[k],
			 "event %d names cq %p "
			 "ctx %p: not an armed CQ, or one already named", i,
			 (void *)cq, ctx);
		seen[k] = true;
	}
	rt_chan_expect_none(ch, RT_IDLE_MS, "after one event per CQ");
	printf("    %d events; the device counted %" PRIu64 "\n",
	       RT_CHAN_MANY, rt_stat(1, "completion_events") - ev0);
	for (i = 0; i < RT_CHAN_MANY; i++) {
		rt_expect_wc(sa[i].scq, "sender", 300000 + (uint64_t)i,
			     IBV_WC_SUCCESS, IBV_WC_SEND);
		rt_expect_wc(rb[i].rcq, "receiver", 200000 + (uint64_t)i,
			     IBV_WC_SUCCESS, IBV_WC_RECV);
		ibv_ack_cq_events(rb[i].rcq, 1);
		rt_ep_destroy(&sa[i]);
		rt_ep_destroy(&rb[i]);
	}
}

static void
rt_case_comp_channel(void)
{
	struct rt_dev d0, d1;
	struct rt_ep a, b;
	struct rt_ep_opts eo = { .type = IBV_QPT_RC };
	struct ibv_comp_channel *ch;
	struct rt_buf abuf, bbuf;
	struct ibv_sge s;
	struct ibv_wc wc;
	struct ibv_cq *cq;
	void *ctx;
	pthread_t th;
	struct rt_destroy_arg dt;
	bool got_s = false, got_r = false;
	double t0;
	int i, ret, fl;

	rt_dev_open(&d0, RT_DEV0);
	rt_dev_open(&d1, RT_DEV1);
	rt_step("channel on %s, both CQs of the receiver on it", d1.name);
	ch = ibv_create_comp_channel(d1.ctx);
	RT_CHECK(ch != NULL, "ibv_create_comp_channel: %s", strerror(errno));
	RT_CHECK(ch->context == d1.ctx && ch->fd >= 0, "channel context %s, "
		 "fd %d", ch->context == d1.ctx ? "right" : "wrong", ch->fd);
	rt_ep_create(&a, &d0, &eo);
	eo.chan = ch;
	eo.scq_ctx = &rt_magic_scq;
	eo.rcq_ctx = &rt_magic_rcq;
	rt_ep_create(&b, &d1, &eo);
	RT_CHECK(b.rcq->channel == ch && b.rcq->cq_context == &rt_magic_rcq,
		 "cq->channel / cq->cq_context not as created");
	rt_rc_connect(&a, &b, &rt_rc_default);
	rt_buf_alloc(&abuf, &d0, 4096, RT_ACCESS_ALL);
	rt_buf_alloc(&bbuf, &d1, 4096, RT_ACCESS_ALL);

	rt_step("O_NONBLOCK channel with nothing queued: EAGAIN, not "
		"readable");
	fl = fcntl(ch->fd, F_GETFL);
	RT_CHECK(fl >= 0 && fcntl(ch->fd, F_SETFL, fl | O_NONBLOCK) == 0,
		 "fcntl O_NONBLOCK on the channel fd: %s", strerror(errno));
	rt_chan_expect_none(ch, 0, "fresh channel");

	rt_step("no arm: a completion raises no event");
	rt_chan_send(&a, &b, &abuf, &bbuf, 0, true, 10);
	rt_chan_expect_none(ch, RT_IDLE_MS, "completion on an unarmed CQ");

	rt_step("arm (any): one SEND raises one event naming the CQ and its "
		"context");
	rt_arm(b.rcq, 0);
	rt_chan_send(&a, &b, &abuf, &bbuf, 0, false, 20);
	rt_chan_expect_event(ch, b.rcq, &rt_magic_rcq, "armed receive CQ");
	rt_expect_wc(b.rcq, "receiver after the event", 20, IBV_WC_SUCCESS,
		     IBV_WC_RECV);
	ibv_ack_cq_events(b.rcq, 1);
	rt_chan_expect_none(ch, 0, "after consuming the one event");

	rt_step("arm once, two completions: exactly one event (one-shot)");
	rt_arm(b.rcq, 0);
	rt_chan_send(&a, &b, &abuf, &bbuf, 0, true, 30);
	rt_chan_send(&a, &b, &abuf, &bbuf, 0, true, 40);
	rt_chan_expect_event(ch, b.rcq, &rt_magic_rcq, "one-shot arm");
	rt_chan_expect_none(ch, RT_IDLE_MS, "second completion of a one-shot "
			    "arm");
	ibv_ack_cq_events(b.rcq, 1);

	rt_step("blocking ibv_get_cq_event");
	RT_CHECK(fcntl(ch->fd, F_SETFL, fl & ~O_NONBLOCK) == 0,
		 "fcntl: %s", strerror(errno));
	rt_arm(b.rcq, 0);
	rt_chan_send(&a, &b, &abuf, &bbuf, 0, false, 50);
	cq = NULL;
	ctx = NULL;
	ret = ibv_get_cq_event(ch, &cq, &ctx);	/* the watchdog bounds it */
	RT_CHECK(ret == 0 && cq == b.rcq && ctx == &rt_magic_rcq,
		 "blocking ibv_get_cq_event: ret %d (%s), cq %s, ctx %s", ret,
		 strerror(errno), cq == b.rcq ? "right" : "wrong",
		 ctx == &rt_magic_rcq ? "right" : "wrong");
	rt_expect_wc(b.rcq, "receiver", 50, IBV_WC_SUCCESS, IBV_WC_RECV);
	ibv_ack_cq_events(b.rcq, 1);
	RT_CHECK(fcntl(ch->fd, F_SETFL, fl | O_NONBLOCK) == 0, "fcntl: %s",
		 strerror(errno));

	rt_step("solicited-only arm: an unsolicited SEND raises nothing");
	rt_arm(b.rcq, 1);
	rt_chan_send(&a, &b, &abuf, &bbuf, 0, true, 60);
	rt_chan_expect_none(ch, 2 * RT_IDLE_MS, "unsolicited completion on a "
			    "solicited-only arm");
	rt_step("solicited-only arm: IBV_SEND_SOLICITED raises the event");
	rt_chan_send(&a, &b, &abuf, &bbuf, IBV_SEND_SOLICITED, false, 70);
	rt_chan_expect_event(ch, b.rcq, &rt_magic_rcq, "solicited SEND");
	rt_expect_wc(b.rcq, "receiver", 70, IBV_WC_SUCCESS, IBV_WC_RECV);
	ibv_ack_cq_events(b.rcq, 1);
	rt_chan_expect_none(ch, 0, "after the solicited event");

	rt_step("solicited-only arm: WRITE_WITH_IMM with IBV_SEND_SOLICITED "
		"raises the event");
	rt_arm(b.rcq, 1);
	rt_post_recv(&b, 80, NULL, 0);
	s = rt_sge(&abuf, 0, 100);
	rt_post_send(&a, 81, IBV_WR_RDMA_WRITE_WITH_IMM, &s, 1,
		     IBV_SEND_SIGNALED | IBV_SEND_SOLICITED, 0x1234,
		     (uintptr_t)bbuf.p + 1024, bbuf.mr->rkey);
	rt_expect_wc(a.scq, "writer", 81, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	rt_chan_expect_event(ch, b.rcq, &rt_magic_rcq, "solicited "
			     "WRITE_WITH_IMM");
	rt_expect_wc(b.rcq, "responder", 80, IBV_WC_SUCCESS,
		     IBV_WC_RECV_RDMA_WITH_IMM);
	ibv_ack_cq_events(b.rcq, 1);

	rt_step("arm solicited-only, then any: widened, an unsolicited SEND "
		"fires");
	rt_arm(b.rcq, 1);
	rt_arm(b.rcq, 0);
	rt_chan_send(&a, &b, &abuf, &bbuf, 0, false, 90);
	rt_chan_expect_event(ch, b.rcq, &rt_magic_rcq, "widened arm");
	rt_expect_wc(b.rcq, "receiver", 90, IBV_WC_SUCCESS, IBV_WC_RECV);
	ibv_ack_cq_events(b.rcq, 1);

	rt_step("two CQs on one channel: one event each, FIFO");
	rt_arm(b.rcq, 0);
	rt_arm(b.scq, 0);
	rt_chan_send(&a, &b, &abuf, &bbuf, 0, false, 100);	/* b.rcq */
	rt_chan_send(&b, &a, &bbuf, &abuf, 0, true, 110);	/* b.scq */
	for (i = 0; i < 2; i++) {
		RT_CHECK(rt_chan_readable(ch, (int)(rt_timeout_s * 1000)),
			 "two CQs: event %d missing", i + 1);
		ret = ibv_get_cq_event(ch, &cq, &ctx);
		RT_CHECK(ret == 0, "ibv_get_cq_event: %s", strerror(errno));
		if (cq == b.rcq && ctx == &rt_magic_rcq && !got_r)
			got_r = true;
		else if (cq == b.scq && ctx == &rt_magic_scq && !got_s)
			got_s = true;
		else
			RT_FAIL("two CQs: event %d names cq %p ctx %p (rcq "
				"%p, scq %p)", i + 1, (void *)cq, ctx,
				(void *)b.rcq, (void *)b.scq);
	}
	rt_chan_expect_none(ch, RT_IDLE_MS, "after the two events");
	rt_expect_wc(b.rcq, "receiver", 100, IBV_WC_SUCCESS, IBV_WC_RECV);
	ibv_ack_cq_events(b.rcq, 1);
	ibv_ack_cq_events(b.scq, 1);

	rt_chan_many(&d0, &d1, ch, &abuf, &bbuf);

	rt_step("race: arm, re-poll, 1000 rounds, no lost wake-up");
	for (i = 0; i < 1000; i++) {
		uint64_t id = 10000 + 2 * (uint64_t)i;

		rt_arm(b.rcq, 0);
		/* the man page loop: arm, then poll once more */
		RT_CHECK(ibv_poll_cq(b.rcq, 1, &wc) == 0, "round %d: a "
			 "completion before anything was sent", i);
		rt_chan_send(&a, &b, &abuf, &bbuf, 0, false, id);
		rt_chan_expect_event(ch, b.rcq, &rt_magic_rcq, "race round");
		rt_expect_wc(b.rcq, "race receiver", id, IBV_WC_SUCCESS,
			     IBV_WC_RECV);
		ibv_ack_cq_events(b.rcq, 1);
	}

	/*
	 * Error completions are solicited: the receiver's send CQ, armed
	 * solicited-only, fires on IBV_WC_REM_ACCESS_ERR.  That event is
	 * left unacked for the destroy checks below.
	 */
	rt_step("solicited-only arm fires on an error completion "
		"(REM_ACCESS_ERR)");
	rt_arm(b.scq, 1);
	s = rt_sge(&bbuf, 0, 16);
	rt_post_send(&b, 120, IBV_WR_RDMA_WRITE, &s, 1, IBV_SEND_SIGNALED, 0,
		     (uintptr_t)abuf.p, abuf.mr->rkey ^ 0x40);
	rt_chan_expect_event(ch, b.scq, &rt_magic_scq, "error completion on "
			     "a solicited-only arm");
	rt_expect_wc(b.scq, "bad WRITE", 120, IBV_WC_REM_ACCESS_ERR, -1);

	rt_step("ibv_destroy_comp_channel while CQs use it: EBUSY");
	ret = ibv_destroy_comp_channel(ch);
	RT_CHECK(ret == EBUSY, "ibv_destroy_comp_channel with 2 CQs on it "
		 "returned %d (%s), expected EBUSY", ret,
		 ret ? strerror(ret) : "success");
	RT_CHECK(rt_chan_readable(ch, 0) == false, "channel fd broken or "
		 "readable after the refused destroy");

	rt_step("ibv_destroy_cq waits until its delivered event is acked");
	ret = ibv_destroy_qp(b.qp);
	RT_CHECK(ret == 0, "ibv_destroy_qp: %s", strerror(ret));
	dt.cq = b.scq;
	dt.ret = -1;
	atomic_init(&dt.done, 0);
	ret = pthread_create(&th, NULL, rt_destroy_thread, &dt);
	RT_CHECK(ret == 0, "pthread_create: %s", strerror(ret));
	rt_sleep_ms(200);
	RT_CHECK(atomic_load(&dt.done) == 0, "ibv_destroy_cq returned (%d) "
		 "while a delivered event was not acked (CC-8)", dt.ret);
	ibv_ack_cq_events(b.scq, 1);
	t0 = rt_now();
	while (atomic_load(&dt.done) == 0 && rt_now() - t0 < rt_timeout_s)
		rt_sleep_ms(1);
	RT_CHECK(atomic_load(&dt.done) == 1, "ibv_destroy_cq still blocked "
		 "%.0f s after the ack", rt_timeout_s);
	pthread_join(th, NULL);
	RT_CHECK(dt.ret == 0, "ibv_destroy_cq: %s", strerror(dt.ret));
	ret = ibv_destroy_comp_channel(ch);
	RT_CHECK(ret == EBUSY, "ibv_destroy_comp_channel with 1 CQ left "
		 "returned %d, expected EBUSY", ret);
	ret = ibv_destroy_cq(b.rcq);
	RT_CHECK(ret == 0, "ibv_destroy_cq (receive CQ): %s", strerror(ret));
	rt_step("ibv_destroy_comp_channel once no CQ uses it");
	ret = ibv_destroy_comp_channel(ch);
	RT_CHECK(ret == 0, "ibv_destroy_comp_channel: %d (%s)", ret,
		 strerror(ret));

	rt_ep_destroy(&a);
	rt_buf_free(&abuf);
	rt_buf_free(&bbuf);
	rt_dev_close(&d0);
	rt_dev_close(&d1);
}

/* ------------------------------------------------------------- many_wrs */

#define RT_MANY_N	100000u	/* messages each way in many_wrs */
#define RT_MANY_WIN	64u
#define RT_MANY_LEN	64u
#define RT_MANY_RQ	128u

/* One direction of traffic: tx sends, rx receives. */
struct rt_flow {
	const char *name;
	uint64_t n;			/* messages to send */
	struct rt_ep *tx;
	struct rt_ep *rx;
	struct rt_buf sbuf;		/* RT_MANY_WIN slots */
	struct rt_buf rbuf;		/* RT_MANY_RQ slots */
	uint64_t posted;		/* sends posted */
	uint64_t sent;			/* send completions */
	uint64_t recv_posted;
	uint64_t recvd;			/* receive completions */
	uint64_t salt;
	double last_progress;
};

static void
rt_many_payload(const struct rt_flow *f, uint64_t seq, uint8_t *p)
{
	uint64_t s = f->salt ^ (seq * 0x9e3779b97f4a7c15ull) ^ 1;
	unsigned int i;

	memcpy(p, &seq, 8);
	for (i = 8; i < RT_MANY_LEN; i += 8) {
		uint64_t v = rt_rand64(&s);

		memcpy(p + i, &v, 8);
	}
}

static void
rt_many_post_recv(struct rt_flow *f)
{
	struct ibv_sge r = rt_sge(&f->rbuf, (f->recv_posted % RT_MANY_RQ) *
				  RT_MANY_LEN, RT_MANY_LEN);
	struct ibv_recv_wr wr = {
		.wr_id = f->recv_posted,
		.sg_list = &r,
		.num_sge = 1,
	}, *bad;
	int ret = ibv_post_recv(f->rx->qp, &wr, &bad);

	RT_CHECK(ret == 0, "%s: ibv_post_recv of receive %" PRIu64 ": %s, "
		 "with %" PRIu64 " receives outstanding (posted minus "
		 "completions polled), max_recv_wr %u", f->name,
		 f->recv_posted, strerror(ret), f->recv_posted - f->recvd,
		 RT_MANY_RQ);
	f->recv_posted++;
}

static void
rt_many_init(struct rt_flow *f, const char *name, struct rt_ep *tx,
	     struct rt_ep *rx, uint64_t n)
{
	memset(f, 0, sizeof(*f));
	f->name = name;
	f->n = n;
	f->tx = tx;
	f->rx = rx;
	f->salt = rt_rand64(&rt_rng);
	rt_buf_alloc(&f->sbuf, tx->dev, RT_MANY_WIN * RT_MANY_LEN,
		     IBV_ACCESS_LOCAL_WRITE);
	rt_buf_alloc(&f->rbuf, rx->dev, RT_MANY_RQ * RT_MANY_LEN,
		     IBV_ACCESS_LOCAL_WRITE);
	while (f->recv_posted < RT_MANY_RQ && f->recv_posted < n)
		rt_many_post_recv(f);
	f->last_progress = rt_now();
}

/* One pass over a flow: post what the window allows, reap completions. */
static bool
rt_many_step(struct rt_flow *f)
{
	struct ibv_wc wc[32];
	uint8_t exp[RT_MANY_LEN];
	bool progress = false;
	int n, i;

	/* the window bounds both unacked sends and unreaped receives */
	while (f->posted < f->n && f->posted - f->sent < RT_MANY_WIN &&
	       f->posted - f->recvd < RT_MANY_WIN) {
		uint8_t *p = f->sbuf.p + (f->posted % RT_MANY_WIN) *
			RT_MANY_LEN;
		struct ibv_sge s;

		rt_many_payload(f, f->posted, p);
		s = rt_sge(&f->sbuf, (f->posted % RT_MANY_WIN) * RT_MANY_LEN,
			   RT_MANY_LEN);
		rt_post_send(f->tx, f->posted, IBV_WR_SEND, &s, 1,
			     IBV_SEND_SIGNALED, 0, 0, 0);
		f->posted++;
	}

	n = ibv_poll_cq(f->tx->scq, 32, wc);
	RT_CHECK(n >= 0, "%s: ibv_poll_cq (send): %d", f->name, n);
	for (i = 0; i < n; i++) {
		RT_CHECK(wc[i].status == IBV_WC_SUCCESS, "%s: send %" PRIu64
			 ": %s", f->name, wc[i].wr_id,
			 ibv_wc_status_str(wc[i].status));
		RT_CHECK(wc[i].wr_id == f->sent, "%s: send completion wr_id %"
			 PRIu64 ", expected %" PRIu64 " (lost, duplicated or "
			 "out of order)", f->name, wc[i].wr_id, f->sent);
		RT_CHECK(wc[i].wr_id < f->posted, "%s: completion for a send "
			 "never posted", f->name);
		RT_CHECK(wc[i].opcode == IBV_WC_SEND, "%s: opcode %d",
			 f->name, (int)wc[i].opcode);
		f->sent++;
	}
	progress |= n > 0;

	n = ibv_poll_cq(f->rx->rcq, 32, wc);
	RT_CHECK(n >= 0, "%s: ibv_poll_cq (recv): %d", f->name, n);
	for (i = 0; i < n; i++) {
		const uint8_t *got;

		RT_CHECK(wc[i].status == IBV_WC_SUCCESS, "%s: receive %" PRIu64
			 ": %s", f->name, wc[i].wr_id,
			 ibv_wc_status_str(wc[i].status));
		RT_CHECK(wc[i].wr_id == f->recvd, "%s: receive completion "
			 "wr_id %" PRIu64 ", expected %" PRIu64, f->name,
			 wc[i].wr_id, f->recvd);
		RT_CHECK(wc[i].byte_len == RT_MANY_LEN && wc[i].opcode ==
			 IBV_WC_RECV, "%s: receive %" PRIu64 ": byte_len %u "
			 "opcode %d", f->name, f->recvd, wc[i].byte_len,
			 (int)wc[i].opcode);
		got = f->rbuf.p + (f->recvd % RT_MANY_RQ) * RT_MANY_LEN;
		rt_many_payload(f, f->recvd, exp);
		if (memcmp(got, exp, RT_MANY_LEN) != 0) {
			uint64_t seq;

			memcpy(&seq, got, 8);
			RT_FAIL("%s: message %" PRIu64 " carries sequence %"
				PRIu64 "%s", f->name, f->recvd, seq,
				seq == f->recvd ? " but a wrong pattern" : "");
		}
		f->recvd++;
		if (f->recv_posted < f->n)
			rt_many_post_recv(f);
	}
	progress |= n > 0;
	if (progress)
		f->last_progress = rt_now();
	else
		RT_CHECK(rt_now() - f->last_progress < rt_timeout_s,
			 "%s: no progress for %.0f s: %" PRIu64 " posted, %"
			 PRIu64 " send completions, %" PRIu64 " receive "
			 "completions", f->name, rt_timeout_s, f->posted,
			 f->sent, f->recvd);
	return progress;
}

/* n SENDs of 64 B each way between a and b at once, checked. */
static void
rt_many_run(struct rt_ep *a, struct rt_ep *b, uint64_t n)
{
	struct rt_flow ab, ba;
	double t0, dt;
	unsigned int idle = 0;

	rt_step("%" PRIu64 " SENDs of %u B each way, window %u, every "
		"completion once and in order", n, RT_MANY_LEN, RT_MANY_WIN);
	rt_many_init(&ab, "rocepmd0->rocepmd1", a, b, n);
	rt_many_init(&ba, "rocepmd1->rocepmd0", b, a, n);
	t0 = rt_now();
	while (ab.sent < n || ab.recvd < n || ba.sent < n || ba.recvd < n) {
		bool p = rt_many_step(&ab);

		p |= rt_many_step(&ba);
		if (!p && ++idle > 64) {
			sched_yield();
			idle = 0;
		}
	}
	dt = rt_now() - t0;
	printf("    %" PRIu64 " messages each way in %.2f s: %.0f messages/s "
	       "in total\n", n, dt, 2.0 * (double)n / dt);
	rt_step("no completion beyond the last one");
	rt_expect_empty(a->scq, RT_IDLE_MS, "sender CQ after the run");
	rt_expect_empty(b->scq, 0, "sender CQ after the run");
	rt_expect_empty(a->rcq, 0, "receiver CQ after the run");
	rt_expect_empty(b->rcq, 0, "receiver CQ after the run");
	rt_buf_free(&ab.sbuf);
	rt_buf_free(&ab.rbuf);
	rt_buf_free(&ba.sbuf);
	rt_buf_free(&ba.rbuf);
}

static const struct rt_ep_opts rt_many_eo = {
	.type = IBV_QPT_RC,
	.max_send_wr = 2 * RT_MANY_WIN,
	.max_recv_wr = RT_MANY_RQ,
};

static void
rt_case_many_wrs(void)
{
	struct rt_dev d0, d1;
	struct rt_ep a, b;

	rt_dev_open(&d0, RT_DEV0);
	rt_dev_open(&d1, RT_DEV1);
	rt_ep_create(&a, &d0, &rt_many_eo);
	rt_ep_create(&b, &d1, &rt_many_eo);
	rt_rc_connect(&a, &b, &rt_rc_default);
	rt_many_run(&a, &b, RT_MANY_N);
	rt_ep_destroy(&a);
	rt_ep_destroy(&b);
	rt_dev_close(&d0);
	rt_dev_close(&d1);
}

/*
 * Under the faults of two-ports-lossy.ini.in (drop, duplicate, reorder,
 * corrupt): go-back-N, NAKs, the retransmission timer and the ICRC check
 * must still deliver everything exactly once, in order, intact.
 */
/* What the faults of two-ports-lossy.ini.in make the engine do. */
static const uint32_t rt_loss_lossy =
	RT_NEED(RT_L_RETX) | RT_NEED(RT_L_NAK_SENT) | RT_NEED(RT_L_NAK_RCVD) |
	RT_NEED(RT_L_DUP) | RT_NEED(RT_L_ICRC) | RT_NEED(RT_L_F_DROP) |
	RT_NEED(RT_L_F_DUP) | RT_NEED(RT_L_F_CORRUPT) |
	RT_NEED(RT_L_F_REORDER) | RT_NEED(RT_L_F_DELAY);

static void
rt_case_rc_lossy(void)
{
	struct rt_rc_opts o = rt_rc_default;
	struct rt_dev d0, d1;
	struct rt_ep a, b;
	struct rt_loss l;

	o.timeout = 10;		/* 4 ms: tail losses wait for the timer */
	rt_dev_open(&d0, RT_DEV0);
	rt_dev_open(&d1, RT_DEV1);
	rt_rc_pair_wrap(&a, &d0, &b, &d1, &o);
	rt_rc_send_checks(&a, &b, 65536);
	rt_rc_write_checks(&a, &b, 65536, false);
	rt_rc_write_checks(&b, &a, 65536, true);
	rt_rc_read_checks(&a, &b, 65536);
	rt_rc_read_checks(&b, &a, d0.mtu + 1);
	rt_ep_destroy(&a);
	rt_ep_destroy(&b);

	rt_ep_create(&a, &d0, &rt_many_eo);
	rt_ep_create(&b, &d1, &rt_many_eo);
	rt_rc_connect(&a, &b, &o);
	rt_many_run(&a, &b, 20000);
	rt_step("counters: every recovery mechanism ran, both sides agree");
	rt_loss_read(&l);
	rt_loss_check(&l, rt_loss_lossy);
	/* Frames the faults hold, copy or corrupt were made whole first:
	 * none refers to registered memory past its pass (rp_port.c). */
	for (unsigned int d = 0; d < 2; d++) {
		uint64_t zc = rt_stat(d, "tx_zero_copy");
		uint64_t copied = rt_stat(d, "tx_zero_copy_copied");

		printf("    rocepmd%u: tx_zero_copy %" PRIu64
		       ", made whole %" PRIu64 "\n", d, zc, copied);
		RT_CHECK(zc > 0 && copied == zc, "rocepmd%u: %" PRIu64
			 " frames from registered memory, %" PRIu64
			 " made whole before the faults", d, zc, copied);
	}
	/* Both ends keep what follows a gap and resend single packets
	 * (selective_retx in two-ports-lossy.ini.in, rp_sr.c). */
	for (unsigned int d = 0; d < 2; d++) {
		uint64_t kept = rt_stat(d, "sr_kept");
		uint64_t one = rt_stat(1 - d, "sr_resent");

		printf("    rocepmd%u: sr_kept %" PRIu64 "; rocepmd%u: "
		       "sr_resent %" PRIu64 "\n", d, kept, 1 - d, one);
		RT_CHECK(kept > 0 && one > 0, "selective retransmission to "
			 "rocepmd%u: %" PRIu64 " kept, %" PRIu64 " resent alone",
			 d, kept, one);
	}
	rt_ep_destroy(&a);
	rt_ep_destroy(&b);
	rt_dev_close(&d0);
	rt_dev_close(&d1);
}

/*
 * rc_lossy_order: the send CQ of an RC QP under go-back-N.  Mixed SEND,
 * WRITE and READ of 1 to 3 packets, one in four signaled (IBTA:
 * completions of an RC send queue come in posting order, and a signaled
 * one implies every unsignaled one before it), under the faults of
 * two-ports-lossy.ini.in, so that NAK and timer rewinds, ACKs coalescing
 * several WQEs and READs re-requested whole all happen while WQEs are
 * retired.  Each completion must be the next signaled WR, each READ it
 * implies must have its data, and nothing may complete twice.
 */
#define RT_ORD_N	20000u	/* work requests */
#define RT_ORD_WIN	32u	/* posted and not yet implied complete */
#define RT_ORD_SLOT	4096u	/* READ or receive buffer, > 3 MTUs */
#define RT_ORD_RQ	64u	/* receives kept posted, > RT_ORD_WIN */

struct rt_ord_wr {
	enum ibv_wr_opcode op;
	uint32_t len;
	uint32_t roff;		/* READ source offset on the responder */
	uint32_t soff;		/* SEND or WRITE source offset */
	bool sig;
};

/* The WRs implied complete up to and including `upto`: READ data there. */
static void
rt_ord_retire(const struct rt_ord_wr *w, uint64_t from, uint64_t upto,
	      const struct rt_buf *dst, const struct rt_buf *src)
{
	for (uint64_t j = from; j <= upto; j++) {
		char what[64];

		if (w[j].op != IBV_WR_RDMA_READ)
			continue;
		snprintf(what, sizeof(what), "READ %" PRIu64 " (%s)", j,
			 w[j].sig ? "signaled" : "implied by a later CQE");
		rt_check_data(dst->p + (j % RT_ORD_WIN) * RT_ORD_SLOT,
			      src->p + w[j].roff, w[j].len, what);
	}
}

static void
rt_case_rc_lossy_order(void)
{
	static const struct rt_ep_opts eo = {
		.type = IBV_QPT_RC,
		.max_send_wr = 2 * RT_ORD_WIN,
		.max_recv_wr = RT_ORD_RQ,
	};
	struct rt_rc_opts o = rt_rc_default;
	struct rt_buf sbuf, dst, tgt, src, rbuf;
	struct rt_ord_wr *w;
	struct rt_dev d0, d1;
	struct rt_ep a, b;
	struct rt_loss l;
	uint64_t posted = 0, done = 0, sends = 0, recvd = 0, cqes = 0;
	unsigned int max_batch = 0;
	uint64_t rng = rt_seed | 1;
	uint32_t mtu;
	double t0;

	o.timeout = 10;		/* 4 ms: tail losses wait for the timer */
	rt_dev_open(&d0, RT_DEV0);
	rt_dev_open(&d1, RT_DEV1);
	mtu = d0.mtu;
	RT_CHECK(3 * mtu + 1 <= RT_ORD_SLOT, "MTU %u too large", mtu);
	rt_ep_create(&a, &d0, &eo);
	rt_ep_create(&b, &d1, &eo);
	rt_rc_connect(&a, &b, &o);
	rt_buf_alloc(&sbuf, &d0, 65536, IBV_ACCESS_LOCAL_WRITE);
	rt_buf_alloc(&dst, &d0, RT_ORD_WIN * RT_ORD_SLOT,
		     IBV_ACCESS_LOCAL_WRITE);
	rt_buf_alloc(&tgt, &d1, 65536, RT_ACCESS_ALL);
	rt_buf_alloc(&src, &d1, 65536, RT_ACCESS_ALL);
	rt_buf_alloc(&rbuf, &d1, RT_ORD_RQ * RT_ORD_SLOT,
		     IBV_ACCESS_LOCAL_WRITE);
	rt_fill_random(sbuf.p, sbuf.len);
	rt_fill_random(src.p, src.len);
	w = calloc(RT_ORD_N, sizeof(*w));
	RT_CHECK(w != NULL, "calloc");
	for (uint64_t i = 0; i < RT_ORD_RQ; i++) {
		struct ibv_sge r = rt_sge(&rbuf, i * RT_ORD_SLOT,
					  RT_ORD_SLOT);

		rt_post_recv(&b, i, &r, 1);
	}

	rt_step("%u SEND/WRITE/READ of 1..3 packets, 1 in 4 signaled, "
		"window %u, under drop/dup/reorder/corrupt: every send CQE "
		"the next signaled WR", RT_ORD_N, RT_ORD_WIN);
	t0 = rt_now();
	while (done < RT_ORD_N) {
		struct ibv_wc wc[16];
		int n;

		while (posted < RT_ORD_N && posted - done < RT_ORD_WIN) {
			struct rt_ord_wr *x = &w[posted];
			uint64_t r = rt_rand64(&rng);
			struct ibv_sge sg;
			uint64_t raddr = 0;
			uint32_t rkey = 0;

			x->op = (r & 3) < 2 ? IBV_WR_SEND_WITH_IMM :
				(r & 3) == 2 ? IBV_WR_RDMA_WRITE :
				IBV_WR_RDMA_READ;
			x->len = 1 + (uint32_t)((r >> 8) % (3 * mtu));
			/* signal 1 in 4, and before the window closes */
			x->sig = ((r >> 32) & 3) == 0 ||
				posted - done == RT_ORD_WIN - 1 ||
				posted == RT_ORD_N - 1;
			if (x->op == IBV_WR_RDMA_READ) {
				x->roff = (uint32_t)((r >> 40) %
						     (src.len - x->len));
				sg = rt_sge(&dst, (posted % RT_ORD_WIN) *
					    RT_ORD_SLOT, x->len);
				raddr = (uintptr_t)(src.p + x->roff);
				rkey = src.mr->rkey;
			} else {
				x->soff = (uint32_t)((r >> 40) %
						     (sbuf.len - x->len));
				sg = rt_sge(&sbuf, x->soff, x->len);
				if (x->op == IBV_WR_RDMA_WRITE) {
					raddr = (uintptr_t)tgt.p;
					rkey = tgt.mr->rkey;
				}
			}
			rt_post_send(&a, posted, x->op, &sg, 1,
				     x->sig ? IBV_SEND_SIGNALED : 0,
				     (uint32_t)posted, raddr, rkey);
			posted++;
		}

		n = ibv_poll_cq(a.scq, 16, wc);
		RT_CHECK(n >= 0, "ibv_poll_cq (send): %d", n);
		if ((unsigned int)n > max_batch)
			max_batch = (unsigned int)n;
		for (int i = 0; i < n; i++) {
			uint64_t next = done;
			int op;

			while (next < posted && !w[next].sig)
				next++;
			RT_CHECK(next < posted, "send completion wr_id %"
				 PRIu64 " (%s) with every WR up to %" PRIu64
				 " already complete: doubled or never posted",
				 wc[i].wr_id, ibv_wc_status_str(wc[i].status),
				 posted - 1);
			RT_CHECK(wc[i].status == IBV_WC_SUCCESS &&
				 wc[i].wr_id == next, "send completion wr_id %"
				 PRIu64 " (entry %d of %d polled): %s, expected "
				 "the next signaled WR %" PRIu64 " (lost, "
				 "doubled or out of order)", wc[i].wr_id, i, n,
				 ibv_wc_status_str(wc[i].status), next);
			op = w[next].op == IBV_WR_RDMA_READ ? IBV_WC_RDMA_READ :
				w[next].op == IBV_WR_RDMA_WRITE ?
				IBV_WC_RDMA_WRITE : IBV_WC_SEND;
			RT_CHECK((int)wc[i].opcode == op, "WR %" PRIu64
				 ": opcode %s, expected %s", next,
				 rt_wc_opcode_str(wc[i].opcode),
				 rt_wc_opcode_str(op));
			RT_CHECK(op != IBV_WC_RDMA_READ ||
				 wc[i].byte_len == w[next].len, "READ %"
				 PRIu64 ": byte_len %u, expected %u", next,
				 wc[i].byte_len, w[next].len);
			rt_ord_retire(w, done, next, &dst, &src);
			done = next + 1;
			cqes++;
		}

		n = ibv_poll_cq(b.rcq, 16, wc);
		RT_CHECK(n >= 0, "ibv_poll_cq (recv): %d", n);
		for (int i = 0; i < n; i++) {
			struct ibv_sge r;

			while (sends < posted &&
			       w[sends].op != IBV_WR_SEND_WITH_IMM)
				sends++;
			RT_CHECK(wc[i].status == IBV_WC_SUCCESS &&
				 wc[i].wr_id == recvd % RT_ORD_RQ &&
				 sends < posted &&
				 be32toh(wc[i].imm_data) == sends &&
				 wc[i].byte_len == w[sends].len,
				 "receive %" PRIu64 ": %s, immediate %u, %u B, "
				 "expected the SEND of WR %" PRIu64 " (%u B)",
				 recvd, ibv_wc_status_str(wc[i].status),
				 be32toh(wc[i].imm_data), wc[i].byte_len,
				 sends, w[sends].len);
			r = rt_sge(&rbuf, wc[i].wr_id * RT_ORD_SLOT,
				   RT_ORD_SLOT);
			rt_check_data(rbuf.p + wc[i].wr_id * RT_ORD_SLOT,
				      sbuf.p + w[sends].soff, w[sends].len,
				      "SEND payload");
			rt_post_recv(&b, wc[i].wr_id, &r, 1);
			sends++;
			recvd++;
		}
		if (n == 0)
			sched_yield();
	}
	printf("    %u WRs in %.2f s: %" PRIu64 " send CQEs, up to %u in one "
	       "poll, %" PRIu64 " SENDs received\n", RT_ORD_N, rt_now() - t0,
	       cqes, max_batch, recvd);
	rt_step("no completion beyond the last one");
	rt_expect_empty(a.scq, RT_IDLE_MS, "send CQ after the run");
	rt_expect_empty(a.rcq, 0, "requester receive CQ");
	rt_expect_empty(b.scq, 0, "responder send CQ");
	rt_step("counters: every recovery mechanism ran, both sides agree");
	rt_loss_read(&l);
	rt_loss_check(&l, rt_loss_lossy);
	free(w);
	rt_ep_destroy(&a);
	rt_ep_destroy(&b);
	rt_buf_free(&sbuf);
	rt_buf_free(&dst);
	rt_buf_free(&tgt);
	rt_buf_free(&src);
	rt_buf_free(&rbuf);
	rt_dev_close(&d0);
	rt_dev_close(&d1);
}

/*
 * Messages far larger than the send window (issue 9): RDMA WRITE a -> b,
 * RDMA READ back from b and SEND a -> b of `len` bytes each, data
 * verified.  At the configurations' 1024 MTU, 16 MiB is 16384 packets,
 * 64 times the window: the requester must stop at its edge and resume as
 * ACKs (or READ responses) come back, and under loss resume from the
 * missing PSN, not from the message's start.
 */
static void
rt_rc_large_checks(struct rt_ep *a, struct rt_ep *b, size_t len)
{
	struct rt_buf src, dst;
	struct ibv_sge ss, rs;
	struct ibv_wc wc;

	rt_buf_alloc(&src, a->dev, len, IBV_ACCESS_LOCAL_WRITE);
	rt_buf_alloc(&dst, b->dev, len, RT_ACCESS_ALL);

	rt_step("RDMA WRITE %zu B %s -> %s", len, a->dev->name, b->dev->name);
	rt_fill_random(src.p, len);
	ss = rt_sge(&src, 0, len);
	rt_post_send(a, 600, IBV_WR_RDMA_WRITE, &ss, 1, IBV_SEND_SIGNALED, 0,
		     (uintptr_t)dst.p, dst.mr->rkey);
	rt_expect_wc(a->scq, "requester", 600, IBV_WC_SUCCESS,
		     IBV_WC_RDMA_WRITE);
	rt_check_data(dst.p, src.p, len, "written data");

	rt_step("RDMA READ %zu B from %s into %s", len, b->dev->name,
		a->dev->name);
	rt_fill_random(dst.p, len);
	memset(src.p, RT_GUARD_BYTE, len);
	rt_post_send(a, 601, IBV_WR_RDMA_READ, &ss, 1, IBV_SEND_SIGNALED, 0,
		     (uintptr_t)dst.p, dst.mr->rkey);
	wc = rt_expect_wc(a->scq, "requester", 601, IBV_WC_SUCCESS,
			  IBV_WC_RDMA_READ);
	RT_CHECK(wc.byte_len == len, "READ byte_len %u, read %zu",
		 wc.byte_len, len);
	rt_check_data(src.p, dst.p, len, "read data");

	rt_step("SEND %zu B %s -> %s", len, a->dev->name, b->dev->name);
	rt_fill_random(src.p, len);
	memset(dst.p, RT_GUARD_BYTE, len);
	rs = rt_sge(&dst, 0, len);
	rt_post_recv(b, 602, &rs, 1);
	rt_post_send(a, 603, IBV_WR_SEND, &ss, 1, IBV_SEND_SIGNALED, 0, 0, 0);
	rt_expect_wc(a->scq, "sender", 603, IBV_WC_SUCCESS, IBV_WC_SEND);
	wc = rt_expect_wc(b->rcq, "receiver", 602, IBV_WC_SUCCESS,
			  IBV_WC_RECV);
	RT_CHECK(wc.byte_len == len, "SEND byte_len %u, sent %zu", wc.byte_len,
		 len);
	rt_check_data(dst.p, src.p, len, "received data");

	rt_expect_empty(a->rcq, 0, "requester receive CQ");
	rt_expect_empty(b->scq, 0, "responder send CQ");
	rt_buf_free(&src);
	rt_buf_free(&dst);
}

/*
 * rc_large (lossless memif) and rc_large_lossy (a light drop, duplicate,
 * reorder and corrupt rate): 1, 4 and 16 MiB WRITE, READ and SEND.  Under
 * loss a READ re-requested whole, or a timer resending from the message's
 * start, would almost never get 16384 packets through in a row; the retry
 * count is small so that such a stall fails instead of crawling.
 */
static void
rt_rc_large_case(bool lossy)
{
	static const size_t lens[] = { 1u << 20, 4u << 20, 16u << 20 };
	struct rt_rc_opts o = rt_rc_default;
	struct rt_dev d0, d1;
	struct rt_ep a, b;
	struct rt_loss l;

	o.timeout = 12;		/* 16 ms: tail losses wait for the timer */
	o.retry_cnt = 3;	/* timeouts in a row, progress resets it */
	rt_dev_open(&d0, RT_DEV0);
	rt_dev_open(&d1, RT_DEV1);
	rt_rc_pair_wrap(&a, &d0, &b, &d1, &o);
	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++)
		rt_rc_large_checks(&a, &b, lens[i]);
	rt_step("counters after the large messages");
	rt_loss_read(&l);
	rt_loss_check(&l, lossy ? RT_NEED(RT_L_RETX) | RT_NEED(RT_L_NAK_SENT) |
		      RT_NEED(RT_L_NAK_RCVD) | RT_NEED(RT_L_DUP) |
		      RT_NEED(RT_L_ICRC) : 0);
	for (unsigned int d = 0; d < 2; d++) {
		uint64_t to = l.c[d][RT_L_TIMEOUT];
		uint64_t rt = l.c[d][RT_L_RETX];

		if (!lossy) {
			/* Within the window nothing is lost on memif. */
			RT_CHECK(to == 0 && rt == 0, "rocepmd%u: %" PRIu64
				 " timeouts, %" PRIu64 " retransmits without "
				 "loss", d, to, rt);
		} else if (d == 0) {
			/* The requester: losses are recovered by NAKs and
			 * READ re-requests; the timer is the last resort
			 * (a lost tail or ACK: nine messages). */
			RT_CHECK(rt > 0, "no retransmission by the requester");
			RT_CHECK(to <= 12, "%" PRIu64 " retry timeouts for "
				 "%" PRIu64 " frames dropped", to,
				 l.c[0][RT_L_F_DROP] + l.c[1][RT_L_F_DROP]);
		}
	}
	rt_ep_destroy(&a);
	rt_ep_destroy(&b);
	rt_dev_close(&d0);
	rt_dev_close(&d1);
}

static void rt_case_rc_large(void) { rt_rc_large_case(false); }
static void rt_case_rc_large_lossy(void) { rt_rc_large_case(true); }

/* ---------------------------------------------------------------- IPv6 */

/* What test/engine/two-ports.ini.in gives rocepmd0 and rocepmd1. */
static const uint8_t rt_ipv6[2][16] = {
	{ 0x20, 0x01, 0x0d, 0xb8, [15] = 0x01 },
	{ 0x20, 0x01, 0x0d, 0xb8, [15] = 0x02 },
};

/* fe80::ff:fe00:N, the link-local address of MAC 02:00:00:00:00:0N. */
static void
rt_ll_of(uint8_t ll[16], uint8_t n)
{
	memset(ll, 0, 16);
	ll[0] = 0xfe;
	ll[1] = 0x80;
	ll[11] = 0xff;
	ll[12] = 0xfe;
	ll[15] = n;
}

/* The GID table: IPv4-mapped, link-local, the configured address. */
static void
rt_check_gid_table(struct rt_dev *d, unsigned int n)
{
	struct ibv_gid_entry e[RT_GID_INDEX_IPV6 + 4];
	union ibv_gid g, want[RT_GID_INDEX_IPV6 + 1];
	ssize_t got;
	int ret;

	rt_step("%s: GID table: ::ffff:192.0.2.%u, fe80::ff:fe00:%u, "
		"2001:db8::%u, RoCEv2; the rest empty", d->name, n + 1, n + 1,
		n + 1);
	rt_gid_v4(&want[0], n == 0 ? RT_IPV4_0 : RT_IPV4_1);
	rt_ll_of(want[1].raw, (uint8_t)(n + 1));
	memcpy(want[2].raw, rt_ipv6[n], 16);
	RT_CHECK(d->port.gid_tbl_len > RT_GID_INDEX_IPV6 + 1, "gid_tbl_len %d",
		 d->port.gid_tbl_len);
	for (int i = 0; i <= RT_GID_INDEX_IPV6; i++) {
		char a[64], b[64];

		ret = ibv_query_gid(d->ctx, RT_PORT, i, &g);
		RT_CHECK(ret == 0, "ibv_query_gid %d: %s", i, strerror(errno));
		rt_gid_str(&g, a, sizeof(a));
		rt_gid_str(&want[i], b, sizeof(b));
		RT_CHECK(memcmp(&g, &want[i], 16) == 0, "GID %d is %s, expected "
			 "%s", i, a, b);
		ret = ibv_query_gid_ex(d->ctx, RT_PORT, (uint32_t)i, &e[0], 0);
		RT_CHECK(ret == 0 && e[0].gid_type == IBV_GID_TYPE_ROCE_V2 &&
			 e[0].gid_index == (uint32_t)i &&
			 memcmp(&e[0].gid, &want[i], 16) == 0,
			 "ibv_query_gid_ex %d: ret %d type %u index %u", i, ret,
			 e[0].gid_type, e[0].gid_index);
	}
	ret = ibv_query_gid(d->ctx, RT_PORT, RT_GID_INDEX_IPV6 + 1, &g);
	RT_CHECK(ret == 0 && memcmp(&g, &(union ibv_gid){ 0 }, 16) == 0,
		 "an empty GID entry: ret %d, not the zero GID", ret);
	ret = ibv_query_gid_ex(d->ctx, RT_PORT, RT_GID_INDEX_IPV6 + 1, &e[0],
			       0);
	RT_CHECK(ret == ENODATA, "ibv_query_gid_ex of an empty entry: %d, "
		 "expected ENODATA", ret);
	got = ibv_query_gid_table(d->ctx, e, sizeof(e) / sizeof(e[0]), 0);
	RT_CHECK(got == RT_GID_INDEX_IPV6 + 1, "ibv_query_gid_table: %zd "
		 "entries, expected %d", got, RT_GID_INDEX_IPV6 + 1);
	for (int i = 0; i < got; i++)
		RT_CHECK(e[i].gid_index == (uint32_t)i &&
			 memcmp(&e[i].gid, &want[i], 16) == 0,
			 "ibv_query_gid_table entry %d: index %u", i,
			 e[i].gid_index);
}

/* RC over IPv6: the global addresses, then the link-local ones. */
static void
rt_case_ipv6_rc(void)
{
	struct rt_dev d0, d1;

	rt_dev_open(&d0, RT_DEV0);
	rt_dev_open(&d1, RT_DEV1);
	rt_check_gid_table(&d0, 0);
	rt_check_gid_table(&d1, 1);
	rt_dev_close(&d0);
	rt_dev_close(&d1);

	rt_gid_index = RT_GID_INDEX_IPV6;
	rt_step("RC over IPv6 2001:db8::1 <-> 2001:db8::2 (GID index %d)",
		rt_gid_index);
	rt_rc_send_case(65536);
	rt_rc_write_case(false, false);
	rt_rc_write_case(false, true);
	rt_gid_index = RT_GID_INDEX_LL;
	rt_step("RC over IPv6 link-local fe80::ff:fe00:1 <-> :2 (GID index "
		"%d)", rt_gid_index);
	rt_rc_send_case(1);
}

/*
 * UD over IPv6: the GRH area holds the IPv6 header the sender built from
 * the AH: traffic class and flow label as given, the hop limit the
 * port's (unicast: Linux puts the route's in the AV), the GIDs.
 */
static void
rt_case_ipv6_ud(void)
{
	const struct rt_ep_opts eo = { .type = IBV_QPT_UD };
	const uint32_t fl = 0x5a5a5;
	struct rt_dev d0, d1;
	struct rt_ep a, b;
	struct rt_buf src, dst;
	struct ibv_ah_attr aa;
	struct ibv_ah *ah;
	struct ibv_sge s, r;
	struct ibv_wc wc;
	struct ibv_grh *g;
	uint32_t vtf;

	rt_gid_index = RT_GID_INDEX_IPV6;
	rt_step("every UD check of ud_send over IPv6");
	rt_case_ud_send();

	rt_dev_open(&d0, RT_DEV0);
	rt_dev_open(&d1, RT_DEV1);
	rt_ep_create(&a, &d0, &eo);
	rt_ep_create(&b, &d1, &eo);
	rt_ud_up(&a);
	rt_ud_up(&b);
	rt_buf_alloc(&src, &d0, 4096, IBV_ACCESS_LOCAL_WRITE);
	rt_buf_alloc(&dst, &d1, 4096, IBV_ACCESS_LOCAL_WRITE);
	g = (struct ibv_grh *)dst.p;
	for (int i = 0; i < 2; i++) {
		uint32_t want_fl = i == 0 ? fl : 0;

		rt_ah_attr(&aa, &d1.gid);
		aa.grh.flow_label = want_fl;
		aa.grh.traffic_class = 0x48;	/* DSCP AF21 */
		aa.grh.hop_limit = 7;
		ah = ibv_create_ah(d0.pd, &aa);
		RT_CHECK(ah != NULL, "ibv_create_ah: %s", strerror(errno));
		if (i == 1) {
			/* rdma_calc_flow_label(): from the QPNs */
			uint64_t v = (uint64_t)a.qp->qp_num * b.qp->qp_num;

			v ^= v >> 20;
			v ^= v >> 40;
			want_fl = (uint32_t)v & 0xfffff;
		}
		rt_step("UD over IPv6, AH flow label 0x%05x, traffic class "
			"0x48, hop limit 7: the GRH says flow label 0x%05x, "
			"class 0x48, hop limit 64", aa.grh.flow_label, want_fl);
		memset(dst.p, RT_GUARD_BYTE, dst.len);
		r = rt_sge(&dst, 0, RT_GRH_LEN + 100);
		rt_post_recv(&b, 1, &r, 1);
		rt_fill_random(src.p, 100);
		s = rt_sge(&src, 0, 100);
		rt_post_ud(&a, 2, &s, 1, ah, b.qp->qp_num, RT_QKEY);
		rt_expect_wc(a.scq, "UD sender", 2, IBV_WC_SUCCESS,
			     IBV_WC_SEND);
		wc = rt_expect_wc(b.rcq, "UD receiver", 1, IBV_WC_SUCCESS,
				  IBV_WC_RECV);
		rt_check_grh(dst.p, &wc, &d0, &d1);
		vtf = be32toh(g->version_tclass_flow);
		RT_CHECK(vtf >> 28 == 6 && ((vtf >> 20) & 0xff) == 0x48 &&
			 (vtf & 0xfffff) == want_fl, "GRH: version %u class "
			 "0x%02x flow label 0x%05x", vtf >> 28,
			 (vtf >> 20) & 0xff, vtf & 0xfffff);
		RT_CHECK(g->hop_limit == 64 && g->next_hdr == 17 &&
			 be16toh(g->paylen) == 8 + 12 + 8 + 100 + 4,
			 "GRH: hop limit %u (64) next header %u (17) payload "
			 "length %u", g->hop_limit, g->next_hdr,
			 be16toh(g->paylen));
		rt_check_data(dst.p + RT_GRH_LEN, src.p, 100, "payload");
		RT_CHECK(ibv_destroy_ah(ah) == 0, "ibv_destroy_ah");
	}

	rt_step("an AH from an IPv6 GID to an IPv4 one (or back) is refused");
	rt_ah_attr(&aa, &d1.gid);
	aa.grh.sgid_index = RT_GID_INDEX;
	ah = ibv_create_ah(d0.pd, &aa);
	RT_CHECK(ah == NULL && errno == EINVAL, "AH IPv4 GID -> IPv6 GID: "
		 "%s", ah == NULL ? strerror(errno) : "created");
	aa.grh.sgid_index = RT_GID_INDEX_IPV6 + 1;	/* empty */
	ah = ibv_create_ah(d0.pd, &aa);
	RT_CHECK(ah == NULL && errno == EINVAL, "AH from an empty GID entry: "
		 "%s", ah == NULL ? strerror(errno) : "created");

	rt_ep_destroy(&a);
	rt_ep_destroy(&b);
	rt_buf_free(&src);
	rt_buf_free(&dst);
	rt_dev_close(&d0);
	rt_dev_close(&d1);
}

/* ------------------------------------------------------------ multicast */

#define RT_MC_QPS	3

/* Post a receive on each of n endpoints (wr_id = index). */
static void
rt_mc_recvs(struct rt_ep *eps, struct rt_buf *bufs, int n)
{
	for (int i = 0; i < n; i++) {
		struct ibv_sge r = rt_sge(&bufs[i], 0, RT_GRH_LEN + 256);

		memset(bufs[i].p, RT_GUARD_BYTE, bufs[i].len);
		rt_post_recv(&eps[i], (uint64_t)i, &r, 1);
	}
}

/* One datagram to group `grp` from a: exactly the QPs in `joined` get it. */
static void
rt_mc_round(struct rt_ep *a, struct rt_buf *src, struct ibv_ah *ah,
	    const union ibv_gid *grp, struct rt_ep *eps, struct rt_buf *bufs,
	    unsigned int joined, uint64_t wr_id)
{
	struct ibv_sge s = rt_sge(src, 0, 256);
	struct ibv_wc wc;

	rt_fill_random(src->p, 256);
	rt_post_ud(a, wr_id, &s, 1, ah, 0xffffff, RT_QKEY);
	rt_expect_wc(a->scq, "multicast sender", wr_id, IBV_WC_SUCCESS,
		     IBV_WC_SEND);
	for (int i = 0; i < RT_MC_QPS; i++) {
		if (!(joined & (1u << i)))
			continue;
		wc = rt_expect_wc(eps[i].rcq, "group member", (uint64_t)i,
				  IBV_WC_SUCCESS, IBV_WC_RECV);
		RT_CHECK(wc.byte_len == RT_GRH_LEN + 256 &&
			 wc.src_qp == a->qp->qp_num &&
			 wc.qp_num == eps[i].qp->qp_num, "member %d: byte_len "
			 "%u src_qp 0x%x qp_num 0x%x", i, wc.byte_len,
			 wc.src_qp, wc.qp_num);
		rt_check_data(bufs[i].p + RT_GRH_LEN, src->p, 256,
			      "multicast payload");
		if (rt_gid_index == RT_GID_INDEX)
			RT_CHECK(memcmp(bufs[i].p + 36, &grp->raw[12], 4) == 0,
				 "GRH area: IPv4 destination is not the "
				 "group");
		else
			RT_CHECK(memcmp(bufs[i].p + 24, grp->raw, 16) == 0,
				 "GRH area: DGID is not the group");
	}
	for (int i = 0; i < RT_MC_QPS; i++)
		if (!(joined & (1u << i)))
			rt_expect_empty(eps[i].rcq, RT_IDLE_MS,
					"a QP not in the group");
}

static void
rt_mc_case(uint8_t gid_index, const union ibv_gid *grp)
{
	const struct rt_ep_opts eo = { .type = IBV_QPT_UD };
	struct rt_ep a, rc, eps[RT_MC_QPS];
	struct rt_buf src, bufs[RT_MC_QPS];
	struct rt_dev d0, d1;
	struct ibv_ah_attr aa;
	union ibv_gid uni;
	struct ibv_ah *ah;
	int ret;

	rt_gid_index = gid_index;
	rt_dev_open(&d0, RT_DEV0);
	rt_dev_open(&d1, RT_DEV1);
	RT_CHECK(d1.attr.max_mcast_grp > 0 && d1.attr.max_mcast_qp_attach >=
		 RT_MC_QPS, "max_mcast_grp %d max_mcast_qp_attach %d",
		 d1.attr.max_mcast_grp, d1.attr.max_mcast_qp_attach);
	rt_ep_create(&a, &d0, &eo);
	rt_ud_up(&a);
	rt_buf_alloc(&src, &d0, 4096, IBV_ACCESS_LOCAL_WRITE);
	for (int i = 0; i < RT_MC_QPS; i++) {
		rt_ep_create(&eps[i], &d1, &eo);
		rt_ud_up(&eps[i]);
		rt_buf_alloc(&bufs[i], &d1, 4096, IBV_ACCESS_LOCAL_WRITE);
	}
	rt_ah_attr(&aa, grp);
	aa.grh.hop_limit = 1;
	ah = ibv_create_ah(d0.pd, &aa);
	RT_CHECK(ah != NULL, "ibv_create_ah to the group: %s", strerror(errno));

	rt_step("QPs 0 and 1 of %s join the group; a datagram to it reaches "
		"both, not QP 2", d1.name);
	for (int i = 0; i < 2; i++) {
		ret = ibv_attach_mcast(eps[i].qp, grp, 0);
		RT_CHECK(ret == 0, "ibv_attach_mcast QP %d: %s", i,
			 strerror(ret));
	}
	ret = ibv_attach_mcast(eps[0].qp, grp, 0);
	RT_CHECK(ret == 0, "attaching twice: %s (the kernel accepts it)",
		 strerror(ret));
	rt_mc_recvs(eps, bufs, RT_MC_QPS);
	rt_mc_round(&a, &src, ah, grp, eps, bufs, 0x3, 10);

	rt_step("QP 0 leaves: the next datagram reaches QP 1 only");
	ret = ibv_detach_mcast(eps[0].qp, grp, 0);
	RT_CHECK(ret == 0, "ibv_detach_mcast: %s", strerror(ret));
	ret = ibv_detach_mcast(eps[0].qp, grp, 0);
	RT_CHECK(ret == EINVAL, "detaching a QP not attached: %d (EINVAL)",
		 ret);
	/* QP 0 and 2 still hold their receives from the last round */
	{
		struct ibv_sge r = rt_sge(&bufs[1], 0, RT_GRH_LEN + 256);

		rt_post_recv(&eps[1], 1, &r, 1);
	}
	rt_mc_round(&a, &src, ah, grp, eps, bufs, 0x2, 11);

	rt_step("the last member leaves: the group's frames are not taken");
	ret = ibv_detach_mcast(eps[1].qp, grp, 0);
	RT_CHECK(ret == 0, "ibv_detach_mcast: %s", strerror(ret));
	{
		struct ibv_sge r = rt_sge(&bufs[1], 0, RT_GRH_LEN + 256);

		rt_post_recv(&eps[1], 1, &r, 1);
	}
	rt_mc_round(&a, &src, ah, grp, eps, bufs, 0x0, 12);

	rt_step("attach errors: a unicast GID, an RC QP");
	uni = d1.gid;
	ret = ibv_attach_mcast(eps[2].qp, &uni, 0);
	RT_CHECK(ret == EINVAL, "attach to a unicast GID: %d (EINVAL)", ret);
	{
		const struct rt_ep_opts rco = { .type = IBV_QPT_RC };

		rt_ep_create(&rc, &d1, &rco);
		ret = ibv_attach_mcast(rc.qp, grp, 0);
		RT_CHECK(ret == EINVAL, "attach an RC QP: %d (EINVAL)", ret);
		rt_ep_destroy(&rc);
	}
	rt_step("a QP destroyed while attached leaves the group");
	ret = ibv_attach_mcast(eps[2].qp, grp, 0);
	RT_CHECK(ret == 0, "ibv_attach_mcast: %s", strerror(ret));

	RT_CHECK(ibv_destroy_ah(ah) == 0, "ibv_destroy_ah");
	rt_ep_destroy(&a);
	rt_buf_free(&src);
	for (int i = 0; i < RT_MC_QPS; i++) {
		rt_ep_destroy(&eps[i]);
		rt_buf_free(&bufs[i]);
	}
	rt_dev_close(&d0);
	rt_dev_close(&d1);
}

/* UD multicast, an IPv4 group (239.1.2.3) and an IPv6 one (ff0e::db8:7). */
static void
rt_case_mcast(void)
{
	union ibv_gid g4, g6;

	rt_gid_v4(&g4, 0xef010203u);
	memset(&g6, 0, sizeof(g6));
	g6.raw[0] = 0xff;
	g6.raw[1] = 0x0e;
	g6.raw[12] = 0x0d;
	g6.raw[13] = 0xb8;
	g6.raw[15] = 0x07;
	rt_step("IPv4 group 239.1.2.3 (Ethernet 01:00:5e:01:02:03)");
	rt_mc_case(RT_GID_INDEX, &g4);
	rt_step("IPv6 group ff0e::db8:7 (Ethernet 33:33:0d:b8:00:07)");
	rt_mc_case(RT_GID_INDEX_IPV6, &g6);
}

/* ------------------------------------------------------------- atomics */

#define RT_ACCESS_ATOMIC	(RT_ACCESS_ALL | IBV_ACCESS_REMOTE_ATOMIC)

/* An RC endpoint whose QP takes the ibv_wr_* API for `ops` and READ. */
static void
rt_ep_create_ex_ops(struct rt_ep *ep, struct rt_dev *d, uint64_t ops)
{
	const struct rt_ep_opts eo = { .type = IBV_QPT_RC };
	struct ibv_qp_init_attr_ex ia;
	int ret;

	rt_ep_create(ep, d, &eo);
	ret = ibv_destroy_qp(ep->qp);
	RT_CHECK(ret == 0, "ibv_destroy_qp: %s", strerror(ret));
	memset(&ia, 0, sizeof(ia));
	ia.send_cq = ep->scq;
	ia.recv_cq = ep->rcq;
	ia.qp_type = IBV_QPT_RC;
	ia.cap.max_send_wr = RT_WR;
	ia.cap.max_recv_wr = RT_WR;
	ia.cap.max_send_sge = RT_SGE;
	ia.cap.max_recv_sge = RT_SGE;
	ia.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	ia.pd = d->pd;
	ia.send_ops_flags = ops | IBV_QP_EX_WITH_RDMA_READ;
	ep->qp = ibv_create_qp_ex(d->ctx, &ia);
	RT_CHECK(ep->qp != NULL, "ibv_create_qp_ex(%s, send_ops_flags 0x%"
		 PRIx64 "): %s", d->name, (uint64_t)ia.send_ops_flags,
		 strerror(errno));
}

/* An RC endpoint whose QP takes the ibv_wr_* API for atomics. */
static void
rt_ep_create_ex(struct rt_ep *ep, struct rt_dev *d)
{
	rt_ep_create_ex_ops(ep, d, IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |
			    IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD);
}

/*
 * a runs atomics on a target of b's: FETCH_AND_ADD (one wrapping past
 * 2^64), CMP_AND_SWP that matches and one that does not.  Each returns
 * the target's original value into its 8-byte SGE, completes with its
 * opcode and byte_len 8, and changes the target exactly so; the guard
 * bytes around result and target stay.
 */
static void
rt_atomic_checks(struct rt_ep *a, struct rt_ep *b, bool ex)
{
	const char *api = ex ? "ibv_wr_atomic_*" : "ibv_post_send";
	struct rt_buf res, tgt;
	uint64_t v, x, y, got, *t, *r;
	struct ibv_sge s;
	struct ibv_wc wc;

	rt_buf_alloc(&res, a->dev, 2 * RT_GUARD + 8, IBV_ACCESS_LOCAL_WRITE);
	rt_buf_alloc(&tgt, b->dev, 2 * RT_GUARD + 8,
		     IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_ATOMIC);
	memset(res.p, RT_GUARD_BYTE, res.len);
	memset(tgt.p, RT_GUARD_BYTE, tgt.len);
	r = (uint64_t *)(res.p + RT_GUARD);
	t = (uint64_t *)(tgt.p + RT_GUARD);
	s = rt_sge(&res, RT_GUARD, 8);
	v = rt_rand64(&rt_rng);
	x = rt_rand64(&rt_rng);
	y = rt_rand64(&rt_rng);
	*t = v;

	rt_step("%s: FETCH_AND_ADD 0x%" PRIx64 " to 0x%" PRIx64, api, x, v);
	rt_post_atomic(a, ex, 1, IBV_WR_ATOMIC_FETCH_AND_ADD, &s,
		       (uintptr_t)t, tgt.mr->rkey, x, 0);
	wc = rt_expect_wc(a->scq, "FETCH_AND_ADD", 1, IBV_WC_SUCCESS,
			  IBV_WC_FETCH_ADD);
	RT_CHECK(wc.byte_len == 8, "FETCH_AND_ADD byte_len %u, expected 8",
		 wc.byte_len);
	got = __atomic_load_n(t, __ATOMIC_ACQUIRE);
	RT_CHECK(*r == v && got == v + x, "FETCH_AND_ADD: returned 0x%" PRIx64
		 " (original 0x%" PRIx64 "), target 0x%" PRIx64 " (expected 0x%"
		 PRIx64 ")", *r, v, got, v + x);
	v += x;

	rt_step("%s: CMP_AND_SWP that matches: 0x%" PRIx64 " -> 0x%" PRIx64,
		api, v, y);
	rt_post_atomic(a, ex, 2, IBV_WR_ATOMIC_CMP_AND_SWP, &s,
		       (uintptr_t)t, tgt.mr->rkey, v, y);
	wc = rt_expect_wc(a->scq, "CMP_AND_SWP", 2, IBV_WC_SUCCESS,
			  IBV_WC_COMP_SWAP);
	RT_CHECK(wc.byte_len == 8, "CMP_AND_SWP byte_len %u, expected 8",
		 wc.byte_len);
	got = __atomic_load_n(t, __ATOMIC_ACQUIRE);
	RT_CHECK(*r == v && got == y, "CMP_AND_SWP (match): returned 0x%"
		 PRIx64 " (original 0x%" PRIx64 "), target 0x%" PRIx64
		 " (expected 0x%" PRIx64 ")", *r, v, got, y);

	rt_step("%s: CMP_AND_SWP that does not match: target kept", api);
	rt_post_atomic(a, ex, 3, IBV_WR_ATOMIC_CMP_AND_SWP, &s,
		       (uintptr_t)t, tgt.mr->rkey, ~y, v);
	rt_expect_wc(a->scq, "CMP_AND_SWP", 3, IBV_WC_SUCCESS,
		     IBV_WC_COMP_SWAP);
	got = __atomic_load_n(t, __ATOMIC_ACQUIRE);
	RT_CHECK(*r == y && got == y, "CMP_AND_SWP (no match): returned 0x%"
		 PRIx64 ", target 0x%" PRIx64 ", both expected 0x%" PRIx64,
		 *r, got, y);

	rt_step("%s: FETCH_AND_ADD wrapping past 2^64", api);
	__atomic_store_n(t, UINT64_MAX - 1, __ATOMIC_RELEASE);
	rt_post_atomic(a, ex, 4, IBV_WR_ATOMIC_FETCH_AND_ADD, &s,
		       (uintptr_t)t, tgt.mr->rkey, 3, 0);
	rt_expect_wc(a->scq, "FETCH_AND_ADD", 4, IBV_WC_SUCCESS,
		     IBV_WC_FETCH_ADD);
	got = __atomic_load_n(t, __ATOMIC_ACQUIRE);
	RT_CHECK(*r == UINT64_MAX - 1 && got == 1, "FETCH_AND_ADD (wrap): "
		 "returned 0x%" PRIx64 ", target 0x%" PRIx64, *r, got);
	rt_check_guard(res.p, RT_GUARD, "before the result");
	rt_check_guard(res.p + RT_GUARD + 8, RT_GUARD, "after the result");
	rt_check_guard(tgt.p, RT_GUARD, "before the target");
	rt_check_guard(tgt.p + RT_GUARD + 8, RT_GUARD, "after the target");
	rt_expect_empty(b->rcq, 0, "responder: atomics take no receive");
	rt_buf_free(&res);
	rt_buf_free(&tgt);
}

/*
 * FETCH_AND_ADDs and READs alternating, RT_ATOM_MIX of them posted at
 * once, more than max_rd_atomic: the requester keeps READs and atomics
 * together within max_rd_atomic (the responder NAKs one too many), and
 * they complete in order, the additions seeing each other's results.
 */
#define RT_ATOM_MIX	240u

static void
rt_atomic_mixed(struct rt_ep *a, struct rt_ep *b, bool ex)
{
	struct rt_buf res, tgt;
	uint64_t *r, *t, c0;
	struct ibv_sge s;

	rt_step("%u FETCH_AND_ADD and READ alternating, posted at once "
		"(max_rd_atomic %u)", RT_ATOM_MIX, rt_rd_atom(a->dev));
	rt_buf_alloc(&res, a->dev, RT_ATOM_MIX * 64, IBV_ACCESS_LOCAL_WRITE);
	rt_buf_alloc(&tgt, b->dev, 4096, RT_ACCESS_ATOMIC);
	rt_fill_random(tgt.p, tgt.len);
	t = (uint64_t *)tgt.p;
	c0 = *t;
	for (uint32_t i = 0; i < RT_ATOM_MIX; i++) {
		s = rt_sge(&res, (size_t)i * 64, i % 2 == 0 ? 8 : 64);
		if (i % 2 == 0)
			rt_post_atomic(a, ex, 100 + i,
				       IBV_WR_ATOMIC_FETCH_AND_ADD, &s,
				       (uintptr_t)t, tgt.mr->rkey, 1, 0);
		else
			rt_post_send(a, 100 + i, IBV_WR_RDMA_READ, &s, 1,
				     IBV_SEND_SIGNALED, 0,
				     (uintptr_t)tgt.p + 64, tgt.mr->rkey);
	}
	for (uint32_t i = 0; i < RT_ATOM_MIX; i++)
		rt_expect_wc(a->scq, i % 2 == 0 ? "FETCH_AND_ADD" : "READ",
			     100 + i, IBV_WC_SUCCESS, i % 2 == 0 ?
			     IBV_WC_FETCH_ADD : IBV_WC_RDMA_READ);
	for (uint32_t i = 0; i < RT_ATOM_MIX; i++) {
		r = (uint64_t *)(res.p + (size_t)i * 64);
		if (i % 2 == 0)
			RT_CHECK(*r == c0 + i / 2, "FETCH_AND_ADD %u returned "
				 "0x%" PRIx64 ", expected 0x%" PRIx64, i, *r,
				 c0 + i / 2);
		else
			rt_check_data(r, tgt.p + 64, 64, "READ between "
				      "atomics");
	}
	RT_CHECK(*t == c0 + RT_ATOM_MIX / 2, "counter 0x%" PRIx64 ", expected "
		 "0x%" PRIx64, *t, c0 + RT_ATOM_MIX / 2);
	rt_buf_free(&res);
	rt_buf_free(&tgt);
}

static void
rt_case_rc_atomic(void)
{
	struct rt_rc_opts o = rt_rc_default;
	struct rt_dev d0, d1;
	struct rt_ep a, b;

	o.access = RT_ACCESS_ATOMIC;
	rt_dev_open(&d0, RT_DEV0);
	rt_dev_open(&d1, RT_DEV1);
	rt_step("ibv_query_device: atomic_cap");
	RT_CHECK(d0.attr.atomic_cap == IBV_ATOMIC_HCA &&
		 d1.attr.atomic_cap == IBV_ATOMIC_HCA, "atomic_cap %d/%d, "
		 "expected IBV_ATOMIC_HCA (%d)", (int)d0.attr.atomic_cap,
		 (int)d1.attr.atomic_cap, (int)IBV_ATOMIC_HCA);
	rt_rc_pair_wrap(&a, &d0, &b, &d1, &o);
	rt_atomic_checks(&a, &b, false);
	rt_atomic_checks(&b, &a, false);
	rt_atomic_mixed(&a, &b, false);
	rt_ep_destroy(&a);
	rt_ep_destroy(&b);

	rt_step("extended QPs: ibv_wr_atomic_cmp_swp, ibv_wr_atomic_fetch_add");
	rt_ep_create_ex(&a, &d0);
	rt_ep_create_ex(&b, &d1);
	rt_rc_connect(&a, &b, &o);
	rt_atomic_checks(&a, &b, true);
	rt_atomic_checks(&b, &a, true);
	rt_atomic_mixed(&b, &a, true);
	rt_ep_destroy(&a);
	rt_ep_destroy(&b);
	rt_dev_close(&d0);
	rt_dev_close(&d1);
}

/*
 * Atomics the responder refuses (NAK and the requester's completion),
 * the ones the post refuses (EINVAL: SGEs of less than 8 bytes), and
 * SGEs of more, which take the 8 bytes at their start (as rxe).
 */
static void
rt_case_rc_atomic_err(void)
{
	enum { ra = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_ATOMIC };
	static const struct {
		const char *what;
		enum ibv_wr_opcode op;
		int mr_access;
		long offset;
		uint32_t rkey_xor;
		int qp_access;
		enum ibv_wc_status status;
	} bad[] = {
		{ "FETCH_AND_ADD at a misaligned address (target + 4): NAK "
		  "invalid request", IBV_WR_ATOMIC_FETCH_AND_ADD, ra, 4, 0,
		  RT_ACCESS_ATOMIC, IBV_WC_REM_INV_REQ_ERR },
		{ "CMP_AND_SWP into an MR without IBV_ACCESS_REMOTE_ATOMIC: NAK "
		  "remote access error", IBV_WR_ATOMIC_CMP_AND_SWP,
		  RT_ACCESS_ALL, 0, 0, RT_ACCESS_ATOMIC,
		  IBV_WC_REM_ACCESS_ERR },
		{ "FETCH_AND_ADD with a wrong rkey",
		  IBV_WR_ATOMIC_FETCH_AND_ADD, ra, 0, 0x80, RT_ACCESS_ATOMIC,
		  IBV_WC_REM_ACCESS_ERR },
		{ "FETCH_AND_ADD just past the end of the MR",
		  IBV_WR_ATOMIC_FETCH_AND_ADD, ra, 4096, 0, RT_ACCESS_ATOMIC,
		  IBV_WC_REM_ACCESS_ERR },
		{ "FETCH_AND_ADD to a QP without IBV_ACCESS_REMOTE_ATOMIC: NAK "
		  "invalid request (as rxe: not enabled on the QP)",
		  IBV_WR_ATOMIC_FETCH_AND_ADD, ra, 0, 0, RT_ACCESS_ALL,
		  IBV_WC_REM_INV_REQ_ERR },
	};
	struct rt_rc_opts o = rt_rc_default;
	struct rt_dev d0, d1;
	struct rt_buf res, tgt;
	struct rt_ep a, b;
	struct ibv_sge s[2];
	struct ibv_wc wc;
	int ret;

	rt_dev_open(&d0, RT_DEV0);
	rt_dev_open(&d1, RT_DEV1);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		rt_bad_request(&d0, &d1, bad[i].what, bad[i].op,
			       bad[i].mr_access, 8, 4096, bad[i].offset,
			       bad[i].rkey_xor, bad[i].qp_access, bad[i].status);

	rt_step("an atomic whose SGEs hold less than 8 bytes: EINVAL, both "
		"APIs");
	o.access = RT_ACCESS_ATOMIC;
	rt_ep_create_ex(&a, &d0);
	rt_ep_create_ex(&b, &d1);
	rt_rc_connect(&a, &b, &o);
	rt_buf_alloc(&res, &d0, 64, IBV_ACCESS_LOCAL_WRITE);
	rt_buf_alloc(&tgt, &d1, 64, ra);
	for (int ex = 0; ex < 2; ex++) {
		s[0] = rt_sge(&res, 0, 4);
		ret = rt_try_atomic(&a, ex, 1, IBV_WR_ATOMIC_FETCH_AND_ADD, s,
				    (uintptr_t)tgt.p, tgt.mr->rkey, 1, 0);
		RT_CHECK(ret == EINVAL, "%s: 4-byte SGE: %s, expected EINVAL",
			 ex ? "ibv_wr_complete" : "ibv_post_send",
			 strerror(ret));
	}
	rt_expect_empty(a.scq, 50, "nothing posted");

	/* As rxe: more than 8 bytes of SGEs take the 8 at their start. */
	rt_step("8 bytes over two 4-byte SGEs, and a 16-byte SGE: the "
		"original value at their start, nothing after");
	memset(res.p, RT_GUARD_BYTE, res.len);
	memcpy(tgt.p, "\x01\x02\x03\x04\x05\x06\x07\x08", 8);
	s[0] = rt_sge(&res, 0, 4);
	s[1] = rt_sge(&res, 32, 4);
	ret = rt_try_send(&a, 2, IBV_WR_ATOMIC_FETCH_AND_ADD, s, 2,
			  IBV_SEND_SIGNALED, 0, (uintptr_t)tgt.p,
			  tgt.mr->rkey);
	RT_CHECK(ret == 0, "ibv_post_send: two 4-byte SGEs: %s",
		 strerror(ret));
	rt_expect_wc(a.scq, "FETCH_AND_ADD into two SGEs", 2, IBV_WC_SUCCESS,
		     IBV_WC_FETCH_ADD);
	RT_CHECK(memcmp(res.p, tgt.p, 4) == 0 &&
		 memcmp(res.p + 32, tgt.p + 4, 4) == 0, "the original value "
		 "split over two SGEs differs");
	rt_check_guard(res.p + 4, 28, "between the SGEs");
	rt_check_guard(res.p + 36, 28, "after the second SGE");
	memset(res.p, RT_GUARD_BYTE, res.len);
	s[0] = rt_sge(&res, 0, 16);
	rt_post_atomic(&a, false, 3, IBV_WR_ATOMIC_CMP_AND_SWP, s,
		       (uintptr_t)tgt.p, tgt.mr->rkey, 0, 0);
	wc = rt_expect_wc(a.scq, "CMP_AND_SWP into 16 bytes", 3,
			  IBV_WC_SUCCESS, IBV_WC_COMP_SWAP);
	RT_CHECK(wc.byte_len == 8, "byte_len %u, expected 8", wc.byte_len);
	RT_CHECK(memcmp(res.p, tgt.p, 8) == 0, "CMP_AND_SWP: original value "
		 "differs");
	rt_check_guard(res.p + 8, res.len - 8, "after the 8 bytes");
	rt_atomic_checks(&a, &b, false);
	rt_ep_destroy(&a);
	rt_ep_destroy(&b);
	rt_buf_free(&res);
	rt_buf_free(&tgt);
	rt_dev_close(&d0);
	rt_dev_close(&d1);
}

/* ---------------------------------------------------------- ATOMIC WRITE */

/* IB_UVERBS_DEVICE_ATOMIC_WRITE (Linux 6.2): rdma-core 44 predates it. */
#define RT_DEVICE_ATOMIC_WRITE	(UINT64_C(1) << 40)
#define RT_AW_N			64u

/* a ATOMIC WRITEs `v` at t (b's, under rkey) through ibv_wr_atomic_write. */
static int
rt_try_atomic_write_ex(struct rt_ep *a, uint64_t wr_id, uint64_t *t,
		       uint32_t rkey, uint64_t v)
{
	struct ibv_qp_ex *qpx = ibv_qp_to_qp_ex(a->qp);

	RT_CHECK(qpx != NULL, "ibv_qp_to_qp_ex: NULL");
	ibv_wr_start(qpx);
	qpx->wr_id = wr_id;
	qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_atomic_write(qpx, rkey, (uintptr_t)t, &v);
	v = ~v;		/* copied at the call, as rxe's provider does */
	return ibv_wr_complete(qpx);
}

/*
 * ATOMIC WRITE (IBTA 1.5; rxe since Linux 6.2): 8 bytes from the SGE (or
 * inline) stored whole at an 8-byte aligned target of an MR with
 * REMOTE_WRITE; completion IBV_WC_ATOMIC_WRITE, byte_len 8; no receive
 * taken.  More than max_rd_atomic at once, with READs between (its answer
 * is an empty READ response, counted with theirs).  The post refuses a
 * length other than 8 (EINVAL) and UC; the responder NAKs a misaligned
 * target (invalid request) and an MR without REMOTE_WRITE (remote access
 * error); ibv_wr_atomic_write() works on a QP created with
 * IBV_QP_EX_WITH_ATOMIC_WRITE and fails ibv_wr_complete() (EINVAL) on one
 * without.
 */
static void
rt_case_rc_atomic_write(void)
{
	struct rt_rc_opts o = rt_rc_default;
	struct ibv_device_attr_ex ax;
	struct rt_buf src, tgt, rdb;
	struct rt_dev d0, d1;
	struct rt_ep a, b;
	struct ibv_sge s;
	struct ibv_wc wc;
	uint64_t v, *t;
	int ret;

	rt_dev_open(&d0, RT_DEV0);
	rt_dev_open(&d1, RT_DEV1);
	rt_step("ibv_query_device_ex: device_cap_flags_ex has ATOMIC_WRITE "
		"(bit 40)");
	memset(&ax, 0, sizeof(ax));
	ret = ibv_query_device_ex(d0.ctx, NULL, &ax);
	RT_CHECK(ret == 0 && (ax.device_cap_flags_ex & RT_DEVICE_ATOMIC_WRITE),
		 "ibv_query_device_ex: %s, device_cap_flags_ex 0x%" PRIx64,
		 strerror(ret), (uint64_t)ax.device_cap_flags_ex);

	rt_rc_pair_wrap(&a, &d0, &b, &d1, &o);
	rt_buf_alloc(&src, &d0, 4096, IBV_ACCESS_LOCAL_WRITE);
	rt_buf_alloc(&rdb, &d0, 4096, IBV_ACCESS_LOCAL_WRITE);
	rt_buf_alloc(&tgt, &d1, 4096, RT_ACCESS_ALL);
	memset(tgt.p, RT_GUARD_BYTE, tgt.len);
	t = (uint64_t *)(tgt.p + RT_GUARD);
	v = rt_rand64(&rt_rng);
	memcpy(src.p, &v, 8);

	rt_step("ibv_post_send ATOMIC_WRITE 0x%" PRIx64 " from an SGE", v);
	s = rt_sge(&src, 0, 8);
	rt_post_send(&a, 1, IBV_WR_ATOMIC_WRITE, &s, 1, IBV_SEND_SIGNALED, 0,
		     (uintptr_t)t, tgt.mr->rkey);
	wc = rt_expect_wc(a.scq, "ATOMIC_WRITE", 1, IBV_WC_SUCCESS,
			  IBV_WC_ATOMIC_WRITE);
	RT_CHECK(wc.byte_len == 8, "ATOMIC_WRITE byte_len %u, expected 8",
		 wc.byte_len);
	RT_CHECK(__atomic_load_n(t, __ATOMIC_ACQUIRE) == v, "target 0x%" PRIx64
		 ", expected 0x%" PRIx64, *t, v);
	rt_check_guard(tgt.p, RT_GUARD, "before the target");
	rt_check_guard(tgt.p + RT_GUARD + 8, RT_GUARD, "after the target");

	rt_step("ATOMIC_WRITE inline");
	v = rt_rand64(&rt_rng);
	memcpy(src.p + 64, &v, 8);
	s = rt_sge(&src, 64, 8);
	rt_post_send(&a, 2, IBV_WR_ATOMIC_WRITE, &s, 1,
		     IBV_SEND_SIGNALED | IBV_SEND_INLINE, 0, (uintptr_t)t,
		     tgt.mr->rkey);
	rt_expect_wc(a.scq, "ATOMIC_WRITE inline", 2, IBV_WC_SUCCESS,
		     IBV_WC_ATOMIC_WRITE);
	RT_CHECK(__atomic_load_n(t, __ATOMIC_ACQUIRE) == v, "target 0x%" PRIx64
		 ", expected 0x%" PRIx64, *t, v);

	rt_step("ATOMIC_WRITE of 4 and of 16 bytes: EINVAL at the post");
	s = rt_sge(&src, 0, 4);
	ret = rt_try_send(&a, 3, IBV_WR_ATOMIC_WRITE, &s, 1, IBV_SEND_SIGNALED,
			  0, (uintptr_t)t, tgt.mr->rkey);
	RT_CHECK(ret == EINVAL, "4 bytes: %s, expected EINVAL", strerror(ret));
	s = rt_sge(&src, 0, 16);
	ret = rt_try_send(&a, 3, IBV_WR_ATOMIC_WRITE, &s, 1, IBV_SEND_SIGNALED,
			  0, (uintptr_t)t, tgt.mr->rkey);
	RT_CHECK(ret == EINVAL, "16 bytes: %s, expected EINVAL",
		 strerror(ret));
	rt_expect_empty(a.scq, 20, "nothing posted");

	rt_step("%u ATOMIC_WRITEs and READs alternating, posted at once "
		"(max_rd_atomic %u)", RT_AW_N, rt_rd_atom(&d0));
	for (uint32_t i = 0; i < RT_AW_N; i++) {
		uint64_t x = 0x1000 + i;

		memcpy(src.p + 1024 + (size_t)i * 8, &x, 8);
	}
	for (uint32_t i = 0; i < RT_AW_N; i++) {
		if (i % 2 == 0) {
			s = rt_sge(&src, 1024 + (size_t)i * 8, 8);
			rt_post_send(&a, 100 + i, IBV_WR_ATOMIC_WRITE, &s, 1,
				     IBV_SEND_SIGNALED, 0,
				     (uintptr_t)tgt.p + 1024 + i * 8,
				     tgt.mr->rkey);
		} else {
			/* the slot the previous ATOMIC WRITE wrote */
			s = rt_sge(&rdb, (size_t)i * 8, 8);
			rt_post_send(&a, 100 + i, IBV_WR_RDMA_READ, &s, 1,
				     IBV_SEND_SIGNALED, 0,
				     (uintptr_t)tgt.p + 1024 + (i - 1) * 8,
				     tgt.mr->rkey);
		}
	}
	for (uint32_t i = 0; i < RT_AW_N; i++)
		rt_expect_wc(a.scq, i % 2 == 0 ? "ATOMIC_WRITE" : "READ",
			     100 + i, IBV_WC_SUCCESS, i % 2 == 0 ?
			     IBV_WC_ATOMIC_WRITE : IBV_WC_RDMA_READ);
	for (uint32_t i = 0; i < RT_AW_N; i += 2) {
		uint64_t x, r;

		memcpy(&x, tgt.p + 1024 + (size_t)i * 8, 8);
		memcpy(&r, rdb.p + (size_t)(i + 1) * 8, 8);
		RT_CHECK(x == 0x1000 + i && r == x, "slot %u: 0x%" PRIx64
			 ", READ after it 0x%" PRIx64 ", expected 0x%x", i, x,
			 r, 0x1000 + i);
	}
	rt_expect_empty(b.rcq, 0, "responder: ATOMIC WRITEs take no receive");
	rt_ep_destroy(&a);
	rt_ep_destroy(&b);

	rt_step("UC: ATOMIC_WRITE refused at the post (EINVAL)");
	{
		const struct rt_ep_opts uo = { .type = IBV_QPT_UC };
		struct rt_ep u0, u1;

		struct ibv_qp_attr at;

		rt_ep_create(&u0, &d0, &uo);
		rt_ep_create(&u1, &d1, &uo);
		/* u0 to RTS toward u1 (nothing is sent) */
		memset(&at, 0, sizeof(at));
		at.qp_state = IBV_QPS_INIT;
		at.port_num = RT_PORT;
		at.qp_access_flags = RT_ACCESS_ALL;
		ret = rt_modify(&u0, &at, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
		RT_CHECK(ret == 0, "UC to INIT: %s", strerror(ret));
		memset(&at, 0, sizeof(at));
		at.qp_state = IBV_QPS_RTR;
		at.path_mtu = IBV_MTU_1024;
		at.dest_qp_num = u1.qp->qp_num;
		at.rq_psn = u1.psn;
		rt_ah_attr(&at.ah_attr, &d1.gid);
		ret = rt_modify(&u0, &at, IBV_QP_STATE | IBV_QP_AV |
				IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				IBV_QP_RQ_PSN);
		RT_CHECK(ret == 0, "UC to RTR: %s", strerror(ret));
		memset(&at, 0, sizeof(at));
		at.qp_state = IBV_QPS_RTS;
		at.sq_psn = u0.psn;
		ret = rt_modify(&u0, &at, IBV_QP_STATE | IBV_QP_SQ_PSN);
		RT_CHECK(ret == 0, "UC to RTS: %s", strerror(ret));
		s = rt_sge(&src, 64, 8);
		ret = rt_try_send(&u0, 4, IBV_WR_RDMA_WRITE, &s, 1,
				  IBV_SEND_SIGNALED, 0, (uintptr_t)t,
				  tgt.mr->rkey);
		RT_CHECK(ret == 0, "UC RDMA_WRITE posts: %s", strerror(ret));
		s = rt_sge(&src, 0, 8);
		ret = rt_try_send(&u0, 4, IBV_WR_ATOMIC_WRITE, &s, 1,
				  IBV_SEND_SIGNALED, 0, (uintptr_t)t,
				  tgt.mr->rkey);
		RT_CHECK(ret == EINVAL, "UC: %s, expected EINVAL",
			 strerror(ret));
		rt_expect_wc(u0.scq, "UC RDMA_WRITE", 4, IBV_WC_SUCCESS,
			     IBV_WC_RDMA_WRITE);
		rt_ep_destroy(&u0);
		rt_ep_destroy(&u1);
	}

	rt_step("ibv_wr_atomic_write on a QP with IBV_QP_EX_WITH_ATOMIC_WRITE");
	rt_ep_create_ex_ops(&a, &d0, IBV_QP_EX_WITH_ATOMIC_WRITE);
	rt_ep_create_ex_ops(&b, &d1, IBV_QP_EX_WITH_ATOMIC_WRITE);
	rt_rc_connect(&a, &b, &o);
	v = rt_rand64(&rt_rng);
	ret = rt_try_atomic_write_ex(&a, 5, t, tgt.mr->rkey, v);
	RT_CHECK(ret == 0, "ibv_wr_complete: %s", strerror(ret));
	wc = rt_expect_wc(a.scq, "ibv_wr_atomic_write", 5, IBV_WC_SUCCESS,
			  IBV_WC_ATOMIC_WRITE);
	RT_CHECK(wc.byte_len == 8, "byte_len %u, expected 8", wc.byte_len);
	RT_CHECK(__atomic_load_n(t, __ATOMIC_ACQUIRE) == v, "target 0x%" PRIx64
		 ", expected 0x%" PRIx64, *t, v);
	rt_ep_destroy(&a);
	rt_ep_destroy(&b);

	rt_step("ibv_wr_atomic_write on a QP without "
		"IBV_QP_EX_WITH_ATOMIC_WRITE: ibv_wr_complete EINVAL");
	rt_ep_create_ex(&a, &d0);
	rt_ep_create_ex(&b, &d1);
	rt_rc_connect(&a, &b, &o);
	ret = rt_try_atomic_write_ex(&a, 6, t, tgt.mr->rkey, ~v);
	RT_CHECK(ret == EINVAL, "ibv_wr_complete: %s, expected EINVAL",
		 strerror(ret));
	rt_expect_empty(a.scq, 20, "nothing posted");
	RT_CHECK(*t == v, "target changed to 0x%" PRIx64, *t);
	rt_ep_destroy(&a);
	rt_ep_destroy(&b);
	rt_buf_free(&src);
	rt_buf_free(&rdb);
	rt_buf_free(&tgt);

	rt_bad_request(&d0, &d1, "ATOMIC_WRITE at a misaligned address "
		       "(target + 4): NAK invalid request", IBV_WR_ATOMIC_WRITE,
		       RT_ACCESS_ALL, 8, 4096, 4, 0, RT_ACCESS_ALL,
		       IBV_WC_REM_INV_REQ_ERR);
	rt_bad_request(&d0, &d1, "ATOMIC_WRITE into an MR without "
		       "IBV_ACCESS_REMOTE_WRITE: NAK remote access error",
		       IBV_WR_ATOMIC_WRITE,
		       IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ, 8,
		       4096, 0, 0, RT_ACCESS_ALL, IBV_WC_REM_ACCESS_ERR);
	rt_bad_request(&d0, &d1, "ATOMIC_WRITE with a wrong rkey: NAK remote "
		       "access error", IBV_WR_ATOMIC_WRITE, RT_ACCESS_ALL, 8,
		       4096, 0, 0x80, RT_ACCESS_ALL, IBV_WC_REM_ACCESS_ERR);
	rt_bad_request(&d0, &d1, "ATOMIC_WRITE to a QP without "
		       "IBV_ACCESS_REMOTE_WRITE: NAK invalid request",
		       IBV_WR_ATOMIC_WRITE, RT_ACCESS_ALL, 8, 4096, 0, 0,
		       IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ,
		       IBV_WC_REM_INV_REQ_ERR);
	rt_dev_close(&d0);
	rt_dev_close(&d1);
}

/*
 * One counter, hammered at once: rocepmd0's QP and rocepmd1's QP each
 * run RT_RACE_N FETCH_AND_ADD 1 on it (it is registered on both devices,
 * each request executed by the other device's responder), while this
 * thread adds 1 RT_RACE_N times with the CPU's own atomic.  No increment
 * may be lost: the final value is exact, and the original values all
 * the adders saw are distinct (each one once).  rc_atomic_lossy does the
 * same under the faults of two-ports-lossy.ini.in: requests and ATOMIC
 * ACKs dropped, duplicated, reordered, corrupted; every resent request
 * is answered from the replay cache, never executed twice.
 */
#define RT_RACE_N	4000u
#define RT_RACE_WIN	16u

static int
rt_u64_cmp(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;

	return a < b ? -1 : a > b;
}

/*
 * Under loss: ATOMIC WRITE k * 1000, then two FETCH_AND_ADDs of 1 of the
 * same word, for k = 1..N on one QP, a window of 16 in flight.  Every
 * operation completes, in order, and the adds find k * 1000 and
 * k * 1000 + 1: ATOMIC WRITEs keep their place among the atomics through
 * go-back-N.  (A duplicate ATOMIC WRITE executed again is mostly
 * invisible here: go-back-N resends the adds after it too, which the
 * replay cache answers, and the next write overwrites the word.)
 */
static void
rt_atomic_write_lossy(struct rt_ep *req, struct rt_buf *res, uint64_t *w,
		      uint32_t rkey)
{
	enum { STEPS = 3, SLOTS = RT_RACE_WIN / STEPS + 1 };
	uint64_t *val = (uint64_t *)res->p, *orig = val + SLOTS;
	uint64_t dup0 = rt_stat(1, "duplicate_request");
	uint32_t posted = 0, done = 0, n = RT_RACE_N / 4;
	struct ibv_wc wc[RT_RACE_WIN];
	double t0 = rt_now();

	rt_step("%u ATOMIC WRITEs, each followed by two FETCH_AND_ADDs of "
		"the same word, under loss: every add finds what the write "
		"and the add before it left", n);
	__atomic_store_n(w, 0, __ATOMIC_RELEASE);
	while (done < STEPS * n) {
		while (posted < STEPS * n && posted - done < RT_RACE_WIN) {
			uint32_t k = posted / STEPS, j = posted % STEPS;
			uint32_t slot = k % SLOTS;
			struct ibv_sge s;

			if (j == 0) {
				val[slot] = (uint64_t)(k + 1) * 1000u;
				s = rt_sge(res, slot * 8u, 8);
				rt_post_send(req, posted, IBV_WR_ATOMIC_WRITE,
					     &s, 1, IBV_SEND_SIGNALED, 0,
					     (uintptr_t)w, rkey);
			} else {
				s = rt_sge(res, (SLOTS + slot * 2u + j - 1) *
					   8u, 8);
				rt_post_atomic(req, false, posted,
					       IBV_WR_ATOMIC_FETCH_AND_ADD, &s,
					       (uintptr_t)w, rkey, 1, 0);
			}
			posted++;
		}
		int got = ibv_poll_cq(req->scq, RT_RACE_WIN, wc);

		RT_CHECK(got >= 0, "ibv_poll_cq: %d", got);
		for (int i = 0; i < got; i++, done++) {
			uint32_t k = done / STEPS, j = done % STEPS;
			uint64_t want = (uint64_t)(k + 1) * 1000u + j - 1;
			uint64_t found = j == 0 ? 0 :
				orig[(k % SLOTS) * 2u + j - 1];

			RT_CHECK(wc[i].status == IBV_WC_SUCCESS &&
				 wc[i].wr_id == done, "wr_id %" PRIu64
				 " status %s, expected %u success",
				 wc[i].wr_id, ibv_wc_status_str(wc[i].status),
				 done);
			if (j != 0)
				RT_CHECK(found == want, "add %u.%u found %"
					 PRIu64 ", expected %" PRIu64, k, j,
					 found, want);
		}
		RT_CHECK(rt_now() - t0 < rt_timeout_s * 4, "stuck: %u/%u done",
			 done, STEPS * n);
	}
	RT_CHECK(*w == (uint64_t)n * 1000u + 2, "the word is %" PRIu64
		 ", expected %u", *w, n * 1000u + 2);
	printf("    rocepmd1: %" PRIu64 " more duplicate requests answered\n",
	       rt_stat(1, "duplicate_request") - dup0);
}

static void
rt_atomic_race(bool lossy)
{
	struct rt_rc_opts o = rt_rc_default;
	struct rt_dev d0, d1;
	struct rt_ep req[2], resp[2];
	struct rt_buf cnt, res[2];
	struct ibv_mr *mr1;
	uint32_t posted[2] = { 0, 0 }, done[2] = { 0, 0 }, cpu = 0;
	uint64_t *seen, *c, c0, total = 3ull * RT_RACE_N;
	double t0;

	o.access = RT_ACCESS_ATOMIC;
	if (lossy)
		o.timeout = 10;	/* 4 ms: tail losses wait for the timer */
	rt_dev_open(&d0, RT_DEV0);
	rt_dev_open(&d1, RT_DEV1);
	/* req[0] on rocepmd0 -> resp[0] on rocepmd1, and the other way. */
	rt_rc_pair(&req[0], &d0, &resp[0], &d1, &o);
	rt_rc_pair(&req[1], &d1, &resp[1], &d0, &o);
	rt_buf_alloc(&cnt, &d0, 4096, RT_ACCESS_ATOMIC);
	mr1 = ibv_reg_mr(d1.pd, cnt.p, cnt.len, RT_ACCESS_ATOMIC);
	RT_CHECK(mr1 != NULL, "ibv_reg_mr(rocepmd1, the counter): %s",
		 strerror(errno));
	for (int i = 0; i < 2; i++)
		rt_buf_alloc(&res[i], req[i].dev, RT_RACE_N * 8,
			     IBV_ACCESS_LOCAL_WRITE);
	seen = calloc(total, sizeof(*seen));
	RT_CHECK(seen != NULL, "calloc");
	c = (uint64_t *)cnt.p;
	c0 = rt_rand64(&rt_rng) >> 1;
	__atomic_store_n(c, c0, __ATOMIC_RELEASE);

	rt_step("%u FETCH_AND_ADD 1 from each device's QP and %u CPU atomic "
		"adds, all on one counter", RT_RACE_N, RT_RACE_N);
	t0 = rt_now();
	while (done[0] < RT_RACE_N || done[1] < RT_RACE_N || cpu < RT_RACE_N) {
		for (int i = 0; i < 2; i++) {
			struct ibv_wc wc[RT_RACE_WIN];
			int n;

			while (posted[i] < RT_RACE_N &&
			       posted[i] - done[i] < RT_RACE_WIN) {
				struct ibv_sge s = rt_sge(&res[i],
							  posted[i] * 8u, 8);

				rt_post_atomic(&req[i], false, posted[i],
					       IBV_WR_ATOMIC_FETCH_AND_ADD, &s,
					       (uintptr_t)c, i == 0 ?
					       mr1->rkey : cnt.mr->rkey, 1, 0);
				posted[i]++;
			}
			n = ibv_poll_cq(req[i].scq, RT_RACE_WIN, wc);
			RT_CHECK(n >= 0, "ibv_poll_cq: %d", n);
			for (int k = 0; k < n; k++) {
				RT_CHECK(wc[k].status == IBV_WC_SUCCESS &&
					 wc[k].wr_id == done[i], "QP %d: wr_id "
					 "%" PRIu64 " status %s, expected %u "
					 "success", i, wc[k].wr_id,
					 ibv_wc_status_str(wc[k].status),
					 done[i]);
				done[i]++;
			}
		}
		for (int k = 0; k < 4 && cpu < RT_RACE_N; k++)
			seen[2 * RT_RACE_N + cpu++] =
				__atomic_fetch_add(c, 1, __ATOMIC_SEQ_CST);
		RT_CHECK(rt_now() - t0 < rt_timeout_s * 4, "stuck: %u/%u "
			 "atomics done", done[0], done[1]);
	}
	printf("    %u remote + %u CPU atomics in %.3f s\n", 2 * RT_RACE_N,
	       RT_RACE_N, rt_now() - t0);
	RT_CHECK(*c == c0 + total, "counter 0x%" PRIx64 ", expected 0x%" PRIx64
		 ": %" PRId64 " increments lost", *c, c0 + total,
		 (int64_t)(c0 + total - *c));
	memcpy(seen, res[0].p, RT_RACE_N * 8);
	memcpy(seen + RT_RACE_N, res[1].p, RT_RACE_N * 8);
	qsort(seen, total, sizeof(*seen), rt_u64_cmp);
	for (uint64_t i = 0; i < total; i++)
		RT_CHECK(seen[i] == c0 + i, "original values: the %" PRIu64
			 "th smallest is 0x%" PRIx64 ", expected 0x%" PRIx64
			 " (one seen twice, or one skipped)", i, seen[i],
			 c0 + i);
	free(seen);
	if (lossy) {
		/* Lost ATOMIC ACKs were answered from the replay caches. */
		for (unsigned int d = 0; d < 2; d++) {
			uint64_t dup = rt_stat(d, "duplicate_request");

			printf("    rocepmd%u: duplicate_request %" PRIu64
			       " faults_injected %" PRIu64 "\n", d, dup,
			       rt_stat(d, "faults_injected"));
			RT_CHECK(dup > 0, "rocepmd%u answered no duplicate "
				 "under loss", d);
		}
		rt_atomic_write_lossy(&req[0], &res[0], c + 1, mr1->rkey);
	}
	RT_CHECK(ibv_dereg_mr(mr1) == 0, "ibv_dereg_mr");
	for (int i = 0; i < 2; i++) {
		rt_ep_destroy(&req[i]);
		rt_ep_destroy(&resp[i]);
		rt_buf_free(&res[i]);
	}
	rt_buf_free(&cnt);
	rt_dev_close(&d0);
	rt_dev_close(&d1);
}

static void rt_case_rc_atomic_race(void) { rt_atomic_race(false); }
static void rt_case_rc_atomic_lossy(void) { rt_atomic_race(true); }

/* ----------------------------------------------------------------- main */

/* The cases: test_verbs.def, which meson.build reads too. */
#define RT_CASE_FN(name) rt_case_##name
static const struct rt_case rt_cases[] = {
#include "test_verbs.def"
};

int
main(int argc, char **argv)
{
	return rt_main(argc, argv, rt_cases,
		       sizeof(rt_cases) / sizeof(rt_cases[0]));
}
