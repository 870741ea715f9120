/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The shim's engine-free behaviour against the real libibverbs.so.1.
 *
 * Run with the shim in LD_PRELOAD (meson does), so the ibv_* calls below
 * bind to it, while dlvsym() on libibverbs' own handle reaches the real
 * functions.  Checks:
 *  - the shim is the one answering;
 *  - without ROCEPMD_CONFIG, the device list is empty, not NULL (ENODEV);
 *  - the pure functions (enum strings, rate conversions, kernel struct
 *    copies, sysfs helpers) give exactly libibverbs' results;
 *  - stat() and access() are the shim's (shim_devnode.c) and, with no
 *    device started, answer every path as the C library does.
 * No EAL, no engine: the unit suite.
 */

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <infiniband/sa.h>
#include <infiniband/verbs.h>
#include <rdma/ib_user_sa.h>
#include <rdma/ib_user_verbs.h>

/* Exported by libibverbs without an installed prototype. */
void ibv_copy_ah_attr_from_kern(struct ibv_ah_attr *dst,
				struct ib_uverbs_ah_attr *src);
void ibv_copy_qp_attr_from_kern(struct ibv_qp_attr *dst,
				struct ib_uverbs_qp_attr *src);
void ibv_copy_path_rec_from_kern(struct ibv_sa_path_rec *dst,
				 struct ib_user_path_rec *src);
void ibv_copy_path_rec_to_kern(struct ib_user_path_rec *dst,
			       struct ibv_sa_path_rec *src);
const char *ibv_get_sysfs_path(void);
int ibv_read_sysfs_file(const char *dir, const char *file, char *buf,
			size_t size);

static int failures;

#define CHECK(cond, ...) do { \
	if (!(cond)) { \
		fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
		fprintf(stderr, __VA_ARGS__); \
		fprintf(stderr, "\n"); \
		failures++; \
	} \
} while (0)

static void *verbs;	/* the real libibverbs.so.1 */

static void *
real(const char *name, const char *version)
{
	void *f = dlvsym(verbs, name, version);

	if (f == NULL) {
		fprintf(stderr, "FAIL: %s@%s not in libibverbs.so.1\n", name,
			version);
		exit(1);
	}
	return f;
}

static void
fill(void *p, size_t len, unsigned int seed)
{
	uint8_t *b = p;
	size_t i;

	srand(seed);
	for (i = 0; i < len; i++)
		b[i] = (uint8_t)rand();
}

static void
check_interposed(void)
{
	void *mine = dlsym(RTLD_DEFAULT, "ibv_wc_status_str");

	CHECK(mine != NULL && mine != real("ibv_wc_status_str", "IBVERBS_1.1"),
	      "ibv_wc_status_str is not the shim's: run with LD_PRELOAD");
}

static void
check_device_list(void)
{
	struct ibv_device **list;
	int n = -1;

	unsetenv("ROCEPMD_CONFIG");
	errno = 0;
	list = ibv_get_device_list(&n);
	CHECK(list != NULL, "NULL list, errno %d", errno);
	CHECK(n == 0, "%d devices", n);
	CHECK(errno == ENODEV, "errno %d", errno);
	if (list != NULL) {
		CHECK(list[0] == NULL, "list not terminated");
		ibv_free_device_list(list);
	}
}

static void
check_strings(void)
{
	const char *(*r_wc)(enum ibv_wc_status) =
		real("ibv_wc_status_str", "IBVERBS_1.1");
	const char *(*r_node)(enum ibv_node_type) =
		real("ibv_node_type_str", "IBVERBS_1.1");
	const char *(*r_port)(enum ibv_port_state) =
		real("ibv_port_state_str", "IBVERBS_1.1");
	const char *(*r_event)(enum ibv_event_type) =
		real("ibv_event_type_str", "IBVERBS_1.1");
	int i;

	for (i = -2; i < 64; i++) {
		CHECK(strcmp(ibv_wc_status_str(i), r_wc(i)) == 0,
		      "wc status %d: \"%s\" != \"%s\"", i,
		      ibv_wc_status_str(i), r_wc(i));
		CHECK(strcmp(ibv_node_type_str(i), r_node(i)) == 0,
		      "node type %d: \"%s\" != \"%s\"", i,
		      ibv_node_type_str(i), r_node(i));
		CHECK(strcmp(ibv_port_state_str(i), r_port(i)) == 0,
		      "port state %d: \"%s\" != \"%s\"", i,
		      ibv_port_state_str(i), r_port(i));
		CHECK(strcmp(ibv_event_type_str(i), r_event(i)) == 0,
		      "event %d: \"%s\" != \"%s\"", i,
		      ibv_event_type_str(i), r_event(i));
	}
}

