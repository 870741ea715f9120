/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Configuration loader (doc/guides/config.rst).
 *
 * The file is read twice.  A syntax pass of our own comes first, because
 * rte_cfgfile silently skips a line without '=' ("mtu 4096"), truncates long
 * names and values, and fails without saying why.  Then rte_cfgfile_load()
 * reads it and every entry of every section is checked against the const key
 * table rp_cfg_keys[]: unknown sections and keys are errors, and so is any
 * key given twice.
 *
 * rocepmd-run calls this before any EAL exists, so nothing here logs: every
 * error goes to the caller's buffer as
 * "PATH: [section] key: reason (accepted: ...)".
 */

#include <arpa/inet.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rte_cfgfile.h>
#include <rte_common.h>
#include <rte_ethdev.h>
#include <rte_log.h>
#include <rte_string_fns.h>

#include "rocepmd.h"
#include "rp_cfg_netdev.h"

/* Longest line rte_cfgfile_load() accepts, '\n' excluded. */
#define RP_CFG_LINE_MAX		(CFG_NAME_LEN + CFG_VALUE_LEN + 2)

/*
 * Words rp_cfg_eal_argv() may add to the [eal] args: program name, -l and
 * --main-lcore with their values, a --vdev or -a pair per port, --no-pci,
 * --no-huge -m 512, --in-memory or --no-shconf, --file-prefix=, five
 * --log-level options, and the closing NULL; besides, the [eal] args' own
 * --log-level options once more (at most RP_CFG_EAL_USER_ARGS words).
 */
#define RP_CFG_EAL_OWN_ARGS	(1 + 4 + 2 * RP_MAX_PORTS + 3 + 3 + 5 + 1)
#define RP_CFG_EAL_USER_ARGS	44	/* a literal: it is in messages */

/* Headers around an IB payload in the largest frame the engine sends: */
#define RP_CFG_FRAME_OVERHEAD	(14 + 20 + 8 + 12 + 16 + 4 + 4)
/* Ethernet, IPv4, UDP, BTH, RETH, ImmDt, ICRC. */

/*
 * net_af_packet (TPACKET_V2): the kernel writes a received frame at offset 66
 * of its ring frame and truncates it to the frame's end without telling
 * anyone, so a frame of an IB MTU needs framesz >= MTU + 144.
 */
#define RP_CFG_AFP_RX_OFFSET	66
#define RP_CFG_AFP_FRAMESZ	2048	/* PMD defaults */
#define RP_CFG_AFP_FRAMECNT	512
#define RP_CFG_AFP_ALIGN	16	/* TPACKET_ALIGNMENT */

#define RP_CFG_DEFAULT_NO_HUGE_MB	"512"

static_assert(2 * RP_CFG_EAL_USER_ARGS + RP_CFG_EAL_OWN_ARGS <= RP_EAL_MAX_ARGS,
	      "RP_CFG_EAL_USER_ARGS does not fit RP_EAL_MAX_ARGS");
static_assert(RP_MAX_PORTS <= 10, "port sections are port0..port9 at most");
static_assert(RP_ETHDEV_NAME_LEN == RTE_ETH_NAME_MAX_LEN,
	      "rp_port_cfg.ethdev_name must hold any ethdev name");

enum rp_cfg_sect {
	RP_CFG_SECT_EAL,
	RP_CFG_SECT_ENGINE,
	RP_CFG_SECT_HOST,
	RP_CFG_SECT_PORT,
};

