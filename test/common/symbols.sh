# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=sh
#
# Sourced by verbs-shim/check-symbols.sh and rdmacm/check-symbols.sh, which
# compare what a preloaded library exports with the system library it
# stands in for.  Needs objdump (exit 77, skipped, without it).

if ! command -v objdump >/dev/null 2>&1; then
	echo "SKIP: objdump not found (binutils)"
	exit 77
fi

# sym_find_lib NAME: the path of system library NAME (libibverbs.so.1),
# or nothing.
sym_find_lib() {
	for d in /lib/x86_64-linux-gnu /usr/lib/x86_64-linux-gnu /lib64 \
		 /usr/lib64 /usr/lib; do
		if [ -e "$d/$1" ]; then
			echo "$d/$1"
			return
		fi
	done
	if command -v ldconfig >/dev/null 2>&1; then
		ldconfig -p | awk -v n="$1" '$1 == n { print $NF; exit }'
	fi
}

# sym_funcs LIB: defined functions, default versions only ("(VER)" marks
# a hidden, non-default version): "VERSION symbol", sorted.
sym_funcs() {
	objdump -T "$1" | awk '$3 == "DF" && $4 != "*UND*" &&
		$(NF - 1) !~ /^\(/ { print $(NF - 1), $NF }' | sort -u
}

# sym_data LIB: exported data objects (a leak, for a preloaded library).
sym_data() {
	objdump -T "$1" | awk '$3 == "DO" && $4 != "*UND*" && $4 != "*ABS*"'
}
