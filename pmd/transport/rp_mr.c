/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Protection domains, memory regions and address handles, and every access
 * to application memory: a key, a PD, bounds and access rights are checked
 * before a byte is copied.
 */

#include <errno.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "rp_transport.h"
#include "rp_xmit.h"

int
rp_pd_alloc(struct rp_dev *dev, struct rp_ctrl_pd *pd)
{
	for (uint32_t i = 1; i < RP_MAX_PD; i++) {
		if (!dev->pd_used[i]) {
			dev->pd_used[i] = true;
			dev->pd_refs[i] = 0;
			pd->pdn = i;
			return 0;
		}
	}
	return -ENOMEM;
}

static bool
pd_valid(const struct rp_dev *dev, uint32_t pdn)
{
	return pdn < RP_MAX_PD && dev->pd_used[pdn];
}

int
rp_pd_free(struct rp_dev *dev, struct rp_ctrl_pd *pd)
{
	if (!pd_valid(dev, pd->pdn))
		return -EINVAL;
	if (dev->pd_refs[pd->pdn] != 0)
		return -EBUSY;
	dev->pd_used[pd->pdn] = false;
	return 0;
}

#define RP_ACCESS_ALL (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
	IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC | \
	IBV_ACCESS_MW_BIND | IBV_ACCESS_ZERO_BASED | IBV_ACCESS_ON_DEMAND | \
	IBV_ACCESS_HUGETLB | IBV_ACCESS_RELAXED_ORDERING)

/*
 * An implicit on-demand MR (ibv_reg_mr(3): NULL, SIZE_MAX, ON_DEMAND): a
 * key over the whole address space, iova == address.
 */
static bool
mr_implicit(uint32_t access, uint64_t addr, uint64_t length, uint64_t iova)
{
	return (access & IBV_ACCESS_ON_DEMAND) && addr == 0 && iova == 0 &&
		length == UINT64_MAX;
}

/* What a registration (or a change of one) must satisfy. */
static int
mr_check(const struct rp_dev *dev, uint32_t pdn, uint32_t access,
	 uint64_t addr, uint64_t length, uint64_t iova)
{
	uint32_t remote = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC;

	if (!pd_valid(dev, pdn) || (access & ~RP_ACCESS_ALL) != 0)
		return -EINVAL;
	/* IB 10.6.3.1: remote write or atomic needs local write. */
	if ((access & remote) && !(access & IBV_ACCESS_LOCAL_WRITE))
		return -EINVAL;
	if (mr_implicit(access, addr, length, iova))
		return 0;
	if (addr == 0 && length != 0)
		return -EINVAL;
	if (length > (1ull << 40) || iova + length < iova)
		return -EINVAL;
	return 0;
}

/*
 * A free entry of the key table (MRs and windows), with a new key: the
 * slot's index, and a generation that changes at every use of the slot
 * (RP_KEY_GEN_BITS: a peer's stale rkey stays dead for 2^20 uses).  A
 * window's consumer picks the low 8 bits of its key at every bind, so a
 * window takes a whole group of 256 generations: no key a window of the
 * slot could have had comes back before the counter wraps (4096 window
 * allocations of the slot, at least).
 */
struct rp_mr *
rp_key_alloc(struct rp_dev *dev, uint8_t kind, uint32_t pdn)
{
	for (uint32_t i = 1; i < RP_MAX_MR; i++) {
		struct rp_mr *m = &dev->mr[i];
		uint32_t gen;

		if (m->valid)
			continue;
		if (kind == RP_KEY_MR) {
			gen = (dev->mr_gen[i] + 1) & RP_KEY_GEN_MASK;
			dev->mr_gen[i] = gen;
		} else {
			gen = ((dev->mr_gen[i] | 0xffu) + 1) & RP_KEY_GEN_MASK;
			dev->mr_gen[i] = gen | 0xffu;
		}
		memset(m, 0, sizeof(*m));
		m->key = i << RP_KEY_GEN_BITS | gen;
		m->kind = kind;
		m->pdn = pdn;
		m->valid = true;
		dev->pd_refs[pdn]++;
		return m;
	}
	return NULL;
}

