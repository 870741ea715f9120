/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rp_cfg_load() and rp_cfg_eal_argv(): every key, every default, every kind
 * of bad value, and the EAL argument vector.  No EAL.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <rte_log.h>

#include "rocepmd.h"

/* Path of the last file written by tc_load(); removed once loaded. */
static char tc_path[64];
static char tc_err[1024];
static struct rp_config tc_cfg;

static void
tc_write(const char *text)
{
	size_t len = strlen(text);
	int fd;

	snprintf(tc_path, sizeof(tc_path), "/tmp/rp_test_cfg_XXXXXX");
	fd = mkstemp(tc_path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, len), (ssize_t)len);
	assert_int_equal(close(fd), 0);
}

/* Write text to a temporary file and load it. */
static int
tc_load(const char *text)
{
	int rc;

	tc_write(text);
	memset(tc_err, 0, sizeof(tc_err));
	rc = rp_cfg_load(tc_path, &tc_cfg, tc_err, sizeof(tc_err));
	unlink(tc_path);
	return rc;
}

/* The last error names the file, and holds every given fragment. */
static void
tc_err_has(const char *frag)
{
	if (strncmp(tc_err, tc_path, strlen(tc_path)) != 0)
		fail_msg("error does not start with the path %s: %s", tc_path,
			 tc_err);
	if (frag != NULL && strstr(tc_err, frag) == NULL)
		fail_msg("error lacks '%s': %s", frag, tc_err);
}

static void
tc_load_fails(const char *text, const char *frag)
{
	int rc = tc_load(text);

	if (rc != -EINVAL)
		fail_msg("rc %d, expected -EINVAL; err '%s'; config:\n%s", rc,
			 tc_err, text);
	tc_err_has(frag);
}

/* ---- a base configuration with every key, one key at a time changed -- */

struct tc_kv {
	const char *sect;
	const char *key;
	const char *val;
};

static const struct tc_kv tc_base[] = {
	{ "eal", "args", "--no-telemetry" },
	{ "eal", "log_level", "notice" },
	{ "engine", "main_lcore", "0" },
	{ "engine", "lcores", "1,2" },
	{ "engine", "idle", "yield" },
	{ "engine", "idle_us", "50" },
	{ "engine", "sleep_us", "10" },
	{ "engine", "wake_us", "1000" },
	{ "engine", "inline_us", "0" },
	{ "port0", "device", "net_ring0" },
	{ "port0", "ipv4", "192.0.2.1/24" },
	{ "port0", "mac", "02:00:00:00:00:01" },
	{ "port0", "mtu", "1024" },
	{ "port0", "lcore", "1" },
	{ "port0", "region_mb", "64" },
	{ "port0", "hop_limit", "64" },
	{ "port0", "ecn", "off" },
	{ "port0", "cnp_interval_us", "50" },
	{ "port0", "tx_zero_copy", "off" },
	{ "port0", "tx_zero_copy_min", "64" },
	{ "port0", "flight_window", "64" },
	{ "port0", "dcqcn", "off" },
	{ "port0", "dcqcn_g", "1019" },
	{ "port0", "dcqcn_alpha_us", "55" },
	{ "port0", "dcqcn_initial_alpha", "1023" },
	{ "port0", "dcqcn_min_dec_fac", "50" },
	{ "port0", "dcqcn_min_rate_mbps", "1" },
	{ "port0", "dcqcn_reduce_us", "4" },
	{ "port0", "dcqcn_time_reset_us", "300" },
	{ "port0", "dcqcn_byte_reset", "32767" },
	{ "port0", "dcqcn_threshold", "5" },
	{ "port0", "dcqcn_ai_mbps", "5" },
	{ "port0", "dcqcn_hai_mbps", "50" },
	{ "port0", "fault_ce", "0" },
	{ "port0", "fault_drop", "0" },
	{ "port0", "fault_dup", "0" },
	{ "port0", "fault_reorder", "0" },
	{ "port0", "fault_corrupt", "0" },
	{ "port0", "fault_delay", "0" },
	{ "port0", "fault_rx_drop", "0" },
	{ "port0", "fault_rx_dup", "0" },
	{ "port0", "fault_rx_reorder", "0" },
	{ "port0", "fault_rx_corrupt", "0" },
	{ "port0", "fault_rx_delay", "0" },
	{ "port0", "fault_burst", "1" },
	{ "port0", "fault_reorder_depth", "1" },
	{ "port0", "fault_delay_us", "1000" },
	{ "port0", "fault_seed", "1" },
};

/* The base configuration with sect/key set to val (NULL: removed). */
static void
tc_build(char *buf, size_t len, const char *sect, const char *key,
	 const char *val)
{
	const char *cur = "";
	size_t n = 0;
	unsigned int i;

	buf[0] = '\0';
	for (i = 0; i < sizeof(tc_base) / sizeof(tc_base[0]); i++) {
		const struct tc_kv *kv = &tc_base[i];
		const char *v = kv->val;

		if (strcmp(kv->sect, cur) != 0) {
			n += (size_t)snprintf(buf + n, len - n, "[%s]\n",
					      kv->sect);
			cur = kv->sect;
		}
		if (sect != NULL && strcmp(kv->sect, sect) == 0 &&
		    strcmp(kv->key, key) == 0)
			v = val;
		if (v != NULL)
			n += (size_t)snprintf(buf + n, len - n, "%s = %s\n",
					      kv->key, v);
		assert_true(n < len);
	}
}

#define TC_45_WORDS \
	"-v -v -v -v -v -v -v -v -v -v -v -v -v -v -v -v -v -v -v -v " \
	"-v -v -v -v -v -v -v -v -v -v -v -v -v -v -v -v -v -v -v -v " \
	"-v -v -v -v -v"

