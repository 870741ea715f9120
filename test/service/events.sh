#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# events.sh APP RP_EVENTS_TEST CONFIG CASE...: completion-channel cases of
# test/events run attached.  A host (rocepmd-testpmd --host, in a
# namespace of its own) serves the two devices of CONFIG, back to back
# over memif; test/events/rp_events_test runs each CASE through it, its
# channel's eventfd and its CQ moderation (ibv_modify_cq, a control
# operation an attached client may send for its own CQs) the host's to
# serve.  Each case must pass, the host must have held events when the
# case was cq_moderation (cq_events_held of rocepmd1), and both devices'
# objects must be back to the count before.
app=${1:?usage: $0 APP RP_EVENTS_TEST CONFIG CASE...}
ev_test=${2:?usage: $0 APP RP_EVENTS_TEST CONFIG CASE...}
config=${3:?usage: $0 APP RP_EVENTS_TEST CONFIG CASE...}
shift 3
# shellcheck source=../verbs/lib.sh
. "$RP_SRC_ROOT/test/verbs/lib.sh"

rv_need_env
rv_need_root

# One namespace for the host: its memif sockets are abstract.
rv_topology svev
RV_CFG_A=$config
# shellcheck source=host_lib.sh
. "$RP_SRC_ROOT/test/service/host_lib.sh"
host_start A

objs() {
	host_objs A "$1"
}

held() {
	host_stat A cq_events_held 1
}

base0=$(objs 0)
base1=$(objs 1)
for c in "$@"; do
	h0=$(held)
	sv_fg "$c" A -- "$ev_test" "$c"
	[ "$rv_status" -eq 0 ] || { rv_show "$c"; rv_fail "rp_events_test $c attached: status $rv_status"; }
	h1=$(held)
	if [ "$c" = cq_moderation ]; then
		[ "$h1" -gt "$h0" ] ||
			rv_fail "cq_moderation attached: the host held no event (cq_events_held $h0 -> $h1)"
	fi
	rv_log "$c attached: passed, cq_events_held $h0 -> $h1"
done
wait_detached A
[ "$(objs 0)" = "$base0" ] || rv_fail "rocepmd0 holds $(objs 0), not $base0 as before"
[ "$(objs 1)" = "$base1" ] || rv_fail "rocepmd1 holds $(objs 1), not $base1 as before"
rv_log "PASS: $* attached, the host clean"