int
rp_mr_reg(struct rp_dev *dev, struct rp_ctrl_mr *mr)
{
	struct rp_mr *m;
	bool implicit;
	int ret;

	ret = mr_check(dev, mr->pdn, mr->access, mr->addr, mr->length,
		       mr->iova);
	if (ret < 0)
		return ret;
	/*
	 * An attached process's memory is reached through its
	 * /proc/self/mem, which writes even its read-only mappings: a key
	 * over all of it is not offered (the shim does not advertise it).
	 */
	implicit = mr_implicit(mr->access, mr->addr, mr->length, mr->iova);
	if (implicit && mr->mem != 0)
		return -EOPNOTSUPP;
	m = rp_key_alloc(dev, RP_KEY_MR, mr->pdn);
	if (m == NULL)
		return -ENOMEM;
	m->implicit = implicit;
	m->access = mr->access;
	m->addr = (uint8_t *)(uintptr_t)mr->addr;
	m->mem = mr->mem;
	m->iova = mr->iova;
	m->length = mr->length;
	mr->lkey = m->key;
	mr->rkey = m->key;
	return 0;
}

/* The valid entry of the key table `key` names (MR or window), or NULL. */
struct rp_mr *
rp_key_entry(struct rp_dev *dev, uint32_t key)
{
	uint32_t idx = RP_KEY_IDX(key);

	if (idx == 0 || idx >= RP_MAX_MR || !dev->mr[idx].valid ||
	    dev->mr[idx].key != key)
		return NULL;
	return &dev->mr[idx];
}

/* The MR (not window) `lkey` names, or NULL. */
static struct rp_mr *
mr_entry(struct rp_dev *dev, uint32_t lkey)
{
	struct rp_mr *m = rp_key_entry(dev, lkey);

	return m != NULL && m->kind == RP_KEY_MR ? m : NULL;
}

/*
 * Frames that passes left in the shards' buffers (an inline pass defers
 * its frames to the caller's next pass) may refer to registered memory
 * (zero copy on transmit, rp_port.c): copied before the memory may go.
 * Control runs with every shard paused.
 */
static void
mr_unshare_frames(struct rp_dev *dev)
{
	for (uint32_t i = 0; i < dev->nr_shards; i++)
		rp_port_hold(&dev->sh[i].pq);
}

int
rp_mr_dereg(struct rp_dev *dev, struct rp_ctrl_mr *mr)
{
	struct rp_mr *m = mr_entry(dev, mr->lkey);

	if (m == NULL)
		return -EINVAL;
	/* Not while windows are bound to it (unbind them first). */
	if (m->nr_mw != 0)
		return -EBUSY;
	mr_unshare_frames(dev);
	m->valid = false;
	dev->pd_refs[m->pdn]--;
	return 0;
}

/*
 * ibv_rereg_mr(): change the translation, PD or access of an MR in place;
 * its keys stay.  Everything is checked before anything changes, so a
 * refused request leaves the MR as it was.  Deregistration and this run
 * on the lcore between packets: a request sees the MR before or after.
 */
int
rp_mr_rereg(struct rp_dev *dev, struct rp_ctrl_mr *mr)
{
	struct rp_mr *m = mr_entry(dev, mr->lkey);
	uint32_t pdn, access;
	uint64_t addr, length, iova;
	bool implicit;
	int ret;

	if (m == NULL ||
	    (mr->flags & ~(uint32_t)(IBV_REREG_MR_CHANGE_TRANSLATION |
				     IBV_REREG_MR_CHANGE_PD |
				     IBV_REREG_MR_CHANGE_ACCESS)) != 0)
		return -EINVAL;
	if (m->nr_mw != 0)
		return -EBUSY;
	pdn = (mr->flags & IBV_REREG_MR_CHANGE_PD) ? mr->pdn : m->pdn;
	access = (mr->flags & IBV_REREG_MR_CHANGE_ACCESS) ? mr->access :
		m->access;
	if (mr->flags & IBV_REREG_MR_CHANGE_TRANSLATION) {
		addr = mr->addr;
		length = mr->length;
		iova = mr->iova;
	} else {
		addr = (uintptr_t)m->addr;
		length = m->length;
		iova = m->iova;
	}
	ret = mr_check(dev, pdn, access, addr, length, iova);
	if (ret < 0)
		return ret;
	implicit = mr_implicit(access, addr, length, iova);
	if (implicit && ((mr->flags & IBV_REREG_MR_CHANGE_TRANSLATION) ?
			 mr->mem : m->mem) != 0)
		return -EOPNOTSUPP;	/* as rp_mr_reg() */
	mr_unshare_frames(dev);	/* the old translation may go */
	dev->pd_refs[m->pdn]--;
	dev->pd_refs[pdn]++;
	m->pdn = pdn;
	m->access = access;
	m->addr = (uint8_t *)(uintptr_t)addr;
	if (mr->flags & IBV_REREG_MR_CHANGE_TRANSLATION)
		m->mem = mr->mem;
	m->implicit = implicit;
	m->length = length;
	m->iova = iova;
	mr->rkey = m->key;
	return 0;
}

