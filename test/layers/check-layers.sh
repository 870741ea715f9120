#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# The engine's layers (guides/architecture.rst, "Layers"): a file of
# pmd/<layer>/ may include headers of pmd/include/, bpf/ and its own or a
# lower layer, never of a higher one, nor anything of verbs-shim/ or
# rdmacm/; no function is called from a lower layer than its own; and no
# engine header is included by more than half of the engine's files.
#
# check-layers.sh SOURCE_ROOT
set -euo pipefail
top=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
layers=(wire config port net transport engine service)
declare -A rank=([include]=0 [bpf]=0)
for i in "${!layers[@]}"; do
	rank[${layers[$i]}]=$((i + 1))
done
# wire and config are peers at the bottom: neither uses the other
rank[config]=1

cd "$top"
fail=0
stray=$(find pmd -maxdepth 1 -type f \( -name '*.c' -o -name '*.h' \))
if [ -n "$stray" ]; then
	echo "FAIL: engine files outside a layer folder: $stray"
	fail=1
fi

# where each quoted header lives: include, bpf, a layer, or shim/rdmacm
declare -A home
while read -r f; do
	d=${f#pmd/}; d=${d%%/*}
	home[${f##*/}]=$d
done < <(find pmd -mindepth 2 -name '*.h')
while read -r f; do home[${f##*/}]=bpf; done < <(find bpf -name '*.h')
while read -r f; do
	b=${f##*/}
	[ -n "${home[$b]:-}" ] || home[$b]=outside:${f%%/*}
done < <(find verbs-shim rdmacm -name '*.h')

files=$(find pmd -mindepth 2 \( -name '*.c' -o -name '*.h' \) | sort)
nfiles=$(echo "$files" | wc -l)
found=$(mktemp)
trap 'rm -f "$found"' EXIT
declare -A users
for f in $files; do
	d=${f#pmd/}; d=${d%%/*}
	r=${rank[$d]:-}
	if [ -z "$r" ]; then
		echo "FAIL: $f: folder $d is not a layer"
		fail=1
		continue
	fi
	while read -r h; do
		[ -n "$h" ] || continue
		[ "${h##*/}" != "${f##*/}" ] || continue
		users[$h]=$(( ${users[$h]:-0} + 1 ))
		w=${home[$h]:-}
		case $w in
		"")
			echo "FAIL: $f includes \"$h\", which is nowhere in pmd/ or bpf/"
			fail=1 ;;
		outside:*)
			echo "FAIL: $f includes \"$h\" of ${w#outside:}/"
			fail=1 ;;
		*)
			if [ "${rank[$w]}" -gt "$r" ] ||
			   { [ "$w" != "$d" ] && [ "${rank[$w]}" -eq "$r" ] &&
			     [ "$r" -gt 0 ]; }; then
				echo "$f -> $h" >> "$found"
			fi ;;
		esac
	done < <(sed -n 's/^#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f")
done

if [ -s "$found" ]; then
	echo "FAIL: includes that run up a layer:"
	sort -u "$found" | sed 's/^/  /'
	fail=1
fi
for h in "${!users[@]}"; do
	if [ $((users[$h] * 2)) -gt "$nfiles" ]; then
		echo "FAIL: $h is included by ${users[$h]} of the $nfiles engine files (more than half)"
		fail=1
	fi
done
# Calls: a function of pmd/ (rp_*, defined at the start of a line) called
# from a file of a lower layer.  Names only, so a call through a pointer
# is not seen; the includes above catch what a declaration would need.
calls=$(mktemp)
trap 'rm -f "$found" "$calls"' EXIT
cfiles=$(echo "$files" | grep '\.c$')
declare -A defd defl
for f in $cfiles; do
	d=${f#pmd/}; d=${d%%/*}
	for fn in $(sed -n 's/^\(rp_[a-z0-9_]*\)(.*/\1/p' "$f"); do
		defd[$fn]=$f
		defl[$fn]=$d
	done
done
for u in $cfiles; do
	ud=${u#pmd/}; ud=${ud%%/*}
	# the names it calls, outside comment lines
	for fn in $(grep -vE '^[[:space:]]*(/?\*|//)' "$u" |
		    grep -oE '(^|[^a-z0-9_.>])rp_[a-z0-9_]*[[:space:]]*\(' |
		    sed 's/^[^r]*//; s/[[:space:]]*($//' | sort -u); do
		d=${defl[$fn]:-}
		[ -n "$d" ] && [ "${defd[$fn]}" != "$u" ] || continue
		if [ "${rank[$ud]}" -lt "${rank[$d]}" ]; then
			echo "$u calls $fn (${defd[$fn]})" >> "$calls"
		fi
	done
done
if [ -s "$calls" ]; then
	echo "FAIL: calls that run up a layer:"
	sort -u "$calls" | sed 's/^/  /'
	fail=1
fi

up=$(sort -u "$found" | wc -l)
echo "layers: $nfiles engine files, $up includes and $(sort -u "$calls" | wc -l) calls run up a layer"
for l in "${layers[@]}"; do
	printf '  %-10s %3d files %6d lines\n' "$l" \
		"$(find pmd/$l -name '*.[ch]' | wc -l)" \
		"$(cat pmd/$l/*.[ch] | wc -l)"
done
exit $fail
