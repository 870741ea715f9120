/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Tag matcher: the posting-ordered tag list of a TM-SRQ with exact tags
 * indexed by an rte_hash (see rp_tm_list.h).
 */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_common.h>
#include <rte_errno.h>
#include <rte_hash.h>
#include <rte_hash_crc.h>
#include <rte_malloc.h>

#include "rp_tm_list.h"

int
rp_tm_list_init(struct rp_tm_list *l, uint32_t size, const char *name)
{
	struct rte_hash_parameters hp = {
		.name = name,
		/* rte_hash wants room to spare; the extendable table makes
		 * `entries` keys always fit, whatever their hash. */
		.entries = RTE_MAX(size, 8u),
		.key_len = sizeof(struct rp_tm_key),
		.hash_func = rte_hash_crc,
		.socket_id = SOCKET_ID_ANY,
		.extra_flag = RTE_HASH_EXTRA_FLAGS_EXT_TABLE,
	};
	int32_t max_key;

	memset(l, 0, sizeof(*l));
	l->size = size;
	l->wc_head = l->wc_tail = RP_TM_NONE;
	l->elig_limit = UINT64_MAX;
	l->ent = rte_zmalloc("rp_tm_ent", sizeof(*l->ent) * RTE_MAX(size, 1u),
			     RTE_CACHE_LINE_SIZE);
	if (l->ent == NULL)
		return -ENOMEM;
	l->hash = rte_hash_create(&hp);
	if (l->hash == NULL) {
		int ret = rte_errno != 0 ? -rte_errno : -ENOMEM;

		rte_free(l->ent);
		l->ent = NULL;
		return ret;
	}
	/* Key positions run up to the hash's largest key id. */
	max_key = rte_hash_max_key_id(l->hash);
	l->nr_bkt = (uint32_t)RTE_MAX(max_key, 0) + 1;
	l->bkt = rte_zmalloc("rp_tm_bkt", sizeof(*l->bkt) * l->nr_bkt,
			     RTE_CACHE_LINE_SIZE);
	if (l->bkt == NULL) {
		rp_tm_list_fini(l);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < l->nr_bkt; i++)
		l->bkt[i].head = l->bkt[i].tail = RP_TM_NONE;
	return 0;
}

void
rp_tm_list_fini(struct rp_tm_list *l)
{
	rte_hash_free(l->hash);
	rte_free(l->bkt);
	rte_free(l->ent);
	memset(l, 0, sizeof(*l));
}

/* Append `idx` to a list given by its head and tail words. */
static void
list_append(struct rp_tm_list *l, uint32_t *head, uint32_t *tail, uint32_t idx)
{
	struct rp_tm_entry *e = &l->ent[idx];

	e->next = RP_TM_NONE;
	e->prev = *tail;
	if (*tail != RP_TM_NONE)
		l->ent[*tail].next = idx;
	else
		*head = idx;
	*tail = idx;
}

static void
list_unlink(struct rp_tm_list *l, uint32_t *head, uint32_t *tail, uint32_t idx)
{
	struct rp_tm_entry *e = &l->ent[idx];

	if (e->prev != RP_TM_NONE)
		l->ent[e->prev].next = e->next;
	else
		*head = e->next;
	if (e->next != RP_TM_NONE)
		l->ent[e->next].prev = e->prev;
	else
		*tail = e->prev;
}

/* The class of `mask`, created if there is room; NULL: overflow. */
static struct rp_tm_class *
class_get(struct rp_tm_list *l, uint64_t mask)
{
	for (uint32_t i = 0; i < l->nr_cls; i++)
		if (l->cls[i].mask == mask)
			return &l->cls[i];
	if (l->nr_cls == RP_TM_CLASSES)
		return NULL;
	l->cls[l->nr_cls].mask = mask;
	l->cls[l->nr_cls].refs = 0;
	return &l->cls[l->nr_cls++];
}