/*
 * The entry behind a key that covers [va, va + len) with the access asked
 * for (0 for local read), or NULL.  A window's rkey serves remote access
 * only (rp_rkey_lookup() adds the checks of a type 2 window); an unbound
 * window covers nothing.
 */
struct rp_mr *
rp_mr_lookup(struct rp_dev *dev, uint32_t key, uint32_t pdn, uint64_t va,
	     uint64_t len, uint32_t access)
{
	const uint32_t remote = IBV_ACCESS_REMOTE_READ |
		IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC;
	uint32_t idx = RP_KEY_IDX(key);
	struct rp_mr *m, *snap = NULL;

	/*
	 * A window is bound and unbound by the shard of the QP that binds
	 * it, and read by any shard: with several, the lookup copies it
	 * whole under the lock its writers take, and the access uses the
	 * copy (the memory it names stays registered until control runs,
	 * with every shard between passes).
	 */
	if (unlikely(dev->nr_shards > 1) && idx != 0 && idx < RP_MAX_MR &&
	    dev->mr[idx].kind != RP_KEY_MR) {
		snap = &rp_sh(dev)->mw_snap;
		rp_dev_shared_lock(dev);
		m = rp_key_entry(dev, key);
		if (m != NULL)
			*snap = *m;
		rp_dev_shared_unlock(dev);
		m = m != NULL ? snap : NULL;
	} else {
		m = rp_key_entry(dev, key);
	}
	if (m == NULL || m->pdn != pdn)
		return NULL;
	if (m->kind != RP_KEY_MR && (!m->bound || !(access & remote)))
		return NULL;
	if ((m->access & access) != access)
		return NULL;
	/* Subtractions: nothing wraps, for an implicit MR's 0..2^64-1 too. */
	if (va < m->iova || len > m->length || va - m->iova > m->length - len)
		return NULL;
	return m;
}

/* Check every SGE of a list; *total gets the byte count. */
int
rp_sge_check(struct rp_dev *dev, uint32_t pdn, const struct rp_sge *sge,
	     uint32_t nsge, uint32_t access, uint64_t *total)
{
	uint64_t sum = 0;

	for (uint32_t i = 0; i < nsge; i++) {
		if (sge[i].length == 0)
			continue;
		if (rp_mr_lookup(dev, sge[i].lkey, pdn, sge[i].addr,
				 sge[i].length, access) == NULL)
			return -EACCES;
		sum += sge[i].length;
	}
	*total = sum;
	return 0;
}

/* Walk an SGE list from byte `off`, calling back for each piece. */
static int
sge_walk(struct rp_dev *dev, uint32_t pdn, const struct rp_sge *sge,
	 uint32_t nsge, uint32_t off, uint8_t *buf, uint32_t len, bool to_sge,
	 uint64_t tag, bool pkt)
{
	for (uint32_t i = 0; i < nsge && len > 0; i++) {
		uint32_t l = sge[i].length;
		struct rp_mr *m;
		uint32_t n;
		int ret;

		if (off >= l) {
			off -= l;
			continue;
		}
		n = RTE_MIN(l - off, len);
		m = rp_mr_lookup(dev, sge[i].lkey, pdn, sge[i].addr + off, n,
				 to_sge ? IBV_ACCESS_LOCAL_WRITE : 0);
		if (m == NULL)
			return -EACCES;
		ret = to_sge ?
			rp_mem_write(dev, m, sge[i].addr + off, buf, n, pkt) :
			rp_mem_read(dev, m, sge[i].addr + off, buf, n,
				    tag == 0 ? 0 : tag + i, l - off);
		if (ret != 0)
			return ret;
		buf += n;
		len -= n;
		off = 0;
	}
	return len == 0 ? 0 : -EMSGSIZE;
}