static const char * const rp_cfg_sect_names[] = {
	[RP_CFG_SECT_EAL] = "eal",
	[RP_CFG_SECT_ENGINE] = "engine",
	[RP_CFG_SECT_HOST] = "host",
	[RP_CFG_SECT_PORT] = "port",
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

/* ---- value parsers ---------------------------------------------------- */

/* Strict unsigned decimal: digits only, no sign, no overflow. */
static int
rp_cfg_parse_uint(const char *s, size_t n, uint32_t *out)
{
	uint64_t v = 0;
	size_t i;

	if (n == 0 || n > 10)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		if (!isdigit((unsigned char)s[i]))
			return -EINVAL;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	if (v > UINT32_MAX)
		return -EINVAL;
	*out = (uint32_t)v;
	return 0;
}

static int
rp_cfg_parse_u32(const struct rp_cfg_key *key, const char *val, void *base,
		 char *why, size_t len)
{
	uint32_t v;

	if (rp_cfg_parse_uint(val, strlen(val), &v) != 0) {
		snprintf(why, len, "'%s' is not a decimal number", val);
		return -EINVAL;
	}
	if (v < key->min || v > key->max) {
		snprintf(why, len, "%" PRIu32 " is out of range", v);
		return -EINVAL;
	}
	*(uint32_t *)RTE_PTR_ADD(base, key->off) = v;
	return 0;
}

/* A number in range, or "auto" (RP_INLINE_AUTO): inline_us. */
static int
rp_cfg_parse_u32_auto(const struct rp_cfg_key *key, const char *val,
		      void *base, char *why, size_t len)
{
	if (strcmp(val, "auto") == 0) {
		*(uint32_t *)RTE_PTR_ADD(base, key->off) = RP_INLINE_AUTO;
		return 0;
	}
	return rp_cfg_parse_u32(key, val, base, why, len);
}

static int
rp_cfg_parse_lcores(const struct rp_cfg_key *key, const char *val,
		    void *base, char *why, size_t len)
{
	uint32_t *lcores = RTE_PTR_ADD(base, key->off);
	uint32_t *nb = RTE_PTR_ADD(base, key->aux_off);
	const char *p = val;
	uint32_t n = 0;

	for (;;) {
		const char *end = strchr(p, ',');
		size_t wlen = end != NULL ? (size_t)(end - p) : strlen(p);
		uint32_t v, i;

		while (wlen > 0 && isspace((unsigned char)*p)) {
			p++;
			wlen--;
		}
		while (wlen > 0 && isspace((unsigned char)p[wlen - 1]))
			wlen--;
		if (wlen == 0) {
			snprintf(why, len, "'%s' has an empty element", val);
			return -EINVAL;
		}
		if (rp_cfg_parse_uint(p, wlen, &v) != 0) {
			snprintf(why, len, "'%.*s' is not a decimal lcore id",
				 (int)wlen, p);
			return -EINVAL;
		}
		if (v < key->min || v > key->max) {
			snprintf(why, len, "lcore %" PRIu32 " is out of range",
				 v);
			return -EINVAL;
		}
		for (i = 0; i < n; i++) {
			if (lcores[i] == v) {
				snprintf(why, len, "lcore %" PRIu32
					 " is listed twice", v);
				return -EINVAL;
			}
		}
		if (n == RP_MAX_ENGINE_LCORES) {
			snprintf(why, len, "more than %d lcores",
				 RP_MAX_ENGINE_LCORES);
			return -EINVAL;
		}
		lcores[n++] = v;
		if (end == NULL)
			break;
		p = end + 1;
	}
	*nb = n;
	return 0;
}

/* The one table of idle policy names: the parser, the engine and the tools. */
static const char * const rp_idle_names[RP_IDLE_MAX] = {
	[RP_IDLE_BUSY] = "busy",
	[RP_IDLE_YIELD] = "yield",
	[RP_IDLE_SLEEP] = "sleep",
	[RP_IDLE_ADAPTIVE] = "adaptive",
};

const char *
rp_idle_policy_name(enum rp_idle_policy idle)
{
	/* unsigned: an out-of-range negative value fails the check too */
	if ((unsigned int)idle >= RTE_DIM(rp_idle_names) ||
	    rp_idle_names[idle] == NULL)
		return "invalid";
	return rp_idle_names[idle];
}

static int
rp_cfg_parse_idle(const struct rp_cfg_key *key, const char *val, void *base,
		  char *why, size_t len)
{
	enum rp_idle_policy *idle = RTE_PTR_ADD(base, key->off);
	unsigned int i;

	for (i = 0; i < RTE_DIM(rp_idle_names); i++) {
		if (strcmp(val, rp_idle_names[i]) == 0) {
			*idle = (enum rp_idle_policy)i;
			return 0;
		}
	}
	snprintf(why, len, "'%s' is not an idle policy", val);
	return -EINVAL;
}

/* [eal] log_level: the names EAL's --log-level takes, by RTE_LOG_* level. */
static const char * const rp_log_level_names[] = {
	[RTE_LOG_EMERG] = "emergency",
	[RTE_LOG_ALERT] = "alert",
	[RTE_LOG_CRIT] = "critical",
	[RTE_LOG_ERR] = "error",
	[RTE_LOG_WARNING] = "warning",
	[RTE_LOG_NOTICE] = "notice",
	[RTE_LOG_INFO] = "info",
	[RTE_LOG_DEBUG] = "debug",
};

static int
rp_cfg_parse_log_level(const struct rp_cfg_key *key, const char *val,
		       void *base, char *why, size_t len)
{
	uint32_t *level = RTE_PTR_ADD(base, key->off);
	unsigned int i;

	for (i = 0; i < RTE_DIM(rp_log_level_names); i++) {
		if (rp_log_level_names[i] != NULL &&
		    strcmp(val, rp_log_level_names[i]) == 0) {
			*level = i;
			return 0;
		}
	}
	snprintf(why, len, "'%s' is not a log level", val);
	return -EINVAL;
}

static int
rp_cfg_parse_eal_args(const struct rp_cfg_key *key, const char *val,
		      void *base, char *why, size_t len)
{
	const char *p = val;
	unsigned int words = 0;

	if (strpbrk(val, "\"'\\") != NULL) {
		snprintf(why, len, "quotes and backslashes are not supported");
		return -EINVAL;
	}
	while (*p != '\0') {
		while (isspace((unsigned char)*p))
			p++;
		if (*p == '\0')
			break;
		words++;
		while (*p != '\0' && !isspace((unsigned char)*p))
			p++;
	}
	if (words > RP_CFG_EAL_USER_ARGS) {
		snprintf(why, len, "%u words is too many", words);
		return -EINVAL;
	}
	if (strlcpy(RTE_PTR_ADD(base, key->off), val, key->size) >=
	    key->size) {
		snprintf(why, len, "too long");
		return -EINVAL;
	}
	return 0;
}

/* Hex digits of s, at most max; returns their count and value. */
static size_t
rp_cfg_hex(const char *s, size_t max, uint32_t *out)
{
	uint32_t v = 0;
	size_t i;

	for (i = 0; i < max && isxdigit((unsigned char)s[i]); i++) {
		char c = (char)tolower((unsigned char)s[i]);

		v = v * 16 + (uint32_t)(isdigit((unsigned char)c) ?
					c - '0' : c - 'a' + 10);
	}
	*out = v;
	return i;
}

/*
 * PCI address DDDD:BB:DD.F or BB:DD.F (domain 4 to 8 hex digits), the whole
 * of s[0..n).  On success writes the full lower-case form to name.
 */
static int
rp_cfg_pci_addr(const char *s, size_t n, char *name, size_t len)
{
	uint32_t dom = 0, bus, dev, fn;
	size_t i = 0, d;

	d = rp_cfg_hex(s, 8, &dom);
	if (d >= 4 && d < n && s[d] == ':') {
		i = d + 1;
	} else {
		dom = 0;
		i = 0;
	}
	if (rp_cfg_hex(s + i, 2, &bus) != 2 || s[i + 2] != ':')
		return -EINVAL;
	i += 3;
	if (rp_cfg_hex(s + i, 2, &dev) != 2 || s[i + 2] != '.' || dev > 0x1f)
		return -EINVAL;
	i += 3;
	if (i >= n || s[i] < '0' || s[i] > '7')
		return -EINVAL;
	fn = (uint32_t)(s[i] - '0');
	if (i + 1 != n)
		return -EINVAL;
	snprintf(name, len, "%04" PRIx32 ":%02" PRIx32 ":%02" PRIx32
		 ".%" PRIx32, dom, bus, dev, fn);
	return 0;
}

/*
 * Classify a device string: a vdev "net_<driver>[,args]" or a PCI address
 * with optional ",args".  Writes the ethdev name and returns 0 for a vdev,
 * 1 for PCI, -ENAMETOOLONG for a vdev name that does not fit len, -EINVAL
 * otherwise.
 */
static int
rp_cfg_device_name(const char *dev, char *name, size_t len)
{
	size_t n = strcspn(dev, ",");
	size_t i;

	if (strncmp(dev, "net_", 4) == 0) {
		if (n == 4)
			return -EINVAL;
		for (i = 4; i < n; i++) {
			if (!isalnum((unsigned char)dev[i]) && dev[i] != '_')
				return -EINVAL;
		}
		if (n >= len)
			return -ENAMETOOLONG;
		memcpy(name, dev, n);
		name[n] = '\0';
		return 0;
	}
	if (rp_cfg_pci_addr(dev, n, name, len) != 0)
		return -EINVAL;
	return 1;
}

static int
rp_cfg_parse_device(const struct rp_cfg_key *key, const char *val,
		    void *base, char *why, size_t len)
{
	char name[RP_ETHDEV_NAME_LEN];
	const char *p;
	int kind;

	for (p = val; *p != '\0'; p++) {
		if (isspace((unsigned char)*p) || !isprint((unsigned char)*p)) {
			snprintf(why, len, "'%s' contains white space or "
				 "control characters", val);
			return -EINVAL;
		}
	}
	kind = rp_cfg_device_name(val, name, sizeof(name));
	if (kind == -ENAMETOOLONG) {
		snprintf(why, len, "vdev name longer than %zu characters",
			 sizeof(name) - 1);
		return -EINVAL;
	}
	if (kind < 0) {
		snprintf(why, len, "'%s' is neither a vdev nor a PCI address",
			 val);
		return -EINVAL;
	}
	if (val[strlen(val) - 1] == ',' || strstr(val, ",,") != NULL) {
		snprintf(why, len, "'%s' has an empty device argument", val);
		return -EINVAL;
	}
	if (strlcpy(RTE_PTR_ADD(base, key->off), val, key->size) >=
	    key->size) {
		snprintf(why, len, "too long");
		return -EINVAL;
	}
	return 0;
}

static int
rp_cfg_parse_netdev(const struct rp_cfg_key *key, const char *val, void *base,
		    char *why, size_t len)
{
	size_t n = strlen(val);

	if (n == 0 || n >= key->size || strchr(val, '/') != NULL ||
	    strcmp(val, ".") == 0 || strcmp(val, "..") == 0) {
		snprintf(why, len, "'%s' is not an interface name", val);
		return -EINVAL;
	}
	for (const char *p = val; *p != '\0'; p++) {
		if (isspace((unsigned char)*p) || !isprint((unsigned char)*p)) {
			snprintf(why, len, "'%s' contains white space or "
				 "control characters", val);
			return -EINVAL;
		}
	}
	memcpy(RTE_PTR_ADD(base, key->off), val, n + 1);
	return 0;
}

static int
rp_cfg_parse_ipv4(const struct rp_cfg_key *key, const char *val, void *base,
		  char *why, size_t len)
{
	const char *slash = strchr(val, '/');
	char addr[INET_ADDRSTRLEN];
	struct in_addr in;
	uint32_t prefix, host, mask;

	if (slash == NULL) {
		snprintf(why, len, "'%s' has no prefix length", val);
		return -EINVAL;
	}
	if ((size_t)(slash - val) >= sizeof(addr)) {
		snprintf(why, len, "'%s' is not an IPv4 address", val);
		return -EINVAL;
	}
	memcpy(addr, val, (size_t)(slash - val));
	addr[slash - val] = '\0';
	if (inet_pton(AF_INET, addr, &in) != 1) {
		snprintf(why, len, "'%s' is not an IPv4 address", addr);
		return -EINVAL;
	}
	if (rp_cfg_parse_uint(slash + 1, strlen(slash + 1), &prefix) != 0 ||
	    prefix < key->min || prefix > key->max) {
		snprintf(why, len, "'%s' has a bad prefix length", val);
		return -EINVAL;
	}
	host = ntohl(in.s_addr);
	if ((host >> 24) == 0 || (host >> 24) == 127 || (host >> 28) >= 14) {
		snprintf(why, len, "%s is not a unicast host address", addr);
		return -EINVAL;
	}
	mask = prefix == 32 ? 0 : UINT32_MAX >> prefix;
	if (prefix <= 30 && ((host & mask) == 0 || (host & mask) == mask)) {
		snprintf(why, len, "%s is the %s address of /%" PRIu32, addr,
			 (host & mask) == 0 ? "network" : "broadcast", prefix);
		return -EINVAL;
	}
	*(uint32_t *)RTE_PTR_ADD(base, key->off) = in.s_addr;
	*(uint32_t *)RTE_PTR_ADD(base, key->aux_off) = prefix;
	return 0;
}

/* One "ADDR/N" of the ipv6 list into addr and *plen. */
static int
rp_cfg_parse_ipv6_one(const char *val, size_t n, uint8_t addr[16],
		      uint8_t *plen, char *why, size_t len)
{
	char buf[INET6_ADDRSTRLEN + 4];
	const char *slash;
	uint32_t prefix;
	struct in6_addr in;

	if (n >= sizeof(buf)) {
		snprintf(why, len, "'%.*s' is not an IPv6 address", (int)n, val);
		return -EINVAL;
	}
	memcpy(buf, val, n);
	buf[n] = '\0';
	slash = strchr(buf, '/');
	if (slash == NULL) {
		snprintf(why, len, "'%s' has no prefix length", buf);
		return -EINVAL;
	}
	if (rp_cfg_parse_uint(slash + 1, strlen(slash + 1), &prefix) != 0 ||
	    prefix < 1 || prefix > 128) {
		snprintf(why, len, "'%s' has a bad prefix length", buf);
		return -EINVAL;
	}
	buf[slash - buf] = '\0';
	if (inet_pton(AF_INET6, buf, &in) != 1) {
		snprintf(why, len, "'%s' is not an IPv6 address", buf);
		return -EINVAL;
	}
	/* The link-local address comes from the MAC (GID index 1); a GID
	 * that reads as IPv4-mapped would be taken for an IPv4 one. */
	if (IN6_IS_ADDR_UNSPECIFIED(&in) || IN6_IS_ADDR_LOOPBACK(&in) ||
	    IN6_IS_ADDR_MULTICAST(&in) || IN6_IS_ADDR_LINKLOCAL(&in) ||
	    IN6_IS_ADDR_V4MAPPED(&in) || IN6_IS_ADDR_V4COMPAT(&in)) {
		snprintf(why, len, "%s is not a global unicast address "
			 "(the link-local one is derived from the MAC)", buf);
		return -EINVAL;
	}
	memcpy(addr, &in, 16);
	*plen = (uint8_t)prefix;
	return 0;
}

/* ipv6: a comma-separated list of ADDR/N, at most RP_MAX_IPV6. */
static int
rp_cfg_parse_ipv6(const struct rp_cfg_key *key, const char *val, void *base,
		  char *why, size_t len)
{
	struct rp_port_cfg *pc = base;
	const char *p = val;
	uint32_t n = 0;

	RTE_SET_USED(key);
	while (*p != '\0') {
		size_t l;
		int rc;

		while (*p == ' ' || *p == '\t')
			p++;
		l = strcspn(p, ", \t");
		if (n == RP_MAX_IPV6) {
			snprintf(why, len, "more than %d addresses",
				 RP_MAX_IPV6);
			return -EINVAL;
		}
		rc = rp_cfg_parse_ipv6_one(p, l, pc->ipv6[n], &pc->ipv6_plen[n],
					   why, len);
		if (rc != 0)
			return rc;
		for (uint32_t i = 0; i < n; i++)
			if (memcmp(pc->ipv6[i], pc->ipv6[n], 16) == 0) {
				snprintf(why, len, "'%.*s' given twice",
					 (int)l, p);
				return -EINVAL;
			}
		n++;
		p += l;
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == ',' && *++p == '\0') {
			snprintf(why, len, "empty address after ','");
			return -EINVAL;
		}
	}
	pc->nr_ipv6 = n;
	return 0;
}