static void
check_rates(void)
{
	int (*r_to_mult)(enum ibv_rate) = real("ibv_rate_to_mult", "IBVERBS_1.0");
	enum ibv_rate (*r_from_mult)(int) = real("mult_to_ibv_rate", "IBVERBS_1.0");
	int (*r_to_mbps)(enum ibv_rate) = real("ibv_rate_to_mbps", "IBVERBS_1.1");
	enum ibv_rate (*r_from_mbps)(int) = real("mbps_to_ibv_rate", "IBVERBS_1.1");
	int i;

	for (i = -2; i < 64; i++) {
		CHECK(ibv_rate_to_mult(i) == r_to_mult(i), "rate %d", i);
		CHECK(ibv_rate_to_mbps(i) == r_to_mbps(i), "rate %d", i);
	}
	for (i = -2; i < 1024; i++)
		CHECK(mult_to_ibv_rate(i) == r_from_mult(i), "mult %d", i);
	for (i = 0; i < 64; i++) {
		int mbps = r_to_mbps(i);

		CHECK(mbps_to_ibv_rate(mbps) == r_from_mbps(mbps),
		      "mbps %d", mbps);
		CHECK(mbps_to_ibv_rate(mbps + 1) == r_from_mbps(mbps + 1),
		      "mbps %d", mbps + 1);
	}
}

static void
check_marshall(void)
{
	void (*r_qp)(struct ibv_qp_attr *, struct ib_uverbs_qp_attr *) =
		real("ibv_copy_qp_attr_from_kern", "IBVERBS_1.0");
	void (*r_ah)(struct ibv_ah_attr *, struct ib_uverbs_ah_attr *) =
		real("ibv_copy_ah_attr_from_kern", "IBVERBS_1.1");
	void (*r_from)(struct ibv_sa_path_rec *, struct ib_user_path_rec *) =
		real("ibv_copy_path_rec_from_kern", "IBVERBS_1.0");
	void (*r_to)(struct ib_user_path_rec *, struct ibv_sa_path_rec *) =
		real("ibv_copy_path_rec_to_kern", "IBVERBS_1.0");
	struct ib_uverbs_qp_attr kqp;
	struct ib_uverbs_ah_attr kah;
	struct ib_user_path_rec kpr, kpr_a, kpr_b;
	struct ibv_qp_attr qa, qb;
	struct ibv_ah_attr aa, ab;
	struct ibv_sa_path_rec pr, pa, pb;
	unsigned int seed;

	for (seed = 1; seed <= 16; seed++) {
		fill(&kqp, sizeof(kqp), seed);
		memset(&qa, 0, sizeof(qa));
		memset(&qb, 0, sizeof(qb));
		ibv_copy_qp_attr_from_kern(&qa, &kqp);
		r_qp(&qb, &kqp);
		CHECK(memcmp(&qa, &qb, sizeof(qa)) == 0, "qp attr, seed %u", seed);

		fill(&kah, sizeof(kah), seed);
		memset(&aa, 0, sizeof(aa));
		memset(&ab, 0, sizeof(ab));
		ibv_copy_ah_attr_from_kern(&aa, &kah);
		r_ah(&ab, &kah);
		CHECK(memcmp(&aa, &ab, sizeof(aa)) == 0, "ah attr, seed %u", seed);

		fill(&kpr, sizeof(kpr), seed);
		memset(&pa, 0, sizeof(pa));
		memset(&pb, 0, sizeof(pb));
		ibv_copy_path_rec_from_kern(&pa, &kpr);
		r_from(&pb, &kpr);
		CHECK(memcmp(&pa, &pb, sizeof(pa)) == 0, "path rec from, seed %u",
		      seed);

		fill(&pr, sizeof(pr), seed);
		memset(&kpr_a, 0, sizeof(kpr_a));
		memset(&kpr_b, 0, sizeof(kpr_b));
		ibv_copy_path_rec_to_kern(&kpr_a, &pr);
		r_to(&kpr_b, &pr);
		CHECK(memcmp(&kpr_a, &kpr_b, sizeof(kpr_a)) == 0,
		      "path rec to, seed %u", seed);
	}
}

