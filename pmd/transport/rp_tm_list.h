/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The tag list of a TM-SRQ: the posted tags in posting order, with the
 * matching rule of ibv_post_srq_ops(3), (TMH.tag & entry.mask) ==
 * entry.tag, where the earliest eligible entry wins.
 *
 * Entries are indexed by (mask, tag) in an rte_hash whose buckets keep
 * their entries in posting order.  An entry (T, M) matches a message tag t
 * exactly when the bucket (M, t & M) holds it, so a match probes one
 * bucket per distinct mask in use: exact tags (mask all ones) and the few
 * masks MPI's wildcards use each cost one O(1) lookup, whatever the number
 * of entries.  Up to RP_TM_CLASSES distinct masks are indexed; entries
 * with further masks sit in one posting-ordered overflow list, walked only
 * up to the best indexed candidate's sequence number (decision D6 of
 * shared/spec/tag-matching.md, extended from exact tags to every mask
 * class).
 *
 * Eligibility (decision D1): entries added while software and device
 * disagree on the unexpected count are not matched until they agree
 * again.  Such entries are always the newest ones, so one sequence-number
 * limit says which are eligible.
 *
 * Single writer (the engine lcore owning the SRQ); nothing here locks or
 * allocates after rp_tm_list_init().
 */

#ifndef _RP_TM_LIST_H_
#define _RP_TM_LIST_H_

#include <stdbool.h>
#include <stdint.h>

#define RP_TM_NONE		UINT32_MAX
#define RP_TM_MASK_EXACT	UINT64_MAX
#define RP_TM_CLASSES		8	/* distinct masks indexed */

struct rte_hash;

struct rp_tm_entry {
	uint64_t tag;
	uint64_t mask;
	uint64_t seq;			/* posting order */
	uint32_t prev;			/* in its bucket or the wildcard list */
	uint32_t next;
	uint32_t bucket;		/* bucket index, or RP_TM_NONE (overflow) */
	bool listed;
};

struct rp_tm_bucket {
	uint32_t head;			/* oldest entry with this tag */
	uint32_t tail;
};

/* The hash key of a bucket: the entries with this mask and tag. */
struct rp_tm_key {
	uint64_t mask;
	uint64_t tag;
};

/* A mask in use by indexed entries. */
struct rp_tm_class {
	uint64_t mask;
	uint32_t refs;			/* listed entries with this mask */
};

struct rp_tm_list {
	uint32_t size;			/* entries */
	uint32_t nr_listed;
	struct rp_tm_entry *ent;
	struct rp_tm_bucket *bkt;	/* indexed by the hash's key position */
	uint32_t nr_bkt;
	struct rte_hash *hash;		/* (mask, tag) -> bucket */
	struct rp_tm_class cls[RP_TM_CLASSES];
	uint32_t nr_cls;
	uint32_t wc_head;		/* overflow entries, oldest first */
	uint32_t wc_tail;
	uint64_t seq;			/* next sequence number */
	uint64_t elig_limit;		/* entries with seq >= it: not eligible */
};

/* Allocate a list of `size` entries (rte_malloc, rte_hash): 0 or -errno. */
int rp_tm_list_init(struct rp_tm_list *l, uint32_t size, const char *name);
void rp_tm_list_fini(struct rp_tm_list *l);

/*
 * List entry `idx` (< size, not listed) with a tag and mask.  `eligible`
 * false makes it, and every entry added after it, ineligible until
 * rp_tm_list_sync().  0, or -ENOSPC if the hash cannot take the tag.
 */
int rp_tm_list_add(struct rp_tm_list *l, uint32_t idx, uint64_t tag,
		   uint64_t mask, bool eligible);

/* Unlink entry `idx` (a match consumed it, or a DEL). */
void rp_tm_list_del(struct rp_tm_list *l, uint32_t idx);

/* Software and device agree again: every listed entry is eligible. */
static inline void
rp_tm_list_sync(struct rp_tm_list *l)
{
	l->elig_limit = UINT64_MAX;
}

/* The earliest eligible entry matching `tag`, or RP_TM_NONE. */
uint32_t rp_tm_list_match(const struct rp_tm_list *l, uint64_t tag);

#endif /* _RP_TM_LIST_H_ */