static int
rp_cfg_parse_mac(const struct rp_cfg_key *key, const char *val, void *base,
		 char *why, size_t len)
{
	uint8_t *mac = RTE_PTR_ADD(base, key->off);
	uint8_t m[6];
	uint32_t v;
	unsigned int i;

	for (i = 0; i < RTE_DIM(m); i++) {
		const char *p = val + 3 * i;

		if (rp_cfg_hex(p, 2, &v) != 2 ||
		    p[2] != (i + 1 < RTE_DIM(m) ? ':' : '\0')) {
			snprintf(why, len, "'%s' is not a MAC address", val);
			return -EINVAL;
		}
		m[i] = (uint8_t)v;
	}
	if ((m[0] & 1) != 0 ||
	    (m[0] | m[1] | m[2] | m[3] | m[4] | m[5]) == 0) {
		snprintf(why, len, "%s is not a unicast MAC address", val);
		return -EINVAL;
	}
	memcpy(mac, m, sizeof(m));
	*(bool *)RTE_PTR_ADD(base, key->aux_off) = true;
	return 0;
}

static int
rp_cfg_parse_mtu(const struct rp_cfg_key *key, const char *val, void *base,
		 char *why, size_t len)
{
	uint32_t v;

	if (rp_cfg_parse_uint(val, strlen(val), &v) != 0 ||
	    v < key->min || v > key->max || (v & (v - 1)) != 0) {
		snprintf(why, len, "'%s' is not an IB MTU", val);
		return -EINVAL;
	}
	*(uint32_t *)RTE_PTR_ADD(base, key->off) = v;
	return 0;
}

static const struct rp_cfg_type rp_cfg_type_u32 = {
	.parse = rp_cfg_parse_u32,
};

static const struct rp_cfg_type rp_cfg_type_u32_auto = {
	.parse = rp_cfg_parse_u32_auto,
	.accepted = "auto, or 0..100000 (0: off)",	/* inline_us's */
};

static const struct rp_cfg_type rp_cfg_type_lcores = {
	.parse = rp_cfg_parse_lcores,
	.accepted = "comma-separated list of 1 to "
		RTE_STR(RP_MAX_ENGINE_LCORES) " distinct lcore ids below "
		RTE_STR(RTE_MAX_LCORE) ", main_lcore excluded",
};

static const struct rp_cfg_type rp_cfg_type_idle = {
	.parse = rp_cfg_parse_idle,
	.accepted = "busy, yield, sleep, adaptive",
};

static const struct rp_cfg_type rp_cfg_type_eal_args = {
	.parse = rp_cfg_parse_eal_args,
	.accepted = "EAL options separated by spaces, no quoting, at most "
		RTE_STR(RP_CFG_EAL_USER_ARGS) " words",
};

static const struct rp_cfg_type rp_cfg_type_log_level = {
	.parse = rp_cfg_parse_log_level,
	.accepted = "emergency, alert, critical, error, warning, notice, "
		"info, debug",
};

static const struct rp_cfg_type rp_cfg_type_device = {
	.parse = rp_cfg_parse_device,
	.accepted = "net_<driver><n>[,key=value...], or a PCI address "
		"DDDD:BB:DD.F or BB:DD.F [,key=value...]",
};

static const struct rp_cfg_type rp_cfg_type_netdev = {
	.parse = rp_cfg_parse_netdev,
	.accepted = "a kernel interface name (eth0): device and addresses "
		"from the kernel",
};

static const struct rp_cfg_type rp_cfg_type_ipv4 = {
	.parse = rp_cfg_parse_ipv4,
	.accepted = "A.B.C.D/N, a unicast host address, N 1..32",
};

static const struct rp_cfg_type rp_cfg_type_ipv6 = {
	.parse = rp_cfg_parse_ipv6,
	.accepted = "ADDR/N[, ADDR/N...], at most " RTE_STR(RP_MAX_IPV6)
		" global unicast IPv6 addresses, N 1..128",
};

static const struct rp_cfg_type rp_cfg_type_mac = {
	.parse = rp_cfg_parse_mac,
	.accepted = "XX:XX:XX:XX:XX:XX, unicast",
};

static const struct rp_cfg_type rp_cfg_type_mtu = {
	.parse = rp_cfg_parse_mtu,
	.accepted = "256, 512, 1024, 2048, 4096",
};

#define RP_CFG_CFG(field) \
	.off = offsetof(struct rp_config, field), \
	.size = sizeof(((struct rp_config *)0)->field)
#define RP_CFG_PORT(field) \
	.off = offsetof(struct rp_port_cfg, field), \
	.size = sizeof(((struct rp_port_cfg *)0)->field)