static void
check_sys(void)
{
	const char *(*r_path)(void) = real("ibv_get_sysfs_path", "IBVERBS_1.0");
	int (*r_read)(const char *, const char *, char *, size_t) =
		real("ibv_read_sysfs_file", "IBVERBS_1.0");
	char dir[] = "/tmp/rp-shim-abi-XXXXXX";
	char path[64];
	char a[16];
	char b[16];
	FILE *f;
	int la;
	int lb;

	CHECK(strcmp(ibv_get_sysfs_path(), r_path()) == 0, "\"%s\" != \"%s\"",
	      ibv_get_sysfs_path(), r_path());

	if (mkdtemp(dir) == NULL)
		return;
	snprintf(path, sizeof(path), "%s/attr", dir);
	f = fopen(path, "w");
	if (f != NULL) {
		fputs("0x1234\n", f);
		fclose(f);
		la = ibv_read_sysfs_file(dir, "attr", a, sizeof(a));
		lb = r_read(dir, "attr", b, sizeof(b));
		CHECK(la == lb && la > 0 && strcmp(a, b) == 0,
		      "%d \"%s\" != %d \"%s\"", la, a, lb, b);
		la = ibv_read_sysfs_file(dir, "attr", a, 3);
		lb = r_read(dir, "attr", b, 3);
		CHECK(la == lb, "truncated: %d != %d", la, lb);
		unlink(path);
	}
	la = ibv_read_sysfs_file(dir, "missing", a, sizeof(a));
	lb = r_read(dir, "missing", b, sizeof(b));
	CHECK(la == lb, "missing: %d != %d", la, lb);
	rmdir(dir);

	CHECK(ibv_fork_init() == 0, "fork_init");
	CHECK(ibv_is_fork_initialized() == IBV_FORK_UNNEEDED, "fork status");
}

static void
check_devnode(void)
{
	static const char *const paths[] = {
		"/", "/proc/self/exe", "/dev/null", "/dev/infiniband/rocepmd0",
		"/nonexistent/rocepmd0",
	};
	void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	struct stat a, b;
	unsigned int i;
	int ra, rb, ea, eb;

	CHECK(libc != NULL && dlsym(RTLD_DEFAULT, "stat") !=
	      dlvsym(libc, "stat", "GLIBC_2.33"), "stat is not the shim's");
	CHECK(libc != NULL && dlsym(RTLD_DEFAULT, "access") !=
	      dlvsym(libc, "access", "GLIBC_2.2.5"),
	      "access is not the shim's");
	for (i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		memset(&a, 0, sizeof(a));
		memset(&b, 0, sizeof(b));
		errno = 0;
		ra = stat(paths[i], &a);
		ea = errno;
		errno = 0;
		rb = fstatat(AT_FDCWD, paths[i], &b, 0);
		eb = errno;
		CHECK(ra == rb && ea == eb && a.st_ino == b.st_ino &&
		      a.st_mode == b.st_mode, "stat(%s): %d/%d, fstatat %d/%d",
		      paths[i], ra, ea, rb, eb);
		errno = 0;
		ra = access(paths[i], R_OK);
		ea = errno;
		errno = 0;
		rb = faccessat(AT_FDCWD, paths[i], R_OK, 0);
		eb = errno;
		CHECK(ra == rb && ea == eb, "access(%s): %d/%d, faccessat "
		      "%d/%d", paths[i], ra, ea, rb, eb);
	}
	if (libc != NULL)
		dlclose(libc);
}

int
main(void)
{
	verbs = dlopen("libibverbs.so.1", RTLD_NOW | RTLD_LOCAL);
	if (verbs == NULL) {
		printf("SKIP: %s\n", dlerror());
		return 77;
	}
	check_interposed();
	check_device_list();
	check_strings();
	check_rates();
	check_marshall();
	check_sys();
	check_devnode();
	if (failures != 0) {
		printf("%d check(s) failed\n", failures);
		return 1;
	}
	printf("OK\n");
	return 0;
}