/*
 * Where bytes [off, off + len) of an SGE list lie, when they are one piece
 * of memory of this process that may be read in place (an MR's, not an
 * attached process's nor an implicit one's); else NULL, and the caller
 * copies (rp_sge_copy_out(), which also tells why it cannot).
 */
const uint8_t *
rp_sge_direct(struct rp_dev *dev, uint32_t pdn, const struct rp_sge *sge,
	      uint32_t nsge, uint32_t off, uint32_t len)
{
	for (uint32_t i = 0; i < nsge; i++) {
		const struct rp_mr *m;

		if (off >= sge[i].length) {
			off -= sge[i].length;
			continue;
		}
		if (len > sge[i].length - off)
			return NULL;
		m = rp_mr_lookup(dev, sge[i].lkey, pdn, sge[i].addr + off, len,
				 0);
		if (m == NULL || m->mem != 0 || m->implicit)
			return NULL;
		return m->addr + (sge[i].addr + off - m->iova);
	}
	return NULL;
}

int
rp_sge_copy_out(struct rp_dev *dev, uint32_t pdn, const struct rp_sge *sge,
		uint32_t nsge, uint32_t off, uint8_t *dst, uint32_t len,
		uint64_t tag)
{
	return sge_walk(dev, pdn, sge, nsge, off, dst, len, false, tag, false);
}

int
rp_sge_copy_in(struct rp_dev *dev, uint32_t pdn, const struct rp_sge *sge,
	       uint32_t nsge, uint32_t off, const uint8_t *src, uint32_t len)
{
	return sge_walk(dev, pdn, sge, nsge, off, (uint8_t *)(uintptr_t)src,
			len, true, 0, false);
}

int
rp_sge_copy_in_pkt(struct rp_dev *dev, uint32_t pdn, const struct rp_sge *sge,
		   uint32_t nsge, uint32_t off, const uint8_t *src,
		   uint32_t len)
{
	return sge_walk(dev, pdn, sge, nsge, off, (uint8_t *)(uintptr_t)src,
			len, true, 0, true);
}

int
rp_ah_create(struct rp_dev *dev, struct rp_ctrl_ah *ah)
{
	if (!pd_valid(dev, ah->pdn))
		return -EINVAL;
	/* RoCE needs a GRH: the destination is the GID, the source one of
	 * ours of the same family (req_ud_addr reads it by index). */
	if (!ah->av.is_global ||
	    rp_gid_sgid(&dev->net, ah->av.sgid_index, ah->av.dgid) == NULL)
		return -EINVAL;
	for (uint32_t i = 1; i < RP_MAX_AH; i++) {
		struct rp_ah *a = &dev->ah[i];
		int ret;

		if (a->valid)
			continue;
		/* Resolving starts now, so the first send need not wait long;
		 * a destination no route reaches fails here, as in Linux. */
		ret = rp_xmit_dmac(dev, ah->av.dgid, a->dmac);
		if (ret == -ENETUNREACH)
			return ret;
		a->dmac_ok = ret == 0;
		a->valid = true;
		a->pdn = ah->pdn;
		a->av = ah->av;
		a->av.hop_limit = rp_xmit_hop_limit(dev, &ah->av);
		dev->pd_refs[ah->pdn]++;
		ah->ahn = i;
		return 0;
	}
	return -ENOMEM;
}

int
rp_ah_destroy(struct rp_dev *dev, struct rp_ctrl_ah *ah)
{
	if (ah->ahn == 0 || ah->ahn >= RP_MAX_AH || !dev->ah[ah->ahn].valid)
		return -EINVAL;
	rp_qp_drain_pd(dev, dev->ah[ah->ahn].pdn);	/* sends through it */
	dev->ah[ah->ahn].valid = false;
	dev->pd_refs[dev->ah[ah->ahn].pdn]--;
	return 0;
}