/* Every key of every section; order is the order of the docs. */
static const struct rp_cfg_key rp_cfg_keys[] = {
	{
		.name = "args", .sect = RP_CFG_SECT_EAL,
		.type = &rp_cfg_type_eal_args,
		RP_CFG_CFG(eal_args),
	},
	{
		/* rocepmd's and DPDK's log types; see rp_cfg_eal_argv() */
		.name = "log_level", .sect = RP_CFG_SECT_EAL,
		.type = &rp_cfg_type_log_level, .def = "notice",
		RP_CFG_CFG(log_level),
	},
	{
		.name = "main_lcore", .sect = RP_CFG_SECT_ENGINE,
		.type = &rp_cfg_type_u32,
		.min = 0, .max = RTE_MAX_LCORE - 1, .def = "0",
		RP_CFG_CFG(main_lcore),
	},
	{
		/* default: the lowest lcore that is not main_lcore */
		.name = "lcores", .sect = RP_CFG_SECT_ENGINE,
		.type = &rp_cfg_type_lcores,
		.min = 0, .max = RTE_MAX_LCORE - 1,
		RP_CFG_CFG(lcores),
		.aux_off = offsetof(struct rp_config, nb_lcores),
	},
	{
		.name = "idle", .sect = RP_CFG_SECT_ENGINE,
		.type = &rp_cfg_type_idle, .def = "yield",
		RP_CFG_CFG(idle),
	},
	{
		.name = "idle_us", .sect = RP_CFG_SECT_ENGINE,
		.type = &rp_cfg_type_u32,
		.min = 0, .max = 1000000, .def = "50",
		RP_CFG_CFG(idle_us),
	},
	{
		.name = "sleep_us", .sect = RP_CFG_SECT_ENGINE,
		.type = &rp_cfg_type_u32,
		.min = 1, .max = 100000, .def = "10",
		RP_CFG_CFG(sleep_us),
	},
	{
		.name = "wake_us", .sect = RP_CFG_SECT_ENGINE,
		.type = &rp_cfg_type_u32,
		.min = 1, .max = 1000000, .def = "1000",
		RP_CFG_CFG(wake_us),
	},
	{
		/* 0: off (rp_engine_assist() runs no pass); auto: decided
		 * from the CPUs at start (rp_inline.c) */
		.name = "inline_us", .sect = RP_CFG_SECT_ENGINE,
		.type = &rp_cfg_type_u32_auto,
		.min = 0, .max = 100000, .def = "auto",
		RP_CFG_CFG(inline_us),
	},
	{
		/* a connection that has not said HELLO by then is closed */
		.name = "hello_timeout_ms", .sect = RP_CFG_SECT_HOST,
		.type = &rp_cfg_type_u32,
		.min = 100, .max = 600000, .def = "2000",
		RP_CFG_CFG(host.hello_ms),
	},
	{
		/* connections not welcomed yet: half the server's 64 slots */
		.name = "max_pending", .sect = RP_CFG_SECT_HOST,
		.type = &rp_cfg_type_u32,
		.min = 1, .max = 64, .def = "32",
		RP_CFG_CFG(host.max_pending),
	},
	{
		/* 0 from here on: no limit */
		.name = "uid_pending", .sect = RP_CFG_SECT_HOST,
		.type = &rp_cfg_type_u32,
		.min = 0, .max = 64, .def = "8",
		RP_CFG_CFG(host.uid_pending),
	},
	{
		.name = "uid_processes", .sect = RP_CFG_SECT_HOST,
		.type = &rp_cfg_type_u32,
		.min = 0, .max = 64, .def = "32",
		RP_CFG_CFG(host.uid_procs),
	},
	{
		.name = "qps", .sect = RP_CFG_SECT_HOST,
		.type = &rp_cfg_type_u32,
		.min = 0, .max = UINT32_MAX, .def = "1024",
		RP_CFG_CFG(host.proc[RP_QUOTA_QP]),
	},
	{
		.name = "cqs", .sect = RP_CFG_SECT_HOST,
		.type = &rp_cfg_type_u32,
		.min = 0, .max = UINT32_MAX, .def = "256",
		RP_CFG_CFG(host.proc[RP_QUOTA_CQ]),
	},
	{
		.name = "mrs", .sect = RP_CFG_SECT_HOST,
		.type = &rp_cfg_type_u32,
		.min = 0, .max = UINT32_MAX, .def = "1024",
		RP_CFG_CFG(host.proc[RP_QUOTA_MR]),
	},
	{
		.name = "mws", .sect = RP_CFG_SECT_HOST,
		.type = &rp_cfg_type_u32,
		.min = 0, .max = UINT32_MAX, .def = "1024",
		RP_CFG_CFG(host.proc[RP_QUOTA_MW]),
	},
	{
		.name = "srqs", .sect = RP_CFG_SECT_HOST,
		.type = &rp_cfg_type_u32,
		.min = 0, .max = UINT32_MAX, .def = "64",
		RP_CFG_CFG(host.proc[RP_QUOTA_SRQ]),
	},
	{
		.name = "ahs", .sect = RP_CFG_SECT_HOST,
		.type = &rp_cfg_type_u32,
		.min = 0, .max = UINT32_MAX, .def = "1024",
		RP_CFG_CFG(host.proc[RP_QUOTA_AH]),
	},
	{
		.name = "pds", .sect = RP_CFG_SECT_HOST,
		.type = &rp_cfg_type_u32,
		.min = 0, .max = UINT32_MAX, .def = "256",
		RP_CFG_CFG(host.proc[RP_QUOTA_PD]),
	},
	{
		.name = "channels", .sect = RP_CFG_SECT_HOST,
		.type = &rp_cfg_type_u32,
		.min = 0, .max = UINT32_MAX, .def = "64",
		RP_CFG_CFG(host.proc[RP_QUOTA_CHAN]),
	},
	{
		.name = "async_fds", .sect = RP_CFG_SECT_HOST,
		.type = &rp_cfg_type_u32,
		.min = 0, .max = UINT32_MAX, .def = "16",
		RP_CFG_CFG(host.proc[RP_QUOTA_ASYNC]),
	},
	{
		.name = "mr_pages", .sect = RP_CFG_SECT_HOST,
		.type = &rp_cfg_type_u32,
		.min = 0, .max = UINT32_MAX, .def = "4194304",
		RP_CFG_CFG(host.proc[RP_QUOTA_MR_PAGES]),
	},
	{
		.name = "uid_qps", .sect = RP_CFG_SECT_HOST,
		.type = &rp_cfg_type_u32,
		.min = 0, .max = UINT32_MAX, .def = "2048",
		RP_CFG_CFG(host.uid[RP_QUOTA_QP]),
	},
	{
		.name = "uid_cqs", .sect = RP_CFG_SECT_HOST,
		.type = &rp_cfg_type_u32,
		.min = 0, .max = UINT32_MAX, .def = "512",
		RP_CFG_CFG(host.uid[RP_QUOTA_CQ]),
	},
	{
		.name = "uid_mrs", .sect = RP_CFG_SECT_HOST,
		.type = &rp_cfg_type_u32,
		.min = 0, .max = UINT32_MAX, .def = "2048",
		RP_CFG_CFG(host.uid[RP_QUOTA_MR]),
	},
	{
		.name = "uid_mws", .sect = RP_CFG_SECT_HOST,
		.type = &rp_cfg_type_u32,
		.min = 0, .max = UINT32_MAX, .def = "2048",
		RP_CFG_CFG(host.uid[RP_QUOTA_MW]),
	},
	{
		.name = "uid_srqs", .sect = RP_CFG_SECT_HOST,
		.type = &rp_cfg_type_u32,
		.min = 0, .max = UINT32_MAX, .def = "128",
		RP_CFG_CFG(host.uid[RP_QUOTA_SRQ]),
	},
	{
		.name = "uid_ahs", .sect = RP_CFG_SECT_HOST,
		.type = &rp_cfg_type_u32,
		.min = 0, .max = UINT32_MAX, .def = "2048",
		RP_CFG_CFG(host.uid[RP_QUOTA_AH]),
	},
	{
		.name = "uid_pds", .sect = RP_CFG_SECT_HOST,
		.type = &rp_cfg_type_u32,
		.min = 0, .max = UINT32_MAX, .def = "512",
		RP_CFG_CFG(host.uid[RP_QUOTA_PD]),
	},
	{
		.name = "uid_channels", .sect = RP_CFG_SECT_HOST,
		.type = &rp_cfg_type_u32,
		.min = 0, .max = UINT32_MAX, .def = "128",
		RP_CFG_CFG(host.uid[RP_QUOTA_CHAN]),
	},
	{
		.name = "uid_async_fds", .sect = RP_CFG_SECT_HOST,
		.type = &rp_cfg_type_u32,
		.min = 0, .max = UINT32_MAX, .def = "32",
		RP_CFG_CFG(host.uid[RP_QUOTA_ASYNC]),
	},
	{
		.name = "uid_mr_pages", .sect = RP_CFG_SECT_HOST,
		.type = &rp_cfg_type_u32,
		.min = 0, .max = UINT32_MAX, .def = "8388608",
		RP_CFG_CFG(host.uid[RP_QUOTA_MR_PAGES]),
	},
	{
		/* required unless netdev is given (rp_cfg_port_finish) */
		.name = "device", .sect = RP_CFG_SECT_PORT,
		.type = &rp_cfg_type_device,
		RP_CFG_PORT(device),
	},
	{
		/* a kernel interface instead of device (rp_cfg_netdev.c) */
		.name = "netdev", .sect = RP_CFG_SECT_PORT,
		.type = &rp_cfg_type_netdev,
		RP_CFG_PORT(netdev),
	},
	{
		/* required unless netdev is given: the kernel's then */
		.name = "ipv4", .sect = RP_CFG_SECT_PORT,
		.type = &rp_cfg_type_ipv4,
		.min = 1, .max = 32,
		RP_CFG_PORT(ipv4),
		.aux_off = offsetof(struct rp_port_cfg, prefix_len),
	},
	{
		/* default: none (the link-local address only) */
		.name = "ipv6", .sect = RP_CFG_SECT_PORT,
		.type = &rp_cfg_type_ipv6,
		RP_CFG_PORT(ipv6),
	},
	{
		/* default: the port's own MAC (mac_set stays false) */
		.name = "mac", .sect = RP_CFG_SECT_PORT,
		.type = &rp_cfg_type_mac,
		RP_CFG_PORT(mac),
		.aux_off = offsetof(struct rp_port_cfg, mac_set),
	},
	{
		.name = "mtu", .sect = RP_CFG_SECT_PORT,
		.type = &rp_cfg_type_mtu,
		.min = 256, .max = 4096, .def = "1024",
		RP_CFG_PORT(mtu),
	},
	{
		/* default: the first engine lcore; a list: one queue pair
		 * each (rp_shard.c) */
		.name = "lcore", .sect = RP_CFG_SECT_PORT,
		.type = &rp_cfg_type_lcores,
		.min = 0, .max = RTE_MAX_LCORE - 1,
		RP_CFG_PORT(lcores),
		.aux_off = offsetof(struct rp_port_cfg, nr_lcores),
	},
	{
		.name = "region_mb", .sect = RP_CFG_SECT_PORT,
		.type = &rp_cfg_type_u32,
		.min = 4, .max = 4096, .def = "64",
		RP_CFG_PORT(region_mb),
	},
	{
		/* Linux's default route hop limit (ip_default_ttl) */
		.name = "hop_limit", .sect = RP_CFG_SECT_PORT,
		.type = &rp_cfg_type_u32,
		.min = 1, .max = 255, .def = "64",
		RP_CFG_PORT(hop_limit),
	},
	{
		/* Linux's neighbour default (base_reachable_time_ms) */
		.name = "arp_reachable_ms", .sect = RP_CFG_SECT_PORT,
		.type = &rp_cfg_type_u32,
		.min = 100, .max = 3600000, .def = "30000",
		RP_CFG_PORT(arp_reachable_ms),
	},
	{
		/* one QP's send window (RP_WINDOW): a lone QP is not slowed */
		.name = "read_window", .sect = RP_CFG_SECT_PORT,
		.type = &rp_cfg_type_u32,
		.min = 64, .max = 65536, .def = "256",
		RP_CFG_PORT(read_window),
	},
	/* Fault injection for tests (rp_port_fault.c): per-mille rates. */
	{
		.name = "fault_drop", .sect = RP_CFG_SECT_PORT,
		.type = &rp_cfg_type_u32,
		.min = 0, .max = 1000, .def = "0",
		RP_CFG_PORT(fault.tx.drop),
	},
	{
		.name = "fault_dup", .sect = RP_CFG_SECT_PORT,
		.type = &rp_cfg_type_u32,
		.min = 0, .max = 1000, .def = "0",
		RP_CFG_PORT(fault.tx.dup),
	},
	{
		.name = "fault_reorder", .sect = RP_CFG_SECT_PORT,
		.type = &rp_cfg_type_u32,
		.min = 0, .max = 1000, .def = "0",
		RP_CFG_PORT(fault.tx.reorder),
	},
	{
		.name = "fault_corrupt", .sect = RP_CFG_SECT_PORT,
		.type = &rp_cfg_type_u32,
		.min = 0, .max = 1000, .def = "0",
		RP_CFG_PORT(fault.tx.corrupt),
	},
	{
		.name = "fault_delay", .sect = RP_CFG_SECT_PORT,
		.type = &rp_cfg_type_u32,
		.min = 0, .max = 1000, .def = "0",
		RP_CFG_PORT(fault.tx.delay),
	},
	{
		.name = "fault_rx_drop", .sect = RP_CFG_SECT_PORT,
		.type = &rp_cfg_type_u32,
		.min = 0, .max = 1000, .def = "0",
		RP_CFG_PORT(fault.rx.drop),
	},
	{
		.name = "fault_rx_dup", .sect = RP_CFG_SECT_PORT,
		.type = &rp_cfg_type_u32,
		.min = 0, .max = 1000, .def = "0",
		RP_CFG_PORT(fault.rx.dup),
	},
	{
		.name = "fault_rx_reorder", .sect = RP_CFG_SECT_PORT,
		.type = &rp_cfg_type_u32,
		.min = 0, .max = 1000, .def = "0",
		RP_CFG_PORT(fault.rx.reorder),
	},
	{
		.name = "fault_rx_corrupt", .sect = RP_CFG_SECT_PORT,
		.type = &rp_cfg_type_u32,
		.min = 0, .max = 1000, .def = "0",
		RP_CFG_PORT(fault.rx.corrupt),
	},
	{
		.name = "fault_rx_delay", .sect = RP_CFG_SECT_PORT,
		.type = &rp_cfg_type_u32,
		.min = 0, .max = 1000, .def = "0",
		RP_CFG_PORT(fault.rx.delay),
	},
	{
		.name = "fault_burst", .sect = RP_CFG_SECT_PORT,
		.type = &rp_cfg_type_u32,
		.min = 1, .max = RP_FAULT_BURST_MAX, .def = "1",
		RP_CFG_PORT(fault.burst),
	},
	{
		.name = "fault_reorder_depth", .sect = RP_CFG_SECT_PORT,
		.type = &rp_cfg_type_u32,
		.min = 1, .max = RP_FAULT_DEPTH_MAX, .def = "1",
		RP_CFG_PORT(fault.reorder_depth),
	},
	{
		.name = "fault_delay_us", .sect = RP_CFG_SECT_PORT,
		.type = &rp_cfg_type_u32,
		.min = 1, .max = 100000, .def = "1000",
		RP_CFG_PORT(fault.delay_us),
	},
	{
		.name = "fault_seed", .sect = RP_CFG_SECT_PORT,
		.type = &rp_cfg_type_u32,
		.min = 0, .max = UINT32_MAX, .def = "1",
		RP_CFG_PORT(fault.seed),
	},
};