static const struct tc_kv tc_bad[] = {
	{ "eal", "args", "--file-prefix=\"a b\"" },
	{ "eal", "args", "--file-prefix='a'" },
	{ "eal", "args", TC_45_WORDS },
	{ "eal", "log_level", "loud" },
	{ "eal", "log_level", "7" },
	{ "eal", "log_level", "Info" },
	{ "engine", "main_lcore", "128" },
	{ "engine", "main_lcore", "-1" },
	{ "engine", "main_lcore", "0x1" },
	{ "engine", "main_lcore", "zero" },
	{ "engine", "main_lcore", "99999999999" },
	{ "engine", "lcores", "1,,2" },
	{ "engine", "lcores", "1,2," },
	{ "engine", "lcores", "1,1" },
	{ "engine", "lcores", "0" },
	{ "engine", "lcores", "1,0" },
	{ "engine", "lcores", "128" },
	{ "engine", "lcores", "1-2" },
	{ "engine", "lcores", "1 2" },
	{ "engine", "lcores", "1,2,3,4,5,6,7,8,9" },
	{ "engine", "idle", "nap" },
	{ "engine", "sleep_us", "0" },
	{ "engine", "sleep_us", "100001" },
	{ "engine", "idle", "Busy" },
	{ "engine", "idle_us", "1000001" },
	{ "engine", "idle_us", "-5" },
	{ "engine", "idle_us", "1e3" },
	{ "engine", "idle", "Adaptive" },
	{ "engine", "idle", "adaptive,busy" },
	{ "engine", "wake_us", "0" },
	{ "engine", "wake_us", "1000001" },
	{ "engine", "wake_us", "-1" },
	{ "engine", "wake_us", "1ms" },
	{ "engine", "inline_us", "100001" },
	{ "engine", "inline_us", "-1" },
	{ "engine", "inline_us", "yes" },
	{ "port0", "device", "eth0" },
	{ "port0", "device", "net_" },
	{ "port0", "device", "net_,iface=a" },
	{ "port0", "device", "net-ring0" },
	{ "port0", "device", "net_ring0 extra" },
	{ "port0", "device", "net_ring0,,a=1" },
	{ "port0", "device", "net_ring0," },
	{ "port0", "device",
	  "net_ring01234567890123456789012345678901234567890123456789012345" },
	{ "port0", "device", "0000:00:20.0" },
	{ "port0", "device", "00:1f.8" },
	{ "port0", "device", "000:01:00.0" },
	{ "port0", "device", "0000:01:00.0x" },
	{ "port0", "device", "0000:1:00.0" },
	{ "port0", "device", "net_af_packet0,iface=a,framesz=abc" },
	{ "port0", "device", "net_af_packet0,iface=a,framesz=2000" },
	{ "port0", "device", "net_af_packet0,iface=a,blocksz=20000" },
	{ "port0", "device",
	  "net_af_packet0,iface=a,framesz=5120,blocksz=8192" },
	{ "port0", "device",
	  "net_af_packet0,iface=a,framesz=5120,blocksz=20480,framecnt=510" },
	{ "port0", "ipv4", "192.0.2.1" },
	{ "port0", "ipv4", "192.0.2.1/" },
	{ "port0", "ipv4", "192.0.2.1/0" },
	{ "port0", "ipv4", "192.0.2.1/33" },
	{ "port0", "ipv4", "192.0.2.1/+8" },
	{ "port0", "ipv4", "192.0.2.256/24" },
	{ "port0", "ipv4", "192.0.2/24" },
	{ "port0", "ipv4", "192.0.02.1/24" },
	{ "port0", "ipv4", "host/24" },
	{ "port0", "ipv4", "224.0.0.1/4" },
	{ "port0", "ipv4", "255.255.255.255/32" },
	{ "port0", "ipv4", "127.0.0.1/8" },
	{ "port0", "ipv4", "0.1.2.3/8" },
	{ "port0", "ipv4", "192.0.2.0/24" },
	{ "port0", "ipv4", "192.0.2.255/24" },
	{ "port0", "ipv4", "2001:db8::1/64" },
	{ "port0", "mac", "02:00:00:00:00" },
	{ "port0", "mac", "02:00:00:00:00:01:02" },
	{ "port0", "mac", "02:00:00:00:00:011" },
	{ "port0", "mac", "02-00-00-00-00-01" },
	{ "port0", "mac", "02:00:00:00:00:0g" },
	{ "port0", "mac", "2:0:0:0:0:1" },
	{ "port0", "mac", "01:00:5e:00:00:01" },
	{ "port0", "mac", "ff:ff:ff:ff:ff:ff" },
	{ "port0", "mac", "00:00:00:00:00:00" },
	{ "port0", "mtu", "1000" },
	{ "port0", "mtu", "128" },
	{ "port0", "mtu", "8192" },
	{ "port0", "mtu", "0" },
	{ "port0", "mtu", "1024 # jumbo" },
	{ "port0", "lcore", "3" },
	{ "port0", "lcore", "0" },
	{ "port0", "lcore", "128" },
	{ "port0", "lcore", "one" },
	{ "port0", "region_mb", "3" },
	{ "port0", "region_mb", "4097" },
	{ "port0", "region_mb", "64M" },
	{ "port0", "region_mb", "4294967296" },
	{ "port0", "hop_limit", "0" },
	{ "port0", "hop_limit", "256" },
	{ "port0", "hop_limit", "-1" },
	{ "port0", "hop_limit", "0x40" },
	{ "port0", "hop_limit", "64 hops" },
	{ "port0", "ecn", "yes" },
	{ "port0", "ecn", "1" },
	{ "port0", "ecn", "On" },
	{ "port0", "cnp_interval_us", "1000001" },
	{ "port0", "cnp_interval_us", "-1" },
	{ "port0", "tx_zero_copy", "yes" },
	{ "port0", "tx_zero_copy", "request" },
	{ "port0", "tx_zero_copy_min", "63" },
	{ "port0", "tx_zero_copy_min", "65537" },
	{ "port0", "flight_window", "63" },
	{ "port0", "dcqcn", "2" },
	{ "port0", "dcqcn_g", "1024" },
	{ "port0", "dcqcn_alpha_us", "0" },
	{ "port0", "dcqcn_initial_alpha", "0" },
	{ "port0", "dcqcn_min_dec_fac", "101" },
	{ "port0", "dcqcn_min_rate_mbps", "0" },
	{ "port0", "dcqcn_reduce_us", "1000001" },
	{ "port0", "dcqcn_time_reset_us", "0" },
	{ "port0", "dcqcn_byte_reset", "0" },
	{ "port0", "dcqcn_threshold", "65" },
	{ "port0", "dcqcn_ai_mbps", "0" },
	{ "port0", "dcqcn_hai_mbps", "1000001" },
	{ "port0", "fault_ce", "1001" },
	{ "port0", "fault_drop", "1001" },
	{ "port0", "fault_dup", "-1" },
	{ "port0", "fault_reorder", "5%" },
	{ "port0", "fault_corrupt", "x" },
	{ "port0", "fault_delay", "1001" },
	{ "port0", "fault_rx_drop", "1001" },
	{ "port0", "fault_rx_dup", "-1" },
	{ "port0", "fault_rx_reorder", "5%" },
	{ "port0", "fault_rx_corrupt", "x" },
	{ "port0", "fault_rx_delay", "2000" },
	{ "port0", "fault_burst", "0" },
	{ "port0", "fault_burst", "65" },
	{ "port0", "fault_reorder_depth", "0" },
	{ "port0", "fault_reorder_depth", "17" },
	{ "port0", "fault_delay_us", "0" },
	{ "port0", "fault_delay_us", "100001" },
	{ "port0", "fault_seed", "4294967296" },
};

static void
test_every_key_bad_value(void **state)
{
	char text[4096], frag[64];
	unsigned int i, k;

	(void)state;
	for (i = 0; i < sizeof(tc_bad) / sizeof(tc_bad[0]); i++) {
		const struct tc_kv *kv = &tc_bad[i];

		tc_build(text, sizeof(text), kv->sect, kv->key, kv->val);
		snprintf(frag, sizeof(frag), "[%s] %s:", kv->sect, kv->key);
		tc_load_fails(text, frag);
		assert_non_null(strstr(tc_err, "(accepted: "));
	}
	/* and every key of the table has at least one bad value above */
	for (k = 0; k < sizeof(tc_base) / sizeof(tc_base[0]); k++) {
		for (i = 0; i < sizeof(tc_bad) / sizeof(tc_bad[0]); i++) {
			if (strcmp(tc_bad[i].key, tc_base[k].key) == 0)
				break;
		}
		if (i == sizeof(tc_bad) / sizeof(tc_bad[0]))
			fail_msg("no bad value for key %s", tc_base[k].key);
	}
}

