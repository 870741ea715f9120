/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * An empty shared object: bad_config.sh's control run preloads it instead
 * of the verbs shim, so the program runs without starting an engine.
 */

int rv_empty_preload(void);

int
rv_empty_preload(void)
{
	return 0;
}