static_assert(RTE_DIM(rp_cfg_keys) <= 64, "key masks are 64 bits");

/* ---- errors ----------------------------------------------------------- */

static int __rte_format_printf(6, 7)
rp_cfg_fail(const struct rp_cfg_ctx *ctx, int rc, const char *sect,
	    const char *key, const char *accepted, const char *fmt, ...)
{
	char why[512];
	va_list ap;
	size_t n;

	if (ctx->err == NULL || ctx->errlen == 0)
		return rc;
	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);

	n = (size_t)snprintf(ctx->err, ctx->errlen, "%s:", ctx->path);
	if (sect != NULL && n < ctx->errlen)
		n += (size_t)snprintf(ctx->err + n, ctx->errlen - n, " [%s]%s",
				      sect, key != NULL ? "" : ":");
	if (key != NULL && n < ctx->errlen)
		n += (size_t)snprintf(ctx->err + n, ctx->errlen - n, " %s:",
				      key);
	if (n < ctx->errlen)
		n += (size_t)snprintf(ctx->err + n, ctx->errlen - n, " %s",
				      why);
	if (accepted != NULL && n < ctx->errlen)
		snprintf(ctx->err + n, ctx->errlen - n, " (accepted: %s)",
			 accepted);
	return rc;
}

/* Accepted values of a key, for messages. */
static const char *
rp_cfg_accepted(const struct rp_cfg_key *key, char *buf, size_t len)
{
	if (key->type->accepted != NULL)
		return key->type->accepted;
	snprintf(buf, len, "%" PRIu32 "..%" PRIu32, key->min, key->max);
	return buf;
}

static int
rp_cfg_value_fail(const struct rp_cfg_ctx *ctx, const char *sect,
		  const struct rp_cfg_key *key, const char *val,
		  const char *why)
{
	char acc[64];

	return rp_cfg_fail(ctx, -EINVAL, sect, key->name,
			   rp_cfg_accepted(key, acc, sizeof(acc)), "%s%s", why,
			   strchr(val, '#') != NULL ?
			   "; comments start with ';', not '#'" : "");
}

/* ---- syntax pass ------------------------------------------------------ */

static char *
rp_cfg_trim(char *s)
{
	size_t n;

	while (isspace((unsigned char)*s))
		s++;
	n = strlen(s);
	while (n > 0 && isspace((unsigned char)s[n - 1]))
		s[--n] = '\0';
	return s;
}

/*
 * Check that rte_cfgfile_load() will read every line as we mean it: a
 * comment (';' as rte_cfgfile strips it), "[section]" or "key = value" with
 * a non-empty value, within rte_cfgfile's name and value lengths.
 */
static int
rp_cfg_lint_line(const struct rp_cfg_ctx *ctx, unsigned int lineno,
		 char *line, char *sect, size_t sect_len)
{
	char *p = strchr(line, ';');
	char *eq, *key, *val;

	/* rte_cfgfile: the first ';' starts a comment unless it is "\;" */
	if (p != NULL && (p == line || p[-1] != '\\'))
		*p = '\0';
	line = rp_cfg_trim(line);
	if (*line == '\0')
		return 0;
	if (*line == '#')
		return rp_cfg_fail(ctx, -EINVAL, NULL, NULL, NULL,
				   "line %u: comments start with ';', not '#'",
				   lineno);
	if (*line == '[') {
		char *end = strchr(line, ']');

		if (end == NULL || end[1] != '\0')
			return rp_cfg_fail(ctx, -EINVAL, NULL, NULL, NULL,
					   "line %u: '%s' is not a [section] "
					   "line", lineno, line);
		*end = '\0';
		line = rp_cfg_trim(line + 1);
		if (*line == '\0' || strlen(line) >= CFG_NAME_LEN)
			return rp_cfg_fail(ctx, -EINVAL, NULL, NULL, NULL,
					   "line %u: bad section name",
					   lineno);
		strlcpy(sect, line, sect_len);
		return 0;
	}
	eq = strchr(line, '=');
	if (eq == NULL)
		return rp_cfg_fail(ctx, -EINVAL, *sect != '\0' ? sect : NULL,
				   NULL, NULL,
				   "line %u: '%s' is not 'key = value'",
				   lineno, line);
	*eq = '\0';
	key = rp_cfg_trim(line);
	val = rp_cfg_trim(eq + 1);
	if (*key == '\0' || strlen(key) >= CFG_NAME_LEN)
		return rp_cfg_fail(ctx, -EINVAL, *sect != '\0' ? sect : NULL,
				   NULL, NULL, "line %u: bad key name", lineno);
	if (*sect == '\0')
		return rp_cfg_fail(ctx, -EINVAL, NULL, key, NULL,
				   "line %u: key outside any [section]",
				   lineno);
	if (*val == '\0')
		return rp_cfg_fail(ctx, -EINVAL, sect, key, NULL,
				   "line %u: empty value", lineno);
	if (strlen(val) >= CFG_VALUE_LEN)
		return rp_cfg_fail(ctx, -EINVAL, sect, key, NULL,
				   "line %u: value longer than %d characters",
				   lineno, CFG_VALUE_LEN - 1);
	return 0;
}