static void
test_every_key_empty_value(void **state)
{
	char text[4096], frag[64];
	unsigned int k;

	(void)state;
	for (k = 0; k < sizeof(tc_base) / sizeof(tc_base[0]); k++) {
		tc_build(text, sizeof(text), tc_base[k].sect, tc_base[k].key,
			 "");
		snprintf(frag, sizeof(frag), "[%s] %s:", tc_base[k].sect,
			 tc_base[k].key);
		tc_load_fails(text, frag);
		assert_non_null(strstr(tc_err, "empty value"));
	}
}

static void
test_base_loads(void **state)
{
	char text[4096];

	(void)state;
	tc_build(text, sizeof(text), NULL, NULL, NULL);
	assert_int_equal(tc_load(text), 0);
	assert_string_equal(tc_err, "");
}

static void
test_good(void **state)
{
	static const char text[] =
		"; a full configuration\n"
		"[eal]\n"
		"args =  --log-level=lib.eal:notice   --no-telemetry  \n"
		"\n"
		"[engine]\n"
		"main_lcore = 2\n"
		"lcores = 0, 3 ,5\n"
		"idle = adaptive   ; block when idle\n"
		"idle_us = 0\n"
		"wake_us = 250\n"
		"inline_us = 200\n"
		"[port0]\n"
		"device = net_af_packet0,iface=veth-a,qpairs=1\n"
		"ipv4 = 192.0.2.1/24\n"
		"mac = 02:00:00:AA:bb:01\n"
		"mtu = 512\n"
		"lcore = 3\n"
		"region_mb = 4096\n"
		"hop_limit = 255\n"
		"ecn = on\n"
		"cnp_interval_us = 4\n"
		"tx_zero_copy = on\n"
		"tx_zero_copy_min = 4096\n"
		"read_window = 1024\n"
		"  [ port1 ]  \n"
		"  device=0000:3B:00.1,rxq=2\n"
		"ipv4 = 10.1.2.3/8\n"
		"mtu = 4096\n"
		"region_mb = 4\n"
		"[port2]\n"
		"device = 05:1e.7\n"
		"ipv4 = 198.51.100.7/32\n"
		"mtu = 256\n"
		"lcore = 5\n"
		"hop_limit = 1\n"
		"[port3]\n"
		"device = net_af_packet1,iface=x,framesz=5120,blocksz=20480\n"
		"ipv4 = 203.0.113.1/31\n"
		"mtu = 4096\n";
	const struct rp_port_cfg *p;

	(void)state;
	assert_int_equal(tc_load(text), 0);
	assert_string_equal(tc_cfg.path, tc_path);
	assert_string_equal(tc_cfg.eal_args,
			    "--log-level=lib.eal:notice   --no-telemetry");
	assert_int_equal(tc_cfg.main_lcore, 2);
	assert_int_equal(tc_cfg.nb_lcores, 3);
	assert_int_equal(tc_cfg.lcores[0], 0);
	assert_int_equal(tc_cfg.lcores[1], 3);
	assert_int_equal(tc_cfg.lcores[2], 5);
	assert_int_equal(tc_cfg.idle, RP_IDLE_ADAPTIVE);
	assert_int_equal(tc_cfg.idle_us, 0);
	assert_int_equal(tc_cfg.wake_us, 250);
	assert_int_equal(tc_cfg.inline_us, 200);
	assert_int_equal(tc_cfg.nb_ports, 4);

	p = &tc_cfg.port[0];
	assert_string_equal(p->device, "net_af_packet0,iface=veth-a,qpairs=1");
	assert_string_equal(p->ethdev_name, "net_af_packet0");
	assert_false(p->is_pci);
	assert_int_equal(p->ipv4, htonl(0xc0000201));
	assert_int_equal(p->prefix_len, 24);
	assert_true(p->mac_set);
	assert_memory_equal(p->mac, "\x02\x00\x00\xaa\xbb\x01", 6);
	assert_int_equal(p->mtu, 512);
	assert_int_equal(p->lcore, 3);
	assert_int_equal(p->region_mb, 4096);
	assert_int_equal(p->hop_limit, 255);
	assert_true(p->ecn);
	assert_int_equal(p->cnp_interval_us, 4);
	assert_int_equal(p->tx_zero_copy, RP_TX_ZC_ON);
	assert_int_equal(p->tx_zero_copy_min, 4096);
	/* the key's old name still loads */
	assert_int_equal(p->flight_window, 1024);

	p = &tc_cfg.port[1];
	assert_string_equal(p->device, "0000:3B:00.1,rxq=2");
	assert_string_equal(p->ethdev_name, "0000:3b:00.1");
	assert_true(p->is_pci);
	assert_int_equal(p->ipv4, htonl(0x0a010203));
	assert_int_equal(p->prefix_len, 8);
	assert_false(p->mac_set);
	assert_int_equal(p->mtu, 4096);
	assert_int_equal(p->lcore, 0);		/* first engine lcore */
	assert_int_equal(p->region_mb, 4);
	assert_int_equal(p->hop_limit, 64);

	p = &tc_cfg.port[2];
	assert_string_equal(p->ethdev_name, "0000:05:1e.7");
	assert_true(p->is_pci);
	assert_int_equal(p->prefix_len, 32);
	assert_int_equal(p->mtu, 256);
	assert_int_equal(p->lcore, 5);
	assert_int_equal(p->region_mb, 64);
	assert_int_equal(p->hop_limit, 1);

	p = &tc_cfg.port[3];
	assert_string_equal(p->ethdev_name, "net_af_packet1");
	assert_int_equal(p->prefix_len, 31);
	assert_int_equal(p->mtu, 4096);
}

