/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The syntax pass of the configuration loader (rp_cfg.c): rte_cfgfile
 * silently skips a line without '=' ("mtu 4096"), truncates long names and
 * values, and fails without saying why, so every line is checked first.
 */

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <rte_cfgfile.h>
#include <rte_string_fns.h>

#include "rp_config.h"

/* Longest line rte_cfgfile_load() accepts, '\n' excluded. */
#define RP_CFG_LINE_MAX		(CFG_NAME_LEN + CFG_VALUE_LEN + 2)

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

int
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
