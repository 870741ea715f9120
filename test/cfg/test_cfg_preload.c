/* SPDX-License-Identifier: BSD-3-Clause */
/* An empty shared object for rocepmd-run's tests to preload. */

int rp_test_cfg_preload(void);

int
rp_test_cfg_preload(void)
{
	return 0;
}