static void
test_defaults(void **state)
{
	static const char text[] =
		"[port0]\n"
		"device = net_ring0\n"
		"ipv4 = 192.0.2.1/24\n";
	const struct rp_port_cfg *p = &tc_cfg.port[0];

	(void)state;
	assert_int_equal(tc_load(text), 0);
	assert_string_equal(tc_cfg.eal_args, "");
	assert_int_equal(tc_cfg.log_level, RTE_LOG_NOTICE);
	assert_int_equal(tc_cfg.main_lcore, 0);
	assert_int_equal(tc_cfg.nb_lcores, 1);
	assert_int_equal(tc_cfg.lcores[0], 1);
	assert_int_equal(tc_cfg.idle, RP_IDLE_YIELD);
	assert_int_equal(tc_cfg.idle_us, 30);
	assert_int_equal(tc_cfg.wake_us, 1000);
	assert_int_equal(tc_cfg.inline_us, RP_INLINE_AUTO);
	assert_int_equal(tc_cfg.nb_ports, 1);
	assert_false(p->mac_set);
	/* auto: found when the port starts (rp_port_mtu_auto()) */
	assert_int_equal(p->mtu, RP_MTU_AUTO);
	assert_int_equal(p->mtu_max, 0);
	assert_int_equal(p->lcore, 1);
	assert_int_equal(p->region_mb, 64);
	assert_int_equal(p->hop_limit, 64);
	assert_false(p->ecn);
	assert_int_equal(p->cnp_interval_us, 50);
	assert_int_equal(p->tx_zero_copy, RP_TX_ZC_REQUESTS);
	assert_int_equal(p->tx_zero_copy_min, 2048);
	assert_int_equal(p->flight_window, 256);
	assert_true(p->dcqcn.on);
	assert_int_equal(p->dcqcn.g, 1019);
	assert_int_equal(p->dcqcn.alpha_us, 55);
	assert_int_equal(p->dcqcn.time_reset_us, 300);
	assert_int_equal(p->dcqcn.hai_mbps, 50);
	assert_int_equal(p->dcqcn.threshold, 5);
	assert_int_equal(p->fault.tx.drop + p->fault.tx.dup +
			 p->fault.tx.reorder + p->fault.tx.corrupt +
			 p->fault.tx.delay + p->fault.tx.ce, 0);
	assert_int_equal(p->fault.rx.drop + p->fault.rx.dup +
			 p->fault.rx.reorder + p->fault.rx.corrupt +
			 p->fault.rx.delay, 0);
	assert_int_equal(p->fault.burst, 1);
	assert_int_equal(p->fault.reorder_depth, 1);
	assert_int_equal(p->fault.delay_us, 1000);
	assert_int_equal(p->fault.seed, 1);
	assert_false(p->is_pci);
	assert_string_equal(p->ethdev_name, "net_ring0");
}

/* [host]: the attach server's limits, their defaults and their ranges. */
static void
test_host_section(void **state)
{
	static const char port[] =
		"[port0]\ndevice = net_ring0\nipv4 = 192.0.2.1/24\n";
	static const char * const bad[] = {
		"hello_timeout_ms = 99", "hello_timeout_ms = 600001",
		"max_pending = 0", "max_pending = 65", "uid_pending = 65",
		"uid_processes = 65", "qps = -1", "cqs = 1k",
		"uid_mr_pages = 4294967296",
	};
	const struct rp_host_cfg *h = &tc_cfg.host;
	char text[512];

	(void)state;
	assert_int_equal(tc_load(port), 0);
	assert_int_equal(h->hello_ms, 2000);
	assert_int_equal(h->max_pending, 32);
	assert_int_equal(h->uid_pending, 8);
	assert_int_equal(h->uid_procs, 32);
	assert_int_equal(h->proc[RP_QUOTA_QP], 1024);
	assert_int_equal(h->proc[RP_QUOTA_CQ], 256);
	assert_int_equal(h->proc[RP_QUOTA_MR], 1024);
	assert_int_equal(h->proc[RP_QUOTA_MW], 1024);
	assert_int_equal(h->proc[RP_QUOTA_SRQ], 64);
	assert_int_equal(h->proc[RP_QUOTA_AH], 1024);
	assert_int_equal(h->proc[RP_QUOTA_PD], 256);
	assert_int_equal(h->proc[RP_QUOTA_CHAN], 64);
	assert_int_equal(h->proc[RP_QUOTA_ASYNC], 16);
	assert_int_equal(h->proc[RP_QUOTA_MR_PAGES], 4194304);
	for (unsigned int k = 0; k < RP_QUOTA_KINDS; k++)
		assert_int_equal(h->uid[k], 2 * h->proc[k]);

	snprintf(text, sizeof(text), "%s[host]\nhello_timeout_ms = 100\n"
		 "qps = 0\nuid_cqs = 7\nmr_pages = 4294967295\n", port);
	assert_int_equal(tc_load(text), 0);
	assert_int_equal(h->hello_ms, 100);
	assert_int_equal(h->proc[RP_QUOTA_QP], 0);
	assert_int_equal(h->uid[RP_QUOTA_CQ], 7);
	assert_int_equal(h->proc[RP_QUOTA_MR_PAGES], UINT32_MAX);
	assert_int_equal(h->proc[RP_QUOTA_CQ], 256);

	for (unsigned int i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(text, sizeof(text), "%s[host]\n%s\n", port, bad[i]);
		tc_load_fails(text, "[host] ");
		assert_non_null(strstr(tc_err, "(accepted: "));
	}
	snprintf(text, sizeof(text), "%s[host]\nquota = 1\n", port);
	tc_load_fails(text, "[host] quota: unknown key");
}

/*
 * Every idle policy has a name, each name loads as its policy, the accepted
 * list of the key names them all, and a value outside the enum is named
 * "invalid" rather than read past the table.
 */
static void
test_idle_policy_names(void **state)
{
	char text[4096];
	unsigned int i;

	(void)state;
	for (i = 0; i < RP_IDLE_MAX; i++) {
		const char *name = rp_idle_policy_name((enum rp_idle_policy)i);

		assert_non_null(name);
		assert_string_not_equal(name, "invalid");
		tc_build(text, sizeof(text), "engine", "idle", name);
		assert_int_equal(tc_load(text), 0);
		assert_int_equal(tc_cfg.idle, i);
		tc_build(text, sizeof(text), "engine", "idle", "sometimes");
		tc_load_fails(text, name);
	}
	assert_string_equal(rp_idle_policy_name(RP_IDLE_BUSY), "busy");
	assert_string_equal(rp_idle_policy_name(RP_IDLE_YIELD), "yield");
	assert_string_equal(rp_idle_policy_name(RP_IDLE_SLEEP), "sleep");
	assert_string_equal(rp_idle_policy_name(RP_IDLE_ADAPTIVE), "adaptive");
	assert_string_equal(rp_idle_policy_name(RP_IDLE_MAX), "invalid");
	assert_string_equal(rp_idle_policy_name((enum rp_idle_policy)-1),
			    "invalid");
	assert_string_equal(rp_idle_policy_name((enum rp_idle_policy)1000),
			    "invalid");
}

static void
test_default_lcores_follow_main(void **state)
{
	(void)state;
	assert_int_equal(tc_load("[engine]\nmain_lcore = 1\n"
				 "[port0]\ndevice = net_ring0\n"
				 "ipv4 = 192.0.2.2/24\n"), 0);
	assert_int_equal(tc_cfg.nb_lcores, 1);
	assert_int_equal(tc_cfg.lcores[0], 0);
	assert_int_equal(tc_cfg.port[0].lcore, 0);
}

static void
test_main_lcore_in_lcores(void **state)
{
	(void)state;
	tc_load_fails("[engine]\nmain_lcore = 2\nlcores = 1,2\n"
		      "[port0]\ndevice = net_ring0\nipv4 = 192.0.2.2/24\n",
		      "[engine] lcores: lcore 2 is main_lcore");
}

