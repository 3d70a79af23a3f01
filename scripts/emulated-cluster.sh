#!/usr/bin/env bash
# A two-node cluster on one machine, for measured runs without a real cluster: each node is a network
# namespace, and each rail is one veth pair between them ("rail0".."railR-1" on both sides, addresses
# 10.231.<rail>.<node+1>, MTU 9000). A rank sends from its own rail (source routing), so a rail carries
# exactly the traffic of the GPUs mapped to it, as a rail-optimised fabric does; traffic between ranks of
# one node stays inside the namespace (the loopback path stands for NVLink). Only addresses of the
# namespaces made here receive traffic.
#
#   scripts/emulated-cluster.sh up [--rails R] [--slow RAIL=RATE]...   make it (root); RATE as tc says: 200mbit
#   scripts/emulated-cluster.sh run [--gpus-per-node G] [--] COMMAND... mpirun -np 2G, each rank in its node
#   scripts/emulated-cluster.sh down                                    remove it
#   scripts/emulated-cluster.sh check                                   exit 0 if this machine can make it
#
# The reference backend run this way samples each node's rail counters and reports measured NIC bytes:
#   scripts/emulated-cluster.sh up --rails 4
#   scripts/emulated-cluster.sh run -- build/cli/zeppelin-bench run scenarios/emulated/nic-routing.json
#   scripts/emulated-cluster.sh down
# ZB_EMU_PREFIX (default zbemu) names the namespaces, so two clusters can coexist.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
prefix="${ZB_EMU_PREFIX:-zbemu}"
state="/run/$prefix-cluster"
nodes=2

die() { echo "emulated-cluster: $*" >&2; exit 2; }

check() {
  [[ $(id -u) -eq 0 ]] || { echo "emulated-cluster: needs root (network namespaces)"; return 1; }
  command -v ip >/dev/null || { echo "emulated-cluster: 'ip' (iproute2) is missing"; return 1; }
  command -v python3 >/dev/null || { echo "emulated-cluster: python3 is missing"; return 1; }
  local probe="$prefix-probe$$"
  if ! ip netns add "$probe" 2>/dev/null; then echo "emulated-cluster: cannot create a network namespace here"; return 1; fi
  ip netns del "$probe"
}

up() {
  local rails=4 slow=()
  while [[ $# -gt 0 ]]; do
    case "$1" in
      --rails) rails="$2"; shift 2 ;;
      --slow) slow+=("$2"); shift 2 ;;
      *) die "unknown option '$1' for up" ;;
    esac
  done
  [[ "$rails" =~ ^[0-9]+$ && "$rails" -ge 1 && "$rails" -le 16 ]] || die "--rails must be 1..16, got '$rails'"
  check >&2 || exit 3
  [[ ! -e "$state" ]] || die "a cluster named $prefix is up already ($state); run 'down' first"
  for ((n = 0; n < nodes; ++n)); do
    ip netns add "$prefix-n$n"
    ip -n "$prefix-n$n" link set lo up
    ip netns exec "$prefix-n$n" sysctl -qw net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.default.rp_filter=0
  done
  for ((r = 0; r < rails; ++r)); do
    ip link add "$prefix-a$r" type veth peer name "$prefix-b$r"
    ip link set "$prefix-a$r" netns "$prefix-n0"
    ip link set "$prefix-b$r" netns "$prefix-n1"
    ip -n "$prefix-n0" link set "$prefix-a$r" name "rail$r"
    ip -n "$prefix-n1" link set "$prefix-b$r" name "rail$r"
    for ((n = 0; n < nodes; ++n)); do
      ip -n "$prefix-n$n" addr add "10.231.$r.$((n + 1))/24" dev "rail$r"
      ip -n "$prefix-n$n" link set "rail$r" mtu 9000 up
      # Source routing: what a rank sends from its rail address leaves on its rail, whatever the peer.
      ip -n "$prefix-n$n" rule add from "10.231.$r.$((n + 1))" table $((100 + r))
      ip -n "$prefix-n$n" route add 10.231.0.0/16 dev "rail$r" table $((100 + r))
    done
  done
  for spec in "${slow[@]}"; do
    local rail="${spec%%=*}" rate="${spec#*=}"
    [[ "$rail" =~ ^[0-9]+$ && "$rail" -lt "$rails" ]] || die "--slow $spec: no rail $rail"
    for ((n = 0; n < nodes; ++n)); do
      ip netns exec "$prefix-n$n" tc qdisc add dev "rail$rail" root tbf rate "$rate" burst 256kb latency 400ms
    done
  done
  mkdir -p "$(dirname "$state")"
  echo "$rails" >"$state"
  echo "emulated-cluster: up: $nodes nodes ($prefix-n0, $prefix-n1), $rails rails${slow:+, slowed: ${slow[*]}}"
}

down() {
  for ((n = 0; n < nodes; ++n)); do ip netns del "$prefix-n$n" 2>/dev/null || true; done
  rm -f "$state"
}

run() {
  local gpus=""
  while [[ $# -gt 0 ]]; do
    case "$1" in
      --gpus-per-node) gpus="$2"; shift 2 ;;
      --) shift; break ;;
      *) break ;;
    esac
  done
  [[ $# -gt 0 ]] || die "run needs a command"
  [[ -e "$state" ]] || die "no cluster named $prefix is up; run 'up' first"
  local rails; rails="$(cat "$state")"
  gpus="${gpus:-$rails}"
  [[ "$gpus" =~ ^[0-9]+$ && "$gpus" -ge 1 ]] || die "--gpus-per-node must be a positive integer, got '$gpus'"
  command -v mpirun >/dev/null || die "mpirun is missing (apt-get install openmpi-bin)"
  ZB_EMU_PREFIX="$prefix" ZB_EMU_RAILS="$rails" ZB_EMU_GPUS_PER_NODE="$gpus" \
    mpirun --allow-run-as-root --oversubscribe --bind-to none -np $((nodes * gpus)) \
    "$here/emulated-cluster/rank.sh" "$@"
}

case "${1:-}" in
  up) shift; up "$@" ;;
  down) shift; down ;;
  run) shift; run "$@" ;;
  check) check ;;
  *) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
esac
