#!/bin/sh
# RoCE QoS for the fabric NICs of every hgx-b300, written by clusterc from the same RoCE
# profile as the switch configs (catalog/data/roce.yaml, id ROCE). Run as root at boot,
# after the NICs are up (needs mlnx_qos and cma_roce_tos: mlnx-tools / MLNX_OFED / DOCA).
#   trust dscp; RoCE DSCP 26 -> priority 3 -> TC3 (lossless, PFC);
#   CNP DSCP 48 -> priority 6 -> TC6 (strict); RoCE ToS 106 (DSCP 26 << 2 | ECN 2)
set -eu

qos() {  # qos <netdev> <expected RDMA device, or "" where the catalog does not know it>
    ifname=$1
    # the RDMA device behind the netdev, as ibdev2netdev finds it
    hca=$(ls "/sys/class/net/$ifname/device/infiniband")
    if [ -n "$2" ] && [ "$hca" != "$2" ]; then
        echo "$ifname is $hca, the plan expects $2 (rail order would be wrong): stopping" >&2
        exit 1
    fi
    mlnx_qos -i "$ifname" --trust dscp
    mlnx_qos -i "$ifname" --dscp2prio set,26,3 --dscp2prio set,48,6
    mlnx_qos -i "$ifname" --pfc 0,0,0,1,0,0,0,0 --prio_tc 0,1,2,3,4,5,6,7 --tsa ets,ets,ets,ets,ets,ets,strict,ets --tcbw 50,0,0,50,0,0,0,0
    # DCQCN on lossless priority 3: notification point (sends CNPs), reaction point (slows down).
    # These files are MLNX_OFED / DOCA-OFED driver files; an inbox driver enables DCQCN by default.
    for point in roce_np roce_rp; do
        if [ -e "/sys/class/net/$ifname/ecn/$point/enable/3" ]; then
            echo 1 > "/sys/class/net/$ifname/ecn/$point/enable/3"
        else
            echo "$ifname: no ecn/$point sysfs (inbox driver): DCQCN left at the driver default" >&2
        fi
    done
    # RoCE ToS for RDMA-CM connections and for verbs QPs (NCCL sets NCCL_IB_TC itself)
    cma_roce_tos -d "$hca" -t 106
    echo 106 > "/sys/class/infiniband/$hca/tc/1/traffic_class"
}

qos osfp1-p1 ""  # rail 1
qos osfp1-p2 ""  # rail 2
qos osfp2-p1 ""  # rail 3
qos osfp2-p2 ""  # rail 4
qos osfp3-p1 ""  # rail 5
qos osfp3-p2 ""  # rail 6
qos osfp4-p1 ""  # rail 7
qos osfp4-p2 ""  # rail 8
qos osfp5-p1 ""  # rail 9
qos osfp5-p2 ""  # rail 10
qos osfp6-p1 ""  # rail 11
qos osfp6-p2 ""  # rail 12
qos osfp7-p1 ""  # rail 13
qos osfp7-p2 ""  # rail 14
qos osfp8-p1 ""  # rail 15
qos osfp8-p2 ""  # rail 16
# The catalog has no host topology for hgx-b300: each netdev's RDMA device is read from sysfs, unchecked.