static void
test_unknown_key(void **state)
{
	(void)state;
	tc_load_fails("[port0]\ndevice = net_ring0\nipv4 = 192.0.2.1/24\n"
		      "mtux = 1024\n", "[port0] mtux: unknown key");
	assert_non_null(strstr(tc_err, "region_mb"));
	/* every key, the table's last too: the list was cut at 128 bytes */
	assert_non_null(strstr(tc_err, "tx_zero_copy"));
	assert_non_null(strstr(tc_err, "fault_seed)"));
	tc_load_fails("[engine]\nlcore = 1\n[port0]\ndevice = net_ring0\n"
		      "ipv4 = 192.0.2.1/24\n", "[engine] lcore: unknown key");
	tc_load_fails("[eal]\nargv = -v\n[port0]\ndevice = net_ring0\n"
		      "ipv4 = 192.0.2.1/24\n", "[eal] argv: unknown key");
	/* a key and its old name: one value, not the later one */
	tc_load_fails("[port0]\ndevice = net_ring0\nipv4 = 192.0.2.1/24\n"
		      "flight_window = 512\nread_window = 1024\n",
		      "[port0] read_window: sets what 'flight_window' set "
		      "already");
	tc_load_fails("[port0]\ndevice = net_ring0\nipv4 = 192.0.2.1/24\n"
		      "read_window = 1024\nread_window = 512\n",
		      "[port0] read_window: given twice");
}

static void
test_unknown_section(void **state)
{
	(void)state;
	tc_load_fails("[port0]\ndevice = net_ring0\nipv4 = 192.0.2.1/24\n"
		      "[ports]\nx = 1\n", "[ports]: unknown section");
	assert_non_null(strstr(tc_err, "port0..port7"));
	tc_load_fails("[port0]\ndevice = net_ring0\nipv4 = 192.0.2.1/24\n"
		      "[port8]\ndevice = net_ring1\n",
		      "[port8]: unknown section");
	tc_load_fails("[Engine]\n[port0]\ndevice = net_ring0\n"
		      "ipv4 = 192.0.2.1/24\n", "[Engine]: unknown section");
	tc_load_fails("[port00]\ndevice = net_ring0\nipv4 = 192.0.2.1/24\n",
		      "[port00]: unknown section");
}

static void
test_missing_sections_and_keys(void **state)
{
	(void)state;
	tc_load_fails("", "[port0]: missing section");
	tc_load_fails("; nothing\n", "[port0]: missing section");
	tc_load_fails("[engine]\nlcores = 1\n", "[port0]: missing section");
	tc_load_fails("[port1]\ndevice = net_ring0\nipv4 = 192.0.2.1/24\n",
		      "[port0]: missing section");
	tc_load_fails("[port0]\ndevice = net_ring0\nipv4 = 192.0.2.1/24\n"
		      "[port2]\ndevice = net_ring2\nipv4 = 192.0.2.2/24\n",
		      "[port1]: missing section");
	tc_load_fails("[port0]\ndevice = net_ring0\n",
		      "[port0] ipv4: required key missing");
	tc_load_fails("[port0]\nipv4 = 192.0.2.1/24\n",
		      "[port0] device: required key missing");
	tc_load_fails("[port0]\ndevice = net_ring0\nipv4 = 192.0.2.1/24\n"
		      "[port1]\ndevice = net_ring1\n",
		      "[port1] ipv4: required key missing");
}

static void
test_missing_file(void **state)
{
	char dir[] = "/tmp/rp_test_cfg_dir_XXXXXX";
	char path[128];

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/none.ini", dir);
	assert_int_equal(rp_cfg_load(path, &tc_cfg, tc_err, sizeof(tc_err)),
			 -ENOENT);
	assert_non_null(strstr(tc_err, path));
	assert_non_null(strstr(tc_err, "No such file"));

	/* a directory is not a configuration */
	assert_int_equal(rp_cfg_load(dir, &tc_cfg, tc_err, sizeof(tc_err)),
			 -EINVAL);
	assert_non_null(strstr(tc_err, dir));
	assert_int_equal(rmdir(dir), 0);

	/* errors without a buffer still return the code */
	assert_int_equal(rp_cfg_load(path, &tc_cfg, NULL, 0), -ENOENT);
}

static void
test_unreadable_file(void **state)
{
	int rc;

	(void)state;
	if (geteuid() == 0)
		skip();		/* root reads mode 000 files */
	tc_write("[port0]\ndevice = net_ring0\nipv4 = 192.0.2.1/24\n");
	assert_int_equal(chmod(tc_path, 0), 0);
	rc = rp_cfg_load(tc_path, &tc_cfg, tc_err, sizeof(tc_err));
	unlink(tc_path);
	assert_int_equal(rc, -EACCES);
	tc_err_has("cannot open");
}

static void
test_syntax(void **state)
{
	char text[1024];

	(void)state;
	tc_load_fails("[port0]\ndevice = net_ring0\nipv4 = 192.0.2.1/24\n"
		      "mtu 4096\n", "line 4");
	assert_non_null(strstr(tc_err, "[port0]"));
	tc_load_fails("# hash comment\n[port0]\ndevice = net_ring0\n"
		      "ipv4 = 192.0.2.1/24\n", "not '#'");
	tc_load_fails("mtu = 1024\n[port0]\ndevice = net_ring0\n"
		      "ipv4 = 192.0.2.1/24\n", "outside any [section]");
	tc_load_fails("[port0\ndevice = net_ring0\n", "line 1");
	tc_load_fails("[port0] x\ndevice = net_ring0\n", "line 1");
	tc_load_fails("[]\n", "bad section name");
	tc_load_fails("[port0]\n = net_ring0\n", "bad key name");
	tc_load_fails("[port0]\ndevice = net_ring0\nipv4 = 192.0.2.1/24\n"
		      "mtu = 1024\nmtu = 2048\n", "[port0] mtu: given twice");
	tc_load_fails("[port0]\ndevice = net_ring0\nipv4 = 192.0.2.1/24\n"
		      "[port0]\nmtu = 2048\n", "[port0]: section given twice");

	/* rte_cfgfile's limits: 255-character values, 322-character lines */
	snprintf(text, sizeof(text), "[eal]\nargs = %0300d\n", 0);
	tc_load_fails(text, "[eal] args: line 2: value longer than");
	snprintf(text, sizeof(text), "[eal]\n%0330d\n", 0);
	tc_load_fails(text, "line 2: longer than");
	/* ...and exactly 255 is fine */
	snprintf(text, sizeof(text), "[eal]\nargs = -%0254d\n"
		 "[port0]\ndevice = net_ring0\nipv4 = 192.0.2.1/24\n", 0);
	assert_int_equal(tc_load(text), 0);
	assert_int_equal(strlen(tc_cfg.eal_args), 255);
}

static void
test_duplicate_device(void **state)
{
	(void)state;
	tc_load_fails("[port0]\ndevice = net_ring0\nipv4 = 192.0.2.1/24\n"
		      "[port1]\ndevice = net_ring0,x=1\nipv4 = 192.0.2.2/24\n",
		      "[port1] device: net_ring0 is already");
	tc_load_fails("[port0]\ndevice = 0000:01:00.0\nipv4 = 192.0.2.1/24\n"
		      "[port1]\ndevice = 01:00.0\nipv4 = 192.0.2.2/24\n",
		      "[port1] device: 0000:01:00.0 is already");
}

