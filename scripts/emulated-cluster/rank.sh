#!/usr/bin/env bash
# One rank of a run on the emulated cluster (started by `emulated-cluster.sh run`, once per rank, by
# mpirun in the host's namespace). It finds the rank's node and rail, lets the rank reach mpirun's PMIx
# server from inside the node's namespace (pmix_forward.py), restricts Open MPI's TCP transport to the
# rank's rail interface, tells the reference backend which NICs to sample and how the rails pair, and
# runs the command inside the node's namespace.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
: "${OMPI_COMM_WORLD_RANK:?rank.sh runs under mpirun (emulated-cluster.sh run)}"
: "${ZB_EMU_GPUS_PER_NODE:?}" "${ZB_EMU_RAILS:?}" "${ZB_EMU_PREFIX:?}"
rank=$OMPI_COMM_WORLD_RANK
node=$((rank / ZB_EMU_GPUS_PER_NODE))
rail=$(((rank % ZB_EMU_GPUS_PER_NODE) % ZB_EMU_RAILS))
netns="$ZB_EMU_PREFIX-n$node"

port="${PMIX_SERVER_URI4##*:}"
coproc FORWARD { exec python3 "$here/pmix_forward.py" "$netns" "$port"; }
forward_pid=$FORWARD_PID
read -r inner_port <&"${FORWARD[0]}"
trap 'kill "$forward_pid" 2>/dev/null || true' EXIT
for v in PMIX_SERVER_URI4 PMIX_SERVER_URI41 PMIX_SERVER_URI3 PMIX_SERVER_URI2 PMIX_SERVER_URI21; do
  if [[ -n "${!v:-}" ]]; then export "$v=${!v//127.0.0.1:$port/127.0.0.1:$inner_port}"; fi
done

nics=""
for ((r = 0; r < ZB_EMU_RAILS; ++r)); do nics+="${nics:+,}rail$r"; done
export OMPI_MCA_btl=tcp,self OMPI_MCA_btl_tcp_if_include="rail$rail"
export ZB_NICS="$nics" ZB_NIC_PAIRING=sender_rail
set +e
ip netns exec "$netns" "$@"
status=$?
exit $status
