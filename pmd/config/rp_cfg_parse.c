/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The configuration's value parsers, one a type of value (rp_cfg_keys[] in
 * rp_cfg.c says which key has which), and its error messages: no EAL, no
 * logging, every error goes to the caller's buffer (rp_cfg_fail()).
 */

#include <arpa/inet.h>
#include <assert.h>
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <rte_common.h>
#include <rte_log.h>
#include <rte_string_fns.h>

#include "rp_config.h"

/* ---- value parsers ---------------------------------------------------- */

/* Strict unsigned decimal: digits only, no sign, no overflow. */
int
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

/* [portN] tx_zero_copy: which payloads go in place (enum rp_tx_zc). */
static const char * const rp_tx_zc_names[RP_TX_ZC_MAX] = {
	[RP_TX_ZC_OFF] = "off",
	[RP_TX_ZC_REQUESTS] = "requests",
	[RP_TX_ZC_ON] = "on",
};

/* [portN] icrc: where ICRCs are computed (enum rp_icrc_mode). */
static const char * const rp_icrc_names[RP_ICRC_MAX] = {
	[RP_ICRC_ON] = "on",
	[RP_ICRC_AUTO] = "auto",
};

/* The fields of keys whose values are names: 32 bits each. */
static_assert(sizeof(enum rp_idle_policy) == sizeof(uint32_t) &&
	      sizeof(enum rp_tx_zc) == sizeof(uint32_t) &&
	      sizeof(enum rp_icrc_mode) == sizeof(uint32_t) &&
	      sizeof(((struct rp_config *)0)->log_level) == sizeof(uint32_t),
	      "rp_cfg_parse_name() stores a name's index in 32 bits");

/*
 * A value among the key's type's names (idle, log_level, tx_zero_copy):
 * its index into the key's field.
 */
static int
rp_cfg_parse_name(const struct rp_cfg_key *key, const char *val,
		  void *base, char *why, size_t len)
{
	const struct rp_cfg_type *t = key->type;

	for (uint32_t i = 0; i < t->nb_names; i++) {
		if (t->names[i] != NULL && strcmp(val, t->names[i]) == 0) {
			memcpy(RTE_PTR_ADD(base, key->off), &i, sizeof(i));
			return 0;
		}
	}
	snprintf(why, len, "'%s' is none of its values", val);
	return -EINVAL;
}

/* [eal] log_level: the names EAL's --log-level takes, by RTE_LOG_* level. */
const char * const rp_log_level_names[] = {
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
int
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

	if (strcmp(val, "auto") == 0) {
		*(uint32_t *)RTE_PTR_ADD(base, key->off) = RP_MTU_AUTO;
		return 0;
	}
	if (rp_cfg_parse_uint(val, strlen(val), &v) != 0 ||
	    v < key->min || v > key->max || (v & (v - 1)) != 0) {
		snprintf(why, len, "'%s' is not an IB MTU", val);
		return -EINVAL;
	}
	*(uint32_t *)RTE_PTR_ADD(base, key->off) = v;
	return 0;
}

static int
rp_cfg_parse_bool(const struct rp_cfg_key *key, const char *val, void *base,
		  char *why, size_t len)
{
	bool *b = RTE_PTR_ADD(base, key->off);

	if (strcmp(val, "on") == 0) {
		*b = true;
	} else if (strcmp(val, "off") == 0) {
		*b = false;
	} else {
		snprintf(why, len, "'%s' is neither on nor off", val);
		return -EINVAL;
	}
	return 0;
}

const struct rp_cfg_type rp_cfg_type_bool = {
	.parse = rp_cfg_parse_bool,
	.accepted = "on, off",
};

const struct rp_cfg_type rp_cfg_type_u32 = {
	.parse = rp_cfg_parse_u32,
};

const struct rp_cfg_type rp_cfg_type_u32_auto = {
	.parse = rp_cfg_parse_u32_auto,
	.accepted = "auto, or 0..100000 (0: off)",	/* inline_us's */
};

const struct rp_cfg_type rp_cfg_type_lcores = {
	.parse = rp_cfg_parse_lcores,
	.accepted = "comma-separated list of 1 to "
		RTE_STR(RP_MAX_ENGINE_LCORES) " distinct lcore ids below "
		RTE_STR(RTE_MAX_LCORE) ", main_lcore excluded",
};

const struct rp_cfg_type rp_cfg_type_idle = {
	.parse = rp_cfg_parse_name,
	.accepted = "busy, yield, sleep, adaptive",
	.names = rp_idle_names,
	.nb_names = RTE_DIM(rp_idle_names),
};

const struct rp_cfg_type rp_cfg_type_tx_zc = {
	.parse = rp_cfg_parse_name,
	.accepted = "off, requests, on",
	.names = rp_tx_zc_names,
	.nb_names = RTE_DIM(rp_tx_zc_names),
};

const struct rp_cfg_type rp_cfg_type_icrc = {
	.parse = rp_cfg_parse_name,
	.accepted = "on, auto",
	.names = rp_icrc_names,
	.nb_names = RTE_DIM(rp_icrc_names),
};

const struct rp_cfg_type rp_cfg_type_eal_args = {
	.parse = rp_cfg_parse_eal_args,
	.accepted = "EAL options separated by spaces, no quoting, at most "
		RTE_STR(RP_CFG_EAL_USER_ARGS) " words",
};

const struct rp_cfg_type rp_cfg_type_log_level = {
	.parse = rp_cfg_parse_name,
	.names = rp_log_level_names,
	.nb_names = RTE_DIM(rp_log_level_names),
	.accepted = "emergency, alert, critical, error, warning, notice, "
		"info, debug",
};

const struct rp_cfg_type rp_cfg_type_device = {
	.parse = rp_cfg_parse_device,
	.accepted = "net_<driver><n>[,key=value...], or a PCI address "
		"DDDD:BB:DD.F or BB:DD.F [,key=value...]",
};

const struct rp_cfg_type rp_cfg_type_netdev = {
	.parse = rp_cfg_parse_netdev,
	.accepted = "a kernel interface name (eth0): device and addresses "
		"from the kernel",
};

const struct rp_cfg_type rp_cfg_type_ipv4 = {
	.parse = rp_cfg_parse_ipv4,
	.accepted = "A.B.C.D/N, a unicast host address, N 1..32",
};

const struct rp_cfg_type rp_cfg_type_ipv6 = {
	.parse = rp_cfg_parse_ipv6,
	.accepted = "ADDR/N[, ADDR/N...], at most " RTE_STR(RP_MAX_IPV6)
		" global unicast IPv6 addresses, N 1..128",
};

const struct rp_cfg_type rp_cfg_type_mac = {
	.parse = rp_cfg_parse_mac,
	.accepted = "XX:XX:XX:XX:XX:XX, unicast",
};

const struct rp_cfg_type rp_cfg_type_mtu = {
	.parse = rp_cfg_parse_mtu,
	.accepted = "auto, 256, 512, 1024, 2048, 4096",
};

/* ---- errors ----------------------------------------------------------- */

int
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
const char *
rp_cfg_accepted(const struct rp_cfg_key *key, char *buf, size_t len)
{
	if (key->type->accepted != NULL)
		return key->type->accepted;
	snprintf(buf, len, "%" PRIu32 "..%" PRIu32, key->min, key->max);
	return buf;
}

int
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