/* A port served by several lcores (lcore as a list). */
static void
test_port_lcores(void **state)
{
	(void)state;
	assert_int_equal(tc_load("[engine]\nlcores = 1,2,3\n"
				 "[port0]\ndevice = net_ring0\n"
				 "ipv4 = 192.0.2.1/24\nlcore = 3,1\n"), 0);
	assert_int_equal(tc_cfg.port[0].nr_lcores, 2);
	assert_int_equal(tc_cfg.port[0].lcores[0], 3);
	assert_int_equal(tc_cfg.port[0].lcores[1], 1);
	assert_int_equal(tc_cfg.port[0].lcore, 3);
	/* one lcore, given or not */
	assert_int_equal(tc_load("[engine]\nlcores = 2,1\n"
				 "[port0]\ndevice = net_ring0\n"
				 "ipv4 = 192.0.2.1/24\n"), 0);
	assert_int_equal(tc_cfg.port[0].nr_lcores, 1);
	assert_int_equal(tc_cfg.port[0].lcore, 2);
	tc_load_fails("[engine]\nlcores = 1,2\n[port0]\ndevice = net_ring0\n"
		      "ipv4 = 192.0.2.1/24\nlcore = 1,3\n",
		      "[port0] lcore: lcore 3 is not in [engine] lcores");
	tc_load_fails("[engine]\nlcores = 1,2\n[port0]\ndevice = net_ring0\n"
		      "ipv4 = 192.0.2.1/24\nlcore = 2,2\n",
		      "lcore 2 is listed twice");
	tc_load_fails("[engine]\nlcores = 1,2\n[port0]\ndevice = net_ring0\n"
		      "ipv4 = 192.0.2.1/24\nlcore = 1,2\nfault_drop = 100\n",
		      "faults are injected on ports served by one lcore");
}

static void
test_af_packet_mtu(void **state)
{
	(void)state;
	/* default framesz 2048 carries IB MTU 1024, not 2048 */
	assert_int_equal(tc_load("[port0]\ndevice = net_af_packet0,iface=a\n"
				 "ipv4 = 192.0.2.1/24\nmtu = 1024\n"), 0);
	tc_load_fails("[port0]\ndevice = net_af_packet0,iface=a\n"
		      "ipv4 = 192.0.2.1/24\nmtu = 2048\n",
		      "[port0] mtu: 2048 does not fit");
	assert_non_null(strstr(tc_err, "accepted: 256, 512, 1024)"));
	assert_int_equal(tc_load("[port0]\ndevice = net_af_packet0,iface=a,"
				 "framesz=5120,blocksz=20480\n"
				 "ipv4 = 192.0.2.1/24\nmtu = 4096\n"), 0);
	assert_int_equal(tc_load("[port0]\ndevice = net_af_packet0,iface=a,"
				 "framesz=8192,blocksz=8192,framecnt=256\n"
				 "ipv4 = 192.0.2.1/24\nmtu = 4096\n"), 0);
	/* other drivers are not second-guessed */
	assert_int_equal(tc_load("[port0]\ndevice = net_tap0,framesz=1\n"
				 "ipv4 = 192.0.2.1/24\nmtu = 4096\n"), 0);
	/* mtu = auto (the default): at most what the ring frames hold,
	 * the interface's MTU found at start */
	assert_int_equal(tc_load("[port0]\ndevice = net_af_packet0,iface=a\n"
				 "ipv4 = 192.0.2.1/24\n"), 0);
	assert_int_equal(tc_cfg.port[0].mtu, RP_MTU_AUTO);
	assert_int_equal(tc_cfg.port[0].mtu_max, 1024);
	assert_int_equal(tc_load("[port0]\ndevice = net_af_packet0,iface=a,"
				 "framesz=5120,blocksz=20480\n"
				 "ipv4 = 192.0.2.1/24\nmtu = auto\n"), 0);
	assert_int_equal(tc_cfg.port[0].mtu_max, 4096);
	assert_int_equal(tc_load("[port0]\ndevice = net_af_packet0,iface=a,"
				 "framesz=2560,blocksz=20480,framecnt=512\n"
				 "ipv4 = 192.0.2.1/24\n"), 0);
	assert_int_equal(tc_cfg.port[0].mtu_max, 2048);
	tc_load_fails("[port0]\ndevice = net_af_packet0,iface=a,framesz=384,"
		      "blocksz=12288,framecnt=32\nipv4 = 192.0.2.1/24\n",
		      "framesz=384 holds no frame of an IB MTU");
	/* ... whatever the mtu key asks */
	tc_load_fails("[port0]\ndevice = net_af_packet0,iface=a,framesz=384,"
		      "blocksz=12288,framecnt=32\nipv4 = 192.0.2.1/24\n"
		      "mtu = 256\n",
		      "framesz=384 holds no frame of an IB MTU");
	/* explicit values say nothing of a limit */
	assert_int_equal(tc_load("[port0]\ndevice = net_ring0\n"
				 "ipv4 = 192.0.2.1/24\nmtu = 2048\n"), 0);
	assert_int_equal(tc_cfg.port[0].mtu, 2048);
	assert_int_equal(tc_cfg.port[0].mtu_max, 0);
}

/* ---- rp_cfg_eal_argv() ------------------------------------------------ */

static char *tc_argv[RP_EAL_MAX_ARGS];
static char tc_storage[4096];

static int
tc_argv_build(const char *text)
{
	assert_int_equal(tc_load(text), 0);
	return rp_cfg_eal_argv(&tc_cfg, "prog", tc_argv, RP_EAL_MAX_ARGS,
			       tc_storage, sizeof(tc_storage));
}

static void
tc_argv_equal(int argc, const char * const *expect)
{
	int i;

	for (i = 0; expect[i] != NULL; i++) {
		if (i >= argc)
			fail_msg("argv too short: %d words, '%s' expected",
				 argc, expect[i]);
		if (strcmp(tc_argv[i], expect[i]) != 0)
			fail_msg("argv[%d] '%s', expected '%s'", i,
				 tc_argv[i], expect[i]);
	}
	assert_int_equal(argc, i);
	assert_null(tc_argv[argc]);
}

static int
tc_argv_count(int argc, const char *word)
{
	int i, n = 0;

	for (i = 0; i < argc; i++)
		n += strcmp(tc_argv[i], word) == 0;
	return n;
}

static int
tc_argv_count_prefix(int argc, const char *prefix)
{
	int i, n = 0;

	for (i = 0; i < argc; i++)
		n += strncmp(tc_argv[i], prefix, strlen(prefix)) == 0;
	return n;
}