static void
class_put(struct rp_tm_list *l, uint64_t mask)
{
	for (uint32_t i = 0; i < l->nr_cls; i++) {
		if (l->cls[i].mask != mask)
			continue;
		if (--l->cls[i].refs == 0)
			l->cls[i] = l->cls[--l->nr_cls];
		return;
	}
}

int
rp_tm_list_add(struct rp_tm_list *l, uint32_t idx, uint64_t tag,
	       uint64_t mask, bool eligible)
{
	struct rp_tm_entry *e = &l->ent[idx];
	struct rp_tm_class *c;

	if (idx >= l->size || e->listed)
		return -EINVAL;
	e->tag = tag;
	e->mask = mask;
	e->seq = l->seq++;
	if (!eligible && l->elig_limit == UINT64_MAX)
		l->elig_limit = e->seq;
	c = class_get(l, mask);
	if (c != NULL) {
		const struct rp_tm_key key = { .mask = mask, .tag = tag };
		struct rp_tm_bucket *b;
		int32_t pos;

		/*
		 * Look first: DPDK 22.11's rte_hash_add_key() can return a new
		 * position for a key it already holds (seen after deletes of
		 * other keys; test/tm/test_tm_list.c), which would split the
		 * entries of one key over two buckets.  One writer: no race.
		 */
		pos = rte_hash_lookup(l->hash, &key);
		if (pos < 0)
			pos = rte_hash_add_key(l->hash, &key);
		if (pos < 0 || (uint32_t)pos >= l->nr_bkt) {
			if (c->refs == 0)
				class_put(l, mask);
			return -ENOSPC;
		}
		c->refs++;
		/* A new key's bucket is empty: emptied when its key went. */
		b = &l->bkt[pos];
		e->bucket = (uint32_t)pos;
		list_append(l, &b->head, &b->tail, idx);
	} else {
		e->bucket = RP_TM_NONE;
		list_append(l, &l->wc_head, &l->wc_tail, idx);
	}
	e->listed = true;
	l->nr_listed++;
	return 0;
}

void
rp_tm_list_del(struct rp_tm_list *l, uint32_t idx)
{
	struct rp_tm_entry *e = &l->ent[idx];

	if (!e->listed)
		return;
	if (e->bucket != RP_TM_NONE) {
		struct rp_tm_bucket *b = &l->bkt[e->bucket];

		list_unlink(l, &b->head, &b->tail, idx);
		if (b->head == RP_TM_NONE) {
			/* Last entry of this key: the key goes too. */
			const struct rp_tm_key key = {
				.mask = e->mask,
				.tag = e->tag,
			};

			rte_hash_del_key(l->hash, &key);
		}
		class_put(l, e->mask);
	} else {
		list_unlink(l, &l->wc_head, &l->wc_tail, idx);
	}
	e->listed = false;
	l->nr_listed--;
}

uint32_t
rp_tm_list_match(const struct rp_tm_list *l, uint64_t tag)
{
	uint32_t best = RP_TM_NONE;
	uint64_t best_seq = l->elig_limit;

	if (l->nr_listed == 0)
		return RP_TM_NONE;
	/* One bucket per mask in use: its oldest entry is its candidate. */
	for (uint32_t i = 0; i < l->nr_cls; i++) {
		const struct rp_tm_key key = {
			.mask = l->cls[i].mask,
			.tag = tag & l->cls[i].mask,
		};
		int32_t pos = rte_hash_lookup(l->hash, &key);
		uint32_t h;

		if (pos < 0 || (uint32_t)pos >= l->nr_bkt)
			continue;
		h = l->bkt[pos].head;
		if (h != RP_TM_NONE && l->ent[h].seq < best_seq) {
			best = h;
			best_seq = l->ent[h].seq;
		}
	}
	/* Overflow entries older than the best candidate (and eligible). */
	for (uint32_t i = l->wc_head; i != RP_TM_NONE; i = l->ent[i].next) {
		const struct rp_tm_entry *e = &l->ent[i];

		if (e->seq >= best_seq)
			break;
		if ((tag & e->mask) == e->tag)
			return i;
	}
	return best;
}
