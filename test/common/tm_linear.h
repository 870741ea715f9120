/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A plain linear tag list: every posted entry in posting order, walked from
 * the oldest on each match, with the predicate of ibv_post_srq_ops(3)
 * ((tag & mask) == entry.tag) and the eligibility rule of rp_tm_list.h.
 * Obviously correct and O(n): the reference the tag matcher is tested
 * against (test/tm/test_tm_list.c) and measured against
 * (bench/tm_match_bench.c).
 */

#ifndef _TM_LINEAR_H_
#define _TM_LINEAR_H_

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define TM_LIN_NONE	UINT32_MAX

struct tm_lin_ent {
	uint64_t tag;
	uint64_t mask;
	uint64_t seq;
	uint32_t idx;
};

struct tm_lin {
	uint32_t n;
	uint32_t cap;
	struct tm_lin_ent *e;
	uint64_t seq;
	uint64_t limit;		/* entries with seq >= limit: not eligible */
};

static inline int
tm_lin_init(struct tm_lin *l, uint32_t cap)
{
	memset(l, 0, sizeof(*l));
	l->cap = cap;
	l->limit = UINT64_MAX;
	l->e = calloc(cap ? cap : 1, sizeof(*l->e));
	return l->e != NULL ? 0 : -1;
}

static inline void
tm_lin_fini(struct tm_lin *l)
{
	free(l->e);
	l->e = NULL;
}

static inline void
tm_lin_add(struct tm_lin *l, uint32_t idx, uint64_t tag, uint64_t mask,
	   bool eligible)
{
	struct tm_lin_ent *e = &l->e[l->n++];

	e->tag = tag;
	e->mask = mask;
	e->seq = l->seq++;
	e->idx = idx;
	if (!eligible && l->limit == UINT64_MAX)
		l->limit = e->seq;
}

static inline void
tm_lin_del(struct tm_lin *l, uint32_t idx)
{
	for (uint32_t i = 0; i < l->n; i++) {
		if (l->e[i].idx == idx) {
			memmove(&l->e[i], &l->e[i + 1],
				sizeof(l->e[0]) * (l->n - i - 1));
			l->n--;
			return;
		}
	}
}

static inline void
tm_lin_sync(struct tm_lin *l)
{
	l->limit = UINT64_MAX;
}

static inline uint32_t
tm_lin_match(const struct tm_lin *l, uint64_t tag)
{
	for (uint32_t i = 0; i < l->n; i++) {
		if (l->e[i].seq >= l->limit)
			break;
		if ((tag & l->e[i].mask) == l->e[i].tag)
			return l->e[i].idx;
	}
	return TM_LIN_NONE;
}

#endif /* _TM_LINEAR_H_ */
