/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The configuration loader's own declarations, shared by its files:
 *   rp_cfg.c        loading, the key table, sections
 *   rp_cfg_parse.c  value parsers and types, error messages
 *   rp_cfg_lint.c   the syntax pass
 *   rp_cfg_netdev.c the netdev key and the af_packet ring check
 *   rp_cfg_eal.c    EAL arguments
 * The public API is rocepmd.h's.
 */
#ifndef _RP_CONFIG_H_
#define _RP_CONFIG_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rte_common.h>
#include <rte_log.h>

#include "rocepmd.h"

/*
 * Words rp_cfg_eal_argv() may add to the [eal] args: program name, -l and
 * --main-lcore with their values, a --vdev or -a pair per port, --no-pci,
 * --no-huge -m 512, --in-memory or --no-shconf, --file-prefix=, five
 * --log-level options, and the closing NULL; besides, the [eal] args' own
 * --log-level options once more (at most RP_CFG_EAL_USER_ARGS words).
 */
#define RP_CFG_EAL_OWN_ARGS	(1 + 4 + 2 * RP_MAX_PORTS + 3 + 3 + 5 + 1)
#define RP_CFG_EAL_USER_ARGS	44	/* a literal: it is in messages */

enum rp_cfg_sect {
	RP_CFG_SECT_EAL,
	RP_CFG_SECT_ENGINE,
	RP_CFG_SECT_HOST,
	RP_CFG_SECT_PORT,
};

struct rp_cfg_key;

/* How one type of value is parsed and described. */
struct rp_cfg_type {
	/*
	 * Parse val into the field(s) of base (struct rp_config, or
	 * struct rp_port_cfg for port keys) named by key.
	 * @return 0, or -EINVAL with the reason in why
	 */
	int (*parse)(const struct rp_cfg_key *key, const char *val, void *base,
		     char *why, size_t len);
	/* Accepted values for error messages; NULL: key->min..key->max. */
	const char *accepted;
	/* A type of names (rp_cfg_parse_name()): the enum value of each,
	 * names[v], NULL for none */
	const char *const *names;
	unsigned int nb_names;
};

/* One key of one section. */
struct rp_cfg_key {
	const char *name;
	enum rp_cfg_sect sect;
	const struct rp_cfg_type *type;
	uint32_t min;		/* numeric range */
	uint32_t max;
	const char *def;	/* default, parsed like a value; NULL: none */
	bool required;
	size_t off;		/* field in struct rp_config or rp_port_cfg */
	size_t size;		/* its size (strings) */
	size_t aux_off;		/* second field: prefix, mac_set, list length */
};

/* Where errors go. */
struct rp_cfg_ctx {
	const char *path;
	char *err;
	size_t errlen;
};

/* ---- rp_cfg.c ---- */

/* The key named name of a section kind, or NULL. */
const struct rp_cfg_key *rp_cfg_key_find(enum rp_cfg_sect sect,
					 const char *name);

/* ---- rp_cfg_parse.c ---- */

/* The value types of rp_cfg_keys[]. */
extern const struct rp_cfg_type rp_cfg_type_u32;
extern const struct rp_cfg_type rp_cfg_type_bool;
extern const struct rp_cfg_type rp_cfg_type_u32_auto;
extern const struct rp_cfg_type rp_cfg_type_lcores;
extern const struct rp_cfg_type rp_cfg_type_idle;
extern const struct rp_cfg_type rp_cfg_type_tx_zc;
extern const struct rp_cfg_type rp_cfg_type_icrc;
extern const struct rp_cfg_type rp_cfg_type_eal_args;
extern const struct rp_cfg_type rp_cfg_type_log_level;
extern const struct rp_cfg_type rp_cfg_type_device;
extern const struct rp_cfg_type rp_cfg_type_netdev;
extern const struct rp_cfg_type rp_cfg_type_ipv4;
extern const struct rp_cfg_type rp_cfg_type_ipv6;
extern const struct rp_cfg_type rp_cfg_type_mac;
extern const struct rp_cfg_type rp_cfg_type_mtu;

/* [eal] log_level: the names EAL's --log-level takes, by RTE_LOG_* level. */
extern const char * const rp_log_level_names[RTE_LOG_DEBUG + 1];

/* Strict unsigned decimal: digits only, no sign, no overflow. */
int rp_cfg_parse_uint(const char *s, size_t n, uint32_t *out);

/*
 * Classify a device string: a vdev "net_<driver>[,args]" or a PCI address
 * with optional ",args".  Writes the ethdev name and returns 0 for a vdev,
 * 1 for PCI, -ENAMETOOLONG for a vdev name that does not fit len, -EINVAL
 * otherwise.
 */
int rp_cfg_device_name(const char *dev, char *name, size_t len);

/*
 * Write "PATH: [sect] key: why (accepted: ...)" to ctx's buffer (sect, key
 * and accepted may be NULL); returns rc.
 */
int __rte_format_printf(6, 7)
rp_cfg_fail(const struct rp_cfg_ctx *ctx, int rc, const char *sect,
	    const char *key, const char *accepted, const char *fmt, ...);

/* Accepted values of a key, for messages (in buf unless the type's). */
const char *rp_cfg_accepted(const struct rp_cfg_key *key, char *buf,
			    size_t len);

/* rp_cfg_fail() for a bad value val of key: why, and what is accepted. */
int rp_cfg_value_fail(const struct rp_cfg_ctx *ctx, const char *sect,
		      const struct rp_cfg_key *key, const char *val,
		      const char *why);

/* ---- rp_cfg_lint.c ---- */

/* The syntax pass over ctx->path, before rte_cfgfile reads it. */
int rp_cfg_lint(const struct rp_cfg_ctx *ctx);

/* ---- rp_cfg_netdev.c ---- */

/* A net_af_packet device's ring against the port's MTU; with mtu = auto,
 * the largest its frames hold (port->mtu_max). */
int rp_cfg_af_packet_check(const struct rp_cfg_ctx *ctx, const char *sect,
			   struct rp_port_cfg *port);

/* device and ipv4 given, or netdev instead (then bound here). */
int rp_cfg_port_netdev(const struct rp_cfg_ctx *ctx, const char *sect,
		       struct rp_port_cfg *port, unsigned int idx);

#endif /* _RP_CONFIG_H_ */
