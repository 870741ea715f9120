/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The engine's access to registered memory.
 *
 * An MR of the engine's own process (an embedded engine: the verbs program
 * and the engine share an address space) is reached with memcpy.  An MR of
 * an attached process (rp_attach.h) lives in another address space: the
 * engine copies through the kernel with process_vm_readv/writev, which
 * takes any memory the process has mapped (heap, stack, files, huge
 * pages) without pinning it, and turns a bad address into EFAULT, never
 * into a fault of the engine.  The permission is the host's: it must be
 * able to ptrace the process (same user, or CAP_SYS_PTRACE), which the
 * attach server checks when the process attaches.
 */

#include <errno.h>
#include <string.h>
#include <sys/uio.h>

#include "rp_obj.h"

static int
mem_remote(pid_t pid, void *local, uint8_t *remote, uint32_t n, bool write)
{
	struct iovec l = { .iov_base = local, .iov_len = n };
	struct iovec r = { .iov_base = remote, .iov_len = n };
	ssize_t done;

	done = write ? process_vm_writev(pid, &l, 1, &r, 1, 0) :
		process_vm_readv(pid, &l, 1, &r, 1, 0);
	return done == (ssize_t)n ? 0 : -EFAULT;
}

int
rp_mem_write(const struct rp_mr *m, uint64_t va, const void *src, uint32_t n)
{
	uint8_t *p = m->addr + (va - m->iova);

	if (likely(m->pid == 0)) {
		memcpy(p, src, n);
		return 0;
	}
	return mem_remote(m->pid, (void *)(uintptr_t)src, p, n, true);
}

int
rp_mem_read(const struct rp_mr *m, uint64_t va, void *dst, uint32_t n)
{
	const uint8_t *p = m->addr + (va - m->iova);

	if (likely(m->pid == 0)) {
		memcpy(dst, p, n);
		return 0;
	}
	return mem_remote(m->pid, dst, (uint8_t *)(uintptr_t)p, n, false);
}

/*
 * An 8-byte atomic at va (8-byte aligned, checked by the caller).  In
 * another process it is a read, the operation and a write by this lcore:
 * atomic with respect to every other RDMA atomic of the device (the lcore
 * runs them one at a time), not to the CPUs of the process itself, which
 * is what IBV_ATOMIC_HCA promises.
 */
int
rp_mem_atomic(const struct rp_mr *m, uint64_t va, bool cmp_swap,
	      uint64_t compare_add, uint64_t swap, uint64_t *orig)
{
	uint64_t *p = (uint64_t *)(void *)(m->addr + (va - m->iova));
	uint64_t v;
	int ret;

	if (likely(m->pid == 0)) {
		if (cmp_swap) {
			v = compare_add;
			/* On a mismatch v becomes the value found. */
			__atomic_compare_exchange_n(p, &v, swap, false,
						    __ATOMIC_SEQ_CST,
						    __ATOMIC_SEQ_CST);
		} else {
			v = __atomic_fetch_add(p, compare_add,
					       __ATOMIC_SEQ_CST);
		}
		*orig = v;
		return 0;
	}
	ret = mem_remote(m->pid, &v, (uint8_t *)p, sizeof(v), false);
	if (ret != 0)
		return ret;
	*orig = v;
	if (cmp_swap) {
		if (v != compare_add)
			return 0;
		v = swap;
	} else {
		v += compare_add;
	}
	return mem_remote(m->pid, &v, (uint8_t *)p, sizeof(v), true);
}
