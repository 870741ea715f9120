#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# bad_config.sh: rocepmd-run refuses a bad configuration before the program
# runs.  For each broken copy of config/netns-a.ini, rocepmd-run must exit
# with status 1, name the file and the offending key on stderr, and never
# run the program, which would create a marker file.  A control run with
# the unbroken file (and an empty preload library instead of the shim, so
# no engine starts) must run the program and create the marker, which shows
# that the marker's absence means something.  No root needed.

. "$(dirname "$0")/lib.sh"

rv_need_env
[ -r "${RV_EMPTY_PRELOAD:-}" ] || rv_fail "RV_EMPTY_PRELOAD is not set"
base=$RP_SRC_ROOT/config/netns-a.ini
[ -r "$base" ] || rv_fail "$base not found"

marker=$rv_tmp/marker

# attempt NAME CONFIG -- rocepmd-run extra options
attempt() {
	local cfg=$1

	shift
	rm -f "$marker"
	# shellcheck disable=SC2016 # $0 is for the inner shell
	"$RP_RUN" --config "$cfg" "$@" -- /bin/sh -c 'touch "$0"' "$marker" \
		>"$rv_tmp/out" 2>"$rv_tmp/err"
}

# bad NAME KEY SED-SCRIPT: a broken copy must be refused, naming KEY.
bad() {
	local name=$1 key=$2 script=$3 cfg rc

	cfg=$rv_tmp/$name.ini
	sed "$script" "$base" >"$cfg"
	cmp -s "$cfg" "$base" && rv_fail "$name: the edit changed nothing"
	attempt "$cfg"
	rc=$?
	rv_log "$name: status $rc, stderr: $(head -c 300 "$rv_tmp/err" | tr '\n' ' ')"
	[ ! -e "$marker" ] || rv_fail "$name: the program ran (marker created)"
	[ "$rc" -eq 1 ] || rv_fail "$name: rocepmd-run exited with $rc, expected 1"
	grep -qF "$name.ini" "$rv_tmp/err" ||
		rv_fail "$name: stderr does not name the file $name.ini"
	grep -qw -- "$key" "$rv_tmp/err" ||
		rv_fail "$name: stderr does not name the key '$key'"
}

rv_log "control: the unbroken config runs the program"
attempt "$base" --shim "$RV_EMPTY_PRELOAD"
rc=$?
if [ "$rc" -ne 0 ] || [ ! -e "$marker" ]; then
	rv_fail "control run: status $rc, marker ${marker##*/} $([ -e "$marker" ] || echo missing); stderr: $(cat "$rv_tmp/err")"
fi

bad mtu-bad-value mtu 's/^mtu[[:space:]]*=.*/mtu = 4097/'
bad mtu-not-number mtu 's/^mtu[[:space:]]*=.*/mtu = big/'
bad ipv4-missing ipv4 '/^ipv4[[:space:]]*=/d'
bad ipv4-bad-value ipv4 's/^ipv4[[:space:]]*=.*/ipv4 = 192.0.2.300\/24/'
bad device-missing device '/^device[[:space:]]*=/d'
bad idle-bad-value idle 's/^idle[[:space:]]*=.*/idle = sometimes/'
bad lcore-not-engine lcore 's/^lcore[[:space:]]*=.*/lcore = 7/'
bad unknown-key mtux 's/^mtu[[:space:]]*=/mtux = 1\nmtu =/'
rv_log "PASS: every broken config refused before the program ran"