static int
rp_cfg_lint(const struct rp_cfg_ctx *ctx)
{
	char sect[CFG_NAME_LEN] = "";
	unsigned int lineno = 0;
	char *line = NULL;
	size_t cap = 0;
	struct stat st;
	ssize_t n;
	FILE *f;
	int rc = 0;

	f = fopen(ctx->path, "r");
	if (f == NULL) {
		rc = -errno;
		return rp_cfg_fail(ctx, rc, NULL, NULL, NULL,
				   "cannot open: %s", strerror(-rc));
	}
	/* read twice (here and by rte_cfgfile): no pipes */
	if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
		rc = rp_cfg_fail(ctx, -EINVAL, NULL, NULL, NULL,
				 "not a regular file");
		goto out;
	}
	while ((n = getline(&line, &cap, f)) >= 0) {
		lineno++;
		if (n > 0 && line[n - 1] == '\n')
			line[--n] = '\0';
		if (n > RP_CFG_LINE_MAX) {
			rc = rp_cfg_fail(ctx, -EINVAL, NULL, NULL, NULL,
					 "line %u: longer than %d characters",
					 lineno, RP_CFG_LINE_MAX);
			goto out;
		}
		if (memchr(line, '\0', (size_t)n) != NULL) {
			rc = rp_cfg_fail(ctx, -EINVAL, NULL, NULL, NULL,
					 "line %u: NUL byte", lineno);
			goto out;
		}
		rc = rp_cfg_lint_line(ctx, lineno, line, sect, sizeof(sect));
		if (rc != 0)
			goto out;
	}
	if (ferror(f))
		rc = rp_cfg_fail(ctx, -EIO, NULL, NULL, NULL, "cannot read: %s",
				 strerror(errno));
out:
	free(line);
	fclose(f);
	return rc;
}

/* ---- sections --------------------------------------------------------- */

static const struct rp_cfg_key *
rp_cfg_key_find(enum rp_cfg_sect sect, const char *name)
{
	unsigned int i;

	for (i = 0; i < RTE_DIM(rp_cfg_keys); i++) {
		if (rp_cfg_keys[i].sect == sect &&
		    strcmp(rp_cfg_keys[i].name, name) == 0)
			return &rp_cfg_keys[i];
	}
	return NULL;
}

static void
rp_cfg_key_list(enum rp_cfg_sect sect, char *buf, size_t len)
{
	size_t n = 0;
	unsigned int i;

	buf[0] = '\0';
	for (i = 0; i < RTE_DIM(rp_cfg_keys) && n < len; i++) {
		if (rp_cfg_keys[i].sect == sect)
			n += (size_t)snprintf(buf + n, len - n, "%s%s",
					      n == 0 ? "" : ", ",
					      rp_cfg_keys[i].name);
	}
}

/* Section kind of a name, or -1; port sections set *port. */
static int
rp_cfg_sect_kind(const char *name, unsigned int *port)
{
	if (strcmp(name, rp_cfg_sect_names[RP_CFG_SECT_EAL]) == 0)
		return RP_CFG_SECT_EAL;
	if (strcmp(name, rp_cfg_sect_names[RP_CFG_SECT_ENGINE]) == 0)
		return RP_CFG_SECT_ENGINE;
	if (strcmp(name, rp_cfg_sect_names[RP_CFG_SECT_HOST]) == 0)
		return RP_CFG_SECT_HOST;
	if (strncmp(name, "port", 4) == 0 && name[4] >= '0' &&
	    name[4] < '0' + RP_MAX_PORTS && name[5] == '\0') {
		*port = (unsigned int)(name[4] - '0');
		return RP_CFG_SECT_PORT;
	}
	return -1;
}

/*
 * Parse section number idx of the file (-1: absent, defaults only) as a
 * section of kind sect into base.
 */
static int
rp_cfg_section(const struct rp_cfg_ctx *ctx, struct rte_cfgfile *file,
	       int idx, const char *name, enum rp_cfg_sect sect, void *base)
{
	struct rte_cfgfile_entry *ent = NULL;
	char sname[CFG_NAME_LEN];
	char why[256];
	uint64_t given = 0;
	unsigned int i;
	int n = 0, rc = 0;

	if (idx >= 0)
		n = rte_cfgfile_section_num_entries_by_index(file, sname, idx);
	if (n > 0) {
		ent = calloc((size_t)n, sizeof(*ent));
		if (ent == NULL)
			return rp_cfg_fail(ctx, -ENOMEM, name, NULL, NULL,
					   "out of memory");
		n = rte_cfgfile_section_entries_by_index(file, idx, sname, ent,
							 n);
	}
	for (i = 0; i < (unsigned int)RTE_MAX(n, 0); i++) {
		const struct rp_cfg_key *key =
			rp_cfg_key_find(sect, ent[i].name);
		uint64_t bit;

		if (key == NULL) {
			char keys[128];

			rp_cfg_key_list(sect, keys, sizeof(keys));
			rc = rp_cfg_fail(ctx, -EINVAL, name, ent[i].name, keys,
					 "unknown key");
			goto out;
		}
		bit = UINT64_C(1) << (key - rp_cfg_keys);
		if ((given & bit) != 0) {
			rc = rp_cfg_fail(ctx, -EINVAL, name, key->name, NULL,
					 "given twice");
			goto out;
		}
		given |= bit;
		why[0] = '\0';
		rc = key->type->parse(key, ent[i].value, base, why,
				      sizeof(why));
		if (rc != 0) {
			rc = rp_cfg_value_fail(ctx, name, key, ent[i].value,
					       why);
			goto out;
		}
	}
	for (i = 0; i < RTE_DIM(rp_cfg_keys); i++) {
		const struct rp_cfg_key *key = &rp_cfg_keys[i];

		if (key->sect != sect || (given & (UINT64_C(1) << i)) != 0)
			continue;
		if (key->required) {
			char acc[64];

			rc = rp_cfg_fail(ctx, -EINVAL, name, key->name,
					 rp_cfg_accepted(key, acc, sizeof(acc)),
					 "required key missing");
			goto out;
		}
		if (key->def != NULL &&
		    key->type->parse(key, key->def, base, why,
				     sizeof(why)) != 0) {
			rc = rp_cfg_fail(ctx, -EINVAL, name, key->name, NULL,
					 "bad built-in default '%s'",
					 key->def);
			goto out;
		}
	}
out:
	free(ent);
	return rc;
}

static void
rp_cfg_lcore_list(const struct rp_config *cfg, char *buf, size_t len)
{
	size_t n = 0;
	uint32_t i;

	buf[0] = '\0';
	for (i = 0; i < cfg->nb_lcores && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "%s%" PRIu32,
				      i == 0 ? "" : ",", cfg->lcores[i]);
}

static int
rp_cfg_engine_finish(const struct rp_cfg_ctx *ctx, struct rp_config *cfg)
{
	uint32_t i;

	if (cfg->nb_lcores == 0) {
		cfg->lcores[0] = cfg->main_lcore == 0 ? 1 : 0;
		cfg->nb_lcores = 1;
	}
	for (i = 0; i < cfg->nb_lcores; i++) {
		if (cfg->lcores[i] == cfg->main_lcore)
			return rp_cfg_fail(ctx, -EINVAL, "engine", "lcores",
					   rp_cfg_type_lcores.accepted,
					   "lcore %" PRIu32 " is main_lcore",
					   cfg->lcores[i]);
	}
	return 0;
}

/* Value of key=<decimal> in a device's arguments, or def. */
static int
rp_cfg_devarg_u32(const char *dev, const char *key, uint32_t def,
		  uint32_t *out)
{
	size_t klen = strlen(key);
	const char *p = strchr(dev, ',');

	*out = def;
	while (p != NULL) {
		p++;
		if (strncmp(p, key, klen) == 0 && p[klen] == '=')
			return rp_cfg_parse_uint(p + klen + 1,
						 strcspn(p + klen + 1, ","),
						 out);
		p = strchr(p, ',');
	}
	return 0;
}

/*
 * net_af_packet truncates received frames to its ring frames and
 * mis-addresses frames when blocksz is not a multiple of framesz: catch both.
 */
static int
rp_cfg_af_packet_check(const struct rp_cfg_ctx *ctx, const char *sect,
		       const struct rp_port_cfg *port)
{
	long page = sysconf(_SC_PAGESIZE);
	uint32_t fs, bs, fc, need, m;
	char fit[64];
	size_t n = 0;

	if (strncmp(port->ethdev_name, "net_af_packet", 13) != 0)
		return 0;
	if (page <= 0)
		page = 4096;
	if (rp_cfg_devarg_u32(port->device, "framesz", RP_CFG_AFP_FRAMESZ,
			      &fs) != 0 ||
	    rp_cfg_devarg_u32(port->device, "blocksz", (uint32_t)page,
			      &bs) != 0 ||
	    rp_cfg_devarg_u32(port->device, "framecnt", RP_CFG_AFP_FRAMECNT,
			      &fc) != 0)
		return rp_cfg_fail(ctx, -EINVAL, sect, "device",
				   "framesz, blocksz, framecnt: decimal",
				   "net_af_packet argument is not a number");
	if (fs == 0 || fs % RP_CFG_AFP_ALIGN != 0 || bs == 0 ||
	    bs % (uint32_t)page != 0 || bs % fs != 0 || fc == 0 ||
	    fc % (bs / fs) != 0)
		return rp_cfg_fail(ctx, -EINVAL, sect, "device",
				   "framesz a multiple of 16, blocksz a "
				   "multiple of the page size and of framesz, "
				   "framecnt a multiple of blocksz/framesz",
				   "net_af_packet framesz=%" PRIu32 " blocksz=%"
				   PRIu32 " framecnt=%" PRIu32
				   " is not a valid ring", fs, bs, fc);
	need = port->mtu + RP_CFG_FRAME_OVERHEAD + RP_CFG_AFP_RX_OFFSET;
	if (need <= fs)
		return 0;
	fit[0] = '\0';
	for (m = 256; m <= 4096 && n < sizeof(fit); m *= 2) {
		if (m + RP_CFG_FRAME_OVERHEAD + RP_CFG_AFP_RX_OFFSET <= fs)
			n += (size_t)snprintf(fit + n, sizeof(fit) - n,
					      "%s%" PRIu32, n == 0 ? "" : ", ",
					      m);
	}
	return rp_cfg_fail(ctx, -EINVAL, sect, "mtu",
			   n > 0 ? fit : "none",
			   "%" PRIu32 " does not fit net_af_packet frames of "
			   "framesz=%" PRIu32 " (needs framesz >= %" PRIu32
			   ", e.g. framesz=5120,blocksz=20480 in device)",
			   port->mtu, fs, need);
}