static void
test_argv_vdev(void **state)
{
	char prefix[64];
	const char *expect[] = {
		"prog", "--no-huge", "-m", "256", "--no-telemetry",
		"-l", "0,1,3", "--main-lcore", "0",
		"--vdev", "net_ring0",
		"--vdev", "net_af_packet0,iface=rp-veth-a,qpairs=1",
		"--no-pci", "--no-shconf", prefix,
		"--log-level=lib.eal:error", "--log-level=lib.telemetry:error",
		"--log-level=*:notice",
		"--log-level=lib.eal:error", "--log-level=lib.telemetry:error",
		NULL,
	};
	int argc;

	(void)state;
	snprintf(prefix, sizeof(prefix), "--file-prefix=rocepmd-%ld",
		 (long)getpid());
	argc = tc_argv_build("[eal]\nargs = --no-huge  -m 256\t--no-telemetry\n"
			     "[engine]\nlcores = 1,3\n"
			     "[port0]\ndevice = net_ring0\n"
			     "ipv4 = 192.0.2.1/24\n"
			     "[port1]\n"
			     "device = net_af_packet0,iface=rp-veth-a,qpairs=1\n"
			     "ipv4 = 198.51.100.1/24\n");
	tc_argv_equal(argc, expect);
}

static void
test_argv_pci(void **state)
{
	char prefix[64];
	const char *expect[] = {
		"prog", "-m", "128",
		"-l", "1,0", "--main-lcore", "1",
		"-a", "0000:01:00.0",
		"-a", "02:00.1,rxq=2",
		"--in-memory", prefix,
		"--log-level=lib.eal:error", "--log-level=lib.telemetry:error",
		"--log-level=*:notice",
		"--log-level=lib.eal:error", "--log-level=lib.telemetry:error",
		NULL,
	};
	int argc;

	(void)state;
	snprintf(prefix, sizeof(prefix), "--file-prefix=rocepmd-%ld",
		 (long)getpid());
	argc = tc_argv_build("[eal]\nargs = -m 128\n"
			     "[engine]\nmain_lcore = 1\nlcores = 0\n"
			     "[port0]\ndevice = 0000:01:00.0\n"
			     "ipv4 = 192.0.2.1/24\n"
			     "[port1]\ndevice = 02:00.1,rxq=2\n"
			     "ipv4 = 198.51.100.1/24\n");
	tc_argv_equal(argc, expect);
}

static void
test_argv_mixed(void **state)
{
	int argc;

	(void)state;
	argc = tc_argv_build("[eal]\nargs = --no-huge\n"
			     "[port0]\ndevice = net_tap0,iface=t0\n"
			     "ipv4 = 192.0.2.1/24\n"
			     "[port1]\ndevice = 0000:01:00.0\n"
			     "ipv4 = 198.51.100.1/24\n");
	assert_true(argc > 0);
	assert_int_equal(tc_argv_count(argc, "--no-pci"), 0);
	assert_int_equal(tc_argv_count(argc, "--vdev"), 1);
	assert_int_equal(tc_argv_count(argc, "-a"), 1);
	/* --no-huge without -m: the user's choice, nothing added */
	assert_int_equal(tc_argv_count(argc, "--no-huge"), 1);
	assert_int_equal(tc_argv_count(argc, "-m"), 0);
	/* 22.11 refuses --no-huge with --in-memory */
	assert_int_equal(tc_argv_count(argc, "--in-memory"), 0);
	assert_int_equal(tc_argv_count(argc, "--no-shconf"), 1);
}

static void
test_argv_overrides(void **state)
{
	const char *expect[] = {
		"prog", "-l0-3", "--file-prefix=mine", "--in-memory",
		"--socket-mem=64", "--no-pci",
		"--vdev", "net_ring0",
		"--log-level=lib.eal:error", "--log-level=lib.telemetry:error",
		"--log-level=*:notice",
		"--log-level=lib.eal:error", "--log-level=lib.telemetry:error",
		NULL,
	};
	int argc;

	(void)state;
	argc = tc_argv_build("[eal]\nargs = -l0-3 --file-prefix=mine "
			     "--in-memory --socket-mem=64 --no-pci\n"
			     "[port0]\ndevice = net_ring0\n"
			     "ipv4 = 192.0.2.1/24\n");
	tc_argv_equal(argc, expect);

	argc = tc_argv_build("[eal]\nargs = --lcores=(0-1)@0 --file-prefix x "
			     "-m512 -a 0000:00:01.0\n"
			     "[port0]\ndevice = net_ring0\n"
			     "ipv4 = 192.0.2.1/24\n");
	assert_true(argc > 0);
	assert_int_equal(tc_argv_count(argc, "-l"), 0);
	assert_int_equal(tc_argv_count(argc, "--main-lcore"), 0);
	assert_int_equal(tc_argv_count(argc, "--no-pci"), 0);
	assert_int_equal(tc_argv_count(argc, "--no-huge"), 0);
	assert_int_equal(tc_argv_count(argc, "--in-memory"), 1);
	assert_int_equal(tc_argv_count_prefix(argc, "--file-prefix"), 1);

	argc = tc_argv_build("[eal]\nargs = -c 0x3 --main-lcore 1 -m 64\n"
			     "[port0]\ndevice = net_ring0\n"
			     "ipv4 = 192.0.2.1/24\n");
	assert_int_equal(tc_argv_count(argc, "-l"), 0);
	assert_int_equal(tc_argv_count(argc, "--main-lcore"), 1);

	/* --main-lcore alone: -l is still added, --main-lcore is not */
	argc = tc_argv_build("[eal]\nargs = --main-lcore=0 -m 64\n"
			     "[port0]\ndevice = net_ring0\n"
			     "ipv4 = 192.0.2.1/24\n");
	assert_int_equal(tc_argv_count(argc, "-l"), 1);
	assert_int_equal(tc_argv_count(argc, "0,1"), 1);
	assert_int_equal(tc_argv_count(argc, "--main-lcore"), 0);
}

/*
 * [eal] log_level: every log type at that level, EAL and telemetry at
 * errors only below info (their start-up warnings are false alarms), the
 * narrower options on both sides of the wider; the [eal] args' own
 * --log-level options again at the end, in both forms.
 */
