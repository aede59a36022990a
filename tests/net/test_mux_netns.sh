# test_mux_netns.sh — two ranks in two network namespaces joined by a veth
# pair, so the shuffle crosses a real (virtual) link rather than loopback.
# Needs root and iproute2; anywhere else it prints "skipped" and passes.
set -u
. "$RACKDB_SOURCE/tests/net/mux_lib.sh"
[ -x "$MUX_NODE" ] || fail "mux_node not built at $MUX_NODE"

if [ "$(id -u)" != 0 ] || ! command -v ip >/dev/null; then
    echo "skipped: needs root and iproute2"
    exit 0
fi
tag=$$
NS_A=rdbmux-$tag-a
NS_B=rdbmux-$tag-b
netns_cleanup() {
    mux_cleanup
    ip netns del "$NS_A" 2>/dev/null
    ip netns del "$NS_B" 2>/dev/null
}
trap netns_cleanup EXIT
if ! ip netns add "$NS_A" 2>/dev/null || ! ip netns add "$NS_B" 2>/dev/null; then
    echo "skipped: cannot create network namespaces here"
    exit 0
fi
net=$((tag % 200 + 20))
ip link add "rmx${tag}a" netns "$NS_A" type veth peer name "rmx${tag}b" netns "$NS_B" ||
    fail "cannot create the veth pair"
ip -n "$NS_A" addr add "10.213.$net.1/24" dev "rmx${tag}a"
ip -n "$NS_B" addr add "10.213.$net.2/24" dev "rmx${tag}b"
for ns in "$NS_A" "$NS_B"; do
    ip -n "$ns" link set lo up
done
ip -n "$NS_A" link set "rmx${tag}a" up
ip -n "$NS_B" link set "rmx${tag}b" up

cluster="$MUX_TMP/cluster.netns"
printf '10.213.%d.1:7100\n10.213.%d.2:7101\n' "$net" "$net" >"$cluster"

run_pair() {
    local label=$1 pids=() r ns rc=0
    shift
    for r in 0 1; do
        ns=$([ $r = 0 ] && echo "$NS_A" || echo "$NS_B")
        ip netns exec "$ns" "$MUX_NODE" --alarm 60 --cluster "$cluster" --rank $r "$@" \
            >"$MUX_TMP/$label.$r.log" 2>&1 &
        pids+=($!)
        MUX_PIDS+=($!)
    done
    for r in 0 1; do
        wait "${pids[$r]}" || rc=1
        grep -q "^rank $r ok" "$MUX_TMP/$label.$r.log" || rc=1
        [ $rc = 0 ] || { cat "$MUX_TMP/$label.$r.log" >&2; fail "$label: rank $r"; }
    done
    MUX_PIDS=()
    echo "ok: $label: $(sed 's/^rank 0 ok: //' "$MUX_TMP/$label.0.log")"
}

run_pair netns-shuffle --mb 16 --msg-kb 256 --workers 2
run_pair netns-shuffle-unscheduled --mb 16 --msg-kb 256 --workers 2 --no-schedule
run_pair netns-broadcast --mb 4 --msg-kb 64 --broadcast
# The data crossed the veth link: rank 0's end received at least what rank 1
# sent it (2 x 8 MB of shuffle + 4 MB of broadcast).
rx=$(ip -n "$NS_A" -s link show "rmx${tag}a" | awk '/RX:/ { getline; print $1; exit }')
[ "${rx:-0}" -ge $((20 * 1048576)) ] || fail "only ${rx:-0} bytes crossed the veth link"
echo "ok: $rx bytes received over the veth link"
echo "netns shuffles verified"