/*
 * device and ipv4 are required, unless netdev names a kernel interface:
 * then they come from it (rp_cfg_netdev.c).
 */
static int
rp_cfg_port_netdev(const struct rp_cfg_ctx *ctx, const char *sect,
		   struct rp_port_cfg *port, unsigned int idx)
{
	char why[256] = "";
	char acc[64];
	int rc;

	if (port->netdev[0] == '\0') {
		if (port->device[0] == '\0')
			return rp_cfg_fail(ctx, -EINVAL, sect, "device",
					   rp_cfg_accepted(rp_cfg_key_find(
						RP_CFG_SECT_PORT, "device"),
						acc, sizeof(acc)),
					   "required key missing (or give "
					   "netdev = IFACE)");
		if (port->ipv4 == 0)
			return rp_cfg_fail(ctx, -EINVAL, sect, "ipv4",
					   rp_cfg_accepted(rp_cfg_key_find(
						RP_CFG_SECT_PORT, "ipv4"),
						acc, sizeof(acc)),
					   "required key missing");
		return 0;
	}
	if (port->device[0] != '\0')
		return rp_cfg_fail(ctx, -EINVAL, sect, "netdev", NULL,
				   "netdev and device: give one or the other");
	rc = rp_cfg_netdev_bind(port, idx, port->ipv4 == 0,
				port->nr_ipv6 == 0, why, sizeof(why));
	if (rc < 0)
		return rp_cfg_fail(ctx, rc, sect, "netdev", NULL, "%s", why);
	if (why[0] != '\0')
		fprintf(stderr, "rocepmd: [%s] netdev: %s\n", sect, why);
	return 0;
}

static int
rp_cfg_port_finish(const struct rp_cfg_ctx *ctx, struct rp_config *cfg,
		   unsigned int idx)
{
	struct rp_port_cfg *port = &cfg->port[idx];
	char sect[8];
	char list[96];
	unsigned int i;
	int kind, rc;

	snprintf(sect, sizeof(sect), "port%u", idx);
	if (port->nr_lcores == 0) {
		port->lcores[0] = cfg->lcores[0];
		port->nr_lcores = 1;
	}
	port->lcore = port->lcores[0];
	for (uint32_t k = 0; k < port->nr_lcores; k++) {
		for (i = 0; i < cfg->nb_lcores; i++) {
			if (cfg->lcores[i] == port->lcores[k])
				break;
		}
		if (i == cfg->nb_lcores) {
			rp_cfg_lcore_list(cfg, list, sizeof(list));
			return rp_cfg_fail(ctx, -EINVAL, sect, "lcore", list,
					   "lcore %" PRIu32 " is not in [engine] lcores",
					   port->lcores[k]);
		}
	}
	/* Faults hold frames per device, which one lcore owns. */
	if (port->nr_lcores > 1 &&
	    (rp_fault_rates_on(&port->fault.tx) ||
	     rp_fault_rates_on(&port->fault.rx)))
		return rp_cfg_fail(ctx, -EINVAL, sect, "lcore",
				   "one lcore with fault injection",
				   "faults are injected on ports served by one lcore");
	rc = rp_cfg_port_netdev(ctx, sect, port, idx);
	if (rc != 0)
		return rc;
	kind = rp_cfg_device_name(port->device, port->ethdev_name,
				  sizeof(port->ethdev_name));
	port->is_pci = kind == 1;
	for (i = 0; i < idx; i++) {
		if (strcmp(cfg->port[i].ethdev_name, port->ethdev_name) == 0)
			return rp_cfg_fail(ctx, -EINVAL, sect, "device", NULL,
					   "%s is already the device of "
					   "[port%u]", port->ethdev_name, i);
	}
	return rp_cfg_af_packet_check(ctx, sect, port);
}

/* Walk the sections rte_cfgfile found, in an order that resolves defaults. */
static int
rp_cfg_walk(const struct rp_cfg_ctx *ctx, struct rte_cfgfile *file,
	    struct rp_config *cfg)
{
	int sect_idx[RP_CFG_SECT_PORT] = { -1, -1, -1 };
	int port_idx[RP_MAX_PORTS];
	char name[CFG_NAME_LEN];
	unsigned int p, nb_ports = 0;
	int i, n, kind, rc;

	for (p = 0; p < RP_MAX_PORTS; p++)
		port_idx[p] = -1;
	n = rte_cfgfile_num_sections(file, NULL, 0);
	for (i = 0; i < n; i++) {
		int *slot;

		rte_cfgfile_section_num_entries_by_index(file, name, i);
		kind = rp_cfg_sect_kind(name, &p);
		if (kind < 0) {
			char acc[64];

			snprintf(acc, sizeof(acc), "eal, engine, host, port0..port%d",
				 RP_MAX_PORTS - 1);
			return rp_cfg_fail(ctx, -EINVAL, name, NULL, acc,
					   "unknown section");
		}
		slot = kind == RP_CFG_SECT_PORT ? &port_idx[p] :
			&sect_idx[kind];
		if (*slot >= 0)
			return rp_cfg_fail(ctx, -EINVAL, name, NULL, NULL,
					   "section given twice");
		*slot = i;
	}

	rc = rp_cfg_section(ctx, file, sect_idx[RP_CFG_SECT_EAL], "eal",
			    RP_CFG_SECT_EAL, cfg);
	if (rc == 0)
		rc = rp_cfg_section(ctx, file, sect_idx[RP_CFG_SECT_ENGINE],
				    "engine", RP_CFG_SECT_ENGINE, cfg);
	if (rc == 0)
		rc = rp_cfg_engine_finish(ctx, cfg);
	if (rc == 0)
		rc = rp_cfg_section(ctx, file, sect_idx[RP_CFG_SECT_HOST],
				    "host", RP_CFG_SECT_HOST, cfg);
	if (rc != 0)
		return rc;

	for (p = 0; p < RP_MAX_PORTS; p++) {
		if (port_idx[p] >= 0)
			nb_ports = p + 1;
	}
	if (nb_ports == 0)
		return rp_cfg_fail(ctx, -EINVAL, "port0", NULL, NULL,
				   "missing section: at least one port is "
				   "required");
	for (p = 0; p < nb_ports; p++) {
		snprintf(name, sizeof(name), "port%u", p);
		if (port_idx[p] < 0)
			return rp_cfg_fail(ctx, -EINVAL, name, NULL, NULL,
					   "missing section: ports are "
					   "numbered from port0 without gaps, "
					   "and [port%u] exists", nb_ports - 1);
		rc = rp_cfg_section(ctx, file, port_idx[p], name,
				    RP_CFG_SECT_PORT, &cfg->port[p]);
		if (rc == 0)
			rc = rp_cfg_port_finish(ctx, cfg, p);
		if (rc != 0)
			return rc;
	}
	cfg->nb_ports = nb_ports;
	return 0;
}

int
rp_cfg_load(const char *path, struct rp_config *cfg, char *err,
	    size_t errlen)
{
	struct rp_cfg_ctx ctx = {
		.path = path != NULL ? path : "(null)",
		.err = err,
		.errlen = errlen,
	};
	struct rte_cfgfile *file;
	int rc;

	if (err != NULL && errlen > 0)
		err[0] = '\0';
	if (path == NULL || cfg == NULL)
		return rp_cfg_fail(&ctx, -EINVAL, NULL, NULL, NULL,
				   "no file or no configuration to fill");
	memset(cfg, 0, sizeof(*cfg));
	if (strlcpy(cfg->path, path, sizeof(cfg->path)) >= sizeof(cfg->path))
		return rp_cfg_fail(&ctx, -ENAMETOOLONG, NULL, NULL, NULL,
				   "path too long");

	rc = rp_cfg_lint(&ctx);
	if (rc != 0)
		return rc;
	file = rte_cfgfile_load(path, 0);
	if (file == NULL)
		return rp_cfg_fail(&ctx, errno == ENOMEM ? -ENOMEM : -EINVAL,
				   NULL, NULL, NULL,
				   "rte_cfgfile cannot read the file");
	rc = rp_cfg_walk(&ctx, file, cfg);
	rte_cfgfile_close(file);
	return rc;
}

/* ---- EAL arguments ---------------------------------------------------- */