static void
test_argv_log_levels(void **state)
{
	static const char args[] =
		"[eal]\nargs = -l 0,1 --log-level pmd.net.af_xdp:debug -m 64 "
		"--log-level=rocepmd.*:debug --file-prefix=x --in-memory\n";
	static const char port[] =
		"[port0]\ndevice = net_ring0\nipv4 = 192.0.2.1/24\n";
	const char *quiet[] = {
		"prog", "-l", "0,1", "--log-level", "pmd.net.af_xdp:debug",
		"-m", "64", "--log-level=rocepmd.*:debug", "--file-prefix=x",
		"--in-memory", "--vdev", "net_ring0", "--no-pci",
		"--log-level=lib.eal:error", "--log-level=lib.telemetry:error",
		"--log-level=*:warning",
		"--log-level=lib.eal:error", "--log-level=lib.telemetry:error",
		"--log-level", "pmd.net.af_xdp:debug",
		"--log-level=rocepmd.*:debug", NULL,
	};
	const char *loud[] = {
		"prog", "-l", "0,1", "-m", "64", "--file-prefix=x",
		"--in-memory", "--vdev", "net_ring0", "--no-pci",
		"--log-level=*:info", NULL,
	};
	char text[512];
	int argc;

	(void)state;
	snprintf(text, sizeof(text), "%slog_level = warning\n%s", args, port);
	argc = tc_argv_build(text);
	tc_argv_equal(argc, quiet);

	argc = tc_argv_build("[eal]\nargs = -l 0,1 -m 64 --file-prefix=x "
			     "--in-memory\nlog_level = info\n"
			     "[port0]\ndevice = net_ring0\n"
			     "ipv4 = 192.0.2.1/24\n");
	tc_argv_equal(argc, loud);

	/* error and more severe: one level for every type */
	argc = tc_argv_build("[eal]\nlog_level = error\n"
			     "[port0]\ndevice = net_ring0\n"
			     "ipv4 = 192.0.2.1/24\n");
	assert_int_equal(tc_argv_count_prefix(argc, "--log-level"), 1);
	assert_int_equal(tc_argv_count(argc, "--log-level=*:error"), 1);
	argc = tc_argv_build("[eal]\nlog_level = emergency\n"
			     "[port0]\ndevice = net_ring0\n"
			     "ipv4 = 192.0.2.1/24\n");
	assert_int_equal(tc_argv_count_prefix(argc, "--log-level"), 1);
	assert_int_equal(tc_argv_count(argc, "--log-level=*:emergency"), 1);

	/* "--log-level" at the very end, without its value: copied as is
	 * (the EAL says what is wrong); "--log-levels" is not one */
	argc = tc_argv_build("[eal]\nargs = --log-levels=1 --log-level\n"
			     "[port0]\ndevice = net_ring0\n"
			     "ipv4 = 192.0.2.1/24\n");
	assert_int_equal(tc_argv_count(argc, "--log-level"), 2);
	assert_int_equal(tc_argv_count(argc, "--log-levels=1"), 1);
	assert_string_equal(tc_argv[argc - 1], "--log-level");
}

/* Free huge pages of any size, read as rp_cfg does. */
static bool
tc_hugepages_free(void)
{
	static const char * const sizes[] = {
		"hugepages-2048kB", "hugepages-1048576kB",
	};
	unsigned int i;

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		char path[128];
		unsigned long n = 0;
		FILE *f;

		snprintf(path, sizeof(path),
			 "/sys/kernel/mm/hugepages/%s/free_hugepages",
			 sizes[i]);
		f = fopen(path, "r");
		if (f == NULL)
			continue;
		if (fscanf(f, "%lu", &n) != 1)
			n = 0;
		fclose(f);
		if (n > 0)
			return true;
	}
	return false;
}

static void
test_argv_hugepages(void **state)
{
	int argc, i;

	(void)state;
	argc = tc_argv_build("[port0]\ndevice = net_ring0\n"
			     "ipv4 = 192.0.2.1/24\n");
	assert_true(argc > 0);
	for (i = 0; i < argc; i++) {
		if (strcmp(tc_argv[i], "--no-huge") == 0)
			break;
	}
	if (tc_hugepages_free()) {
		assert_int_equal(i, argc);
		assert_int_equal(tc_argv_count(argc, "--in-memory"), 1);
		assert_int_equal(tc_argv_count(argc, "--no-shconf"), 0);
	} else {
		assert_true(i + 2 < argc);
		assert_string_equal(tc_argv[i + 1], "-m");
		assert_string_equal(tc_argv[i + 2], "512");
		assert_int_equal(tc_argv_count(argc, "--in-memory"), 0);
		assert_int_equal(tc_argv_count(argc, "--no-shconf"), 1);
	}

	/* --in-memory from the user: no --no-huge added, which it refuses */
	argc = tc_argv_build("[eal]\nargs = --in-memory\n[port0]\n"
			     "device = net_ring0\nipv4 = 192.0.2.1/24\n");
	assert_int_equal(tc_argv_count(argc, "--no-huge"), 0);
	assert_int_equal(tc_argv_count(argc, "--in-memory"), 1);
	assert_null(tc_argv[argc]);
}

static void
test_argv_limits(void **state)
{
	char small[16];
	char text[1024];
	int argc, i;

	(void)state;
	argc = tc_argv_build("[eal]\nargs = -m 64\n[port0]\n"
			     "device = net_ring0\nipv4 = 192.0.2.1/24\n");
	assert_true(argc > 0);
	/* exactly argc + 1 slots is enough, one fewer is not */
	assert_int_equal(rp_cfg_eal_argv(&tc_cfg, "prog", tc_argv, argc + 1,
					 tc_storage, sizeof(tc_storage)),
			 argc);
	assert_int_equal(rp_cfg_eal_argv(&tc_cfg, "prog", tc_argv, argc,
					 tc_storage, sizeof(tc_storage)),
			 -E2BIG);
	assert_int_equal(rp_cfg_eal_argv(&tc_cfg, "prog", tc_argv,
					 RP_EAL_MAX_ARGS, small,
					 sizeof(small)), -ENOSPC);
	assert_int_equal(rp_cfg_eal_argv(NULL, "prog", tc_argv,
					 RP_EAL_MAX_ARGS, tc_storage,
					 sizeof(tc_storage)), -EINVAL);

	/* the most [eal] args accepted still fit RP_EAL_MAX_ARGS with every port */
	snprintf(text, sizeof(text),
		 "[eal]\nargs = -v -v -v -v -v -v -v -v -v -v -v -v -v -v -v "
		 "-v -v -v -v -v -v -v -v -v -v -v -v -v -v -v -v -v -v -v "
		 "-v -v -v -v -v -v -v -v -v -v\n"
		 "[engine]\nlcores = 1,2,3,4,5,6,7,8\n");
	for (i = 0; i < RP_MAX_PORTS; i++)
		snprintf(text + strlen(text), sizeof(text) - strlen(text),
			 "[port%d]\ndevice = net_ring%d\n"
			 "ipv4 = 192.0.2.%d/24\n", i, i, i + 1);
	argc = tc_argv_build(text);
	assert_true(argc > 0);
	assert_true(argc < RP_EAL_MAX_ARGS);
	assert_null(tc_argv[argc]);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_base_loads),
		cmocka_unit_test(test_good),
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_host_section),
		cmocka_unit_test(test_default_lcores_follow_main),
		cmocka_unit_test(test_idle_policy_names),
		cmocka_unit_test(test_every_key_bad_value),
		cmocka_unit_test(test_every_key_empty_value),
		cmocka_unit_test(test_main_lcore_in_lcores),
		cmocka_unit_test(test_unknown_key),
		cmocka_unit_test(test_unknown_section),
		cmocka_unit_test(test_missing_sections_and_keys),
		cmocka_unit_test(test_missing_file),
		cmocka_unit_test(test_unreadable_file),
		cmocka_unit_test(test_syntax),
		cmocka_unit_test(test_duplicate_device),
		cmocka_unit_test(test_af_packet_mtu),
		cmocka_unit_test(test_argv_vdev),
		cmocka_unit_test(test_port_lcores),
		cmocka_unit_test(test_argv_pci),
		cmocka_unit_test(test_argv_mixed),
		cmocka_unit_test(test_argv_overrides),
		cmocka_unit_test(test_argv_hugepages),
		cmocka_unit_test(test_argv_limits),
		cmocka_unit_test(test_argv_log_levels),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