struct rp_cfg_argv {
	char **argv;
	int argc;
	int max;
	char *buf;
	size_t len;
	size_t used;
	int rc;
};

static void __rte_format_printf(2, 3)
rp_cfg_argv_add(struct rp_cfg_argv *a, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (a->rc != 0)
		return;
	if (a->argc + 1 >= a->max) {
		a->rc = -E2BIG;
		return;
	}
	va_start(ap, fmt);
	n = vsnprintf(a->buf + a->used, a->len - a->used, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= a->len - a->used) {
		a->rc = -ENOSPC;
		return;
	}
	a->argv[a->argc++] = a->buf + a->used;
	a->used += (size_t)n + 1;
}

/*
 * Whether argv[from..to) holds an option: short "-x" or "-xVALUE" when c is
 * not 0, long "--name" or "--name=VALUE" when name is not NULL.
 */
static bool
rp_cfg_argv_has(char * const *argv, int from, int to, char c,
		const char *name)
{
	int i;

	for (i = from; i < to; i++) {
		const char *w = argv[i];

		if (c != '\0' && w[0] == '-' && w[1] == c)
			return true;
		if (name != NULL && w[0] == '-' && w[1] == '-') {
			size_t n = strlen(name);

			if (strncmp(w + 2, name, n) == 0 &&
			    (w[2 + n] == '\0' || w[2 + n] == '='))
				return true;
		}
	}
	return false;
}

/*
 * Whether the word w of n characters is a --log-level option; *value_next
 * tells whether its value is the next word ("--log-level LEVEL").
 */
static bool
rp_cfg_word_log_level(const char *w, size_t n, bool *value_next)
{
	static const char opt[] = "--log-level";
	const size_t k = sizeof(opt) - 1;

	if (n < k || strncmp(w, opt, k) != 0 || (n > k && w[k] != '='))
		return false;
	*value_next = n == k;
	return true;
}

/* The words of the [eal] args: all, or only the --log-level options. */
static void
rp_cfg_argv_add_user(struct rp_cfg_argv *a, const char *args, bool log_only)
{
	bool value_next = false;
	const char *p;

	for (p = args; *p != '\0';) {
		bool take;
		size_t n;

		while (isspace((unsigned char)*p))
			p++;
		n = 0;
		while (p[n] != '\0' && !isspace((unsigned char)p[n]))
			n++;
		if (n > 0) {
			take = !log_only || value_next;
			if (rp_cfg_word_log_level(p, n, &value_next))
				take = true;
			else
				value_next = false;
			if (take)
				rp_cfg_argv_add(a, "%.*s", (int)n, p);
		}
		p += n;
	}
}

/*
 * [eal] log_level: every log type at that level, rocepmd's and DPDK's,
 * except that below info the EAL and telemetry say errors only.  A healthy
 * start of Debian's 22.11 has each warn once, both false alarms: "No free
 * 1048576 kB hugepages" while 2 MiB pages serve, and "No legacy callbacks,
 * legacy socket not created"; the rest of what they say at start is info.
 *
 * EAL applies --log-level options in order to the types that exist (the
 * EAL's own, rocepmd's: registered by constructors), but gives a type
 * registered during rte_eal_init() (telemetry, the drivers it loads) the
 * level of the first option that matches it.  So the narrower options come
 * both before and after the wider one.
 */
static void
rp_cfg_argv_add_log_levels(struct rp_cfg_argv *a, uint32_t level)
{
	static const char * const quiet[] = { "lib.eal", "lib.telemetry" };
	const char *all, *start;
	unsigned int pass, i;

	/* 0: a configuration not from rp_cfg_load(), the default */
	if (level == 0)
		level = RTE_LOG_NOTICE;
	if (level >= RTE_DIM(rp_log_level_names)) {
		a->rc = -EINVAL;
		return;
	}
	all = rp_log_level_names[level];
	start = rp_log_level_names[level > RTE_LOG_NOTICE ? level :
				   RTE_MIN(level, (uint32_t)RTE_LOG_ERR)];
	for (pass = 0; pass < 2; pass++) {
		if (pass == 1)
			rp_cfg_argv_add(a, "--log-level=*:%s", all);
		if (start == all)
			continue;
		for (i = 0; i < RTE_DIM(quiet); i++)
			rp_cfg_argv_add(a, "--log-level=%s:%s", quiet[i],
					start);
	}
}

/* Whether the kernel has any free huge page, of any size. */
static bool
rp_cfg_hugepages_free(void)
{
	static const char dir[] = "/sys/kernel/mm/hugepages";
	bool found = false;
	struct dirent *de;
	DIR *d;

	d = opendir(dir);
	if (d == NULL)
		return false;
	while (!found && (de = readdir(d)) != NULL) {
		char path[PATH_MAX];
		unsigned long n = 0;
		FILE *f;

		if (strncmp(de->d_name, "hugepages-", 10) != 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s/free_hugepages", dir,
			 de->d_name);
		f = fopen(path, "r");
		if (f == NULL)
			continue;
		if (fscanf(f, "%lu", &n) == 1 && n > 0)
			found = true;
		fclose(f);
	}
	closedir(d);
	return found;
}

int
rp_cfg_eal_argv(const struct rp_config *cfg, const char *prog,
		char **argv, int max_args, char *storage, size_t storage_len)
{
	struct rp_cfg_argv a = {
		.argv = argv,
		.max = max_args,
		.buf = storage,
		.len = storage_len,
	};
	char lcores[16 * (RP_MAX_ENGINE_LCORES + 1)];
	bool all_vdev = true, no_huge;
	int user, end;
	uint32_t i;

	if (cfg == NULL || argv == NULL || storage == NULL || max_args < 1 ||
	    storage_len == 0)
		return -EINVAL;

	rp_cfg_argv_add(&a, "%s", prog != NULL ? prog : "rocepmd");
	user = a.argc;
	rp_cfg_argv_add_user(&a, cfg->eal_args, false);
	if (a.rc != 0)
		return a.rc;
	end = a.argc;

	if (!rp_cfg_argv_has(argv, user, end, 'l', "lcores") &&
	    !rp_cfg_argv_has(argv, user, end, 'c', NULL)) {
		snprintf(lcores, sizeof(lcores), "%" PRIu32, cfg->main_lcore);
		for (i = 0; i < cfg->nb_lcores; i++)
			snprintf(lcores + strlen(lcores),
				 sizeof(lcores) - strlen(lcores), ",%" PRIu32,
				 cfg->lcores[i]);
		rp_cfg_argv_add(&a, "-l");
		rp_cfg_argv_add(&a, "%s", lcores);
		if (!rp_cfg_argv_has(argv, user, end, '\0', "main-lcore")) {
			rp_cfg_argv_add(&a, "--main-lcore");
			rp_cfg_argv_add(&a, "%" PRIu32, cfg->main_lcore);
		}
	}
	for (i = 0; i < cfg->nb_ports && i < RP_MAX_PORTS; i++) {
		const struct rp_port_cfg *port = &cfg->port[i];

		all_vdev &= !port->is_pci;
		rp_cfg_argv_add(&a, port->is_pci ? "-a" : "--vdev");
		rp_cfg_argv_add(&a, "%s", port->device);
	}
	if (all_vdev && !rp_cfg_argv_has(argv, user, end, 'a', "allow") &&
	    !rp_cfg_argv_has(argv, user, end, 'b', "block") &&
	    !rp_cfg_argv_has(argv, user, end, '\0', "no-pci"))
		rp_cfg_argv_add(&a, "--no-pci");
	/*
	 * Memory.  In 22.11 --no-huge implies --legacy-mem, which EAL refuses
	 * with --in-memory: without huge pages, --no-shconf stands in for it
	 * (no shared config file, no multi-process socket).
	 */
	no_huge = rp_cfg_argv_has(argv, user, end, '\0', "no-huge");
	if (!no_huge && !rp_cfg_argv_has(argv, user, end, 'm', "socket-mem") &&
	    !rp_cfg_argv_has(argv, user, end, '\0', "in-memory") &&
	    !rp_cfg_hugepages_free()) {
		rp_cfg_argv_add(&a, "--no-huge");
		rp_cfg_argv_add(&a, "-m");
		rp_cfg_argv_add(&a, RP_CFG_DEFAULT_NO_HUGE_MB);
		no_huge = true;
	}
	if (no_huge) {
		if (!rp_cfg_argv_has(argv, user, end, '\0', "no-shconf") &&
		    !rp_cfg_argv_has(argv, user, end, '\0', "in-memory"))
			rp_cfg_argv_add(&a, "--no-shconf");
	} else if (!rp_cfg_argv_has(argv, user, end, '\0', "in-memory")) {
		rp_cfg_argv_add(&a, "--in-memory");
	}
	if (!rp_cfg_argv_has(argv, user, end, '\0', "file-prefix"))
		rp_cfg_argv_add(&a, "--file-prefix=rocepmd-%ld",
				(long)getpid());
	/* Last: the [eal] args' own --log-level options, given before
	 * log_level's and again after them, win over them (see above). */
	rp_cfg_argv_add_log_levels(&a, cfg->log_level);
	rp_cfg_argv_add_user(&a, cfg->eal_args, true);
	if (a.rc != 0)
		return a.rc;
	argv[a.argc] = NULL;
	return a.argc;
}
