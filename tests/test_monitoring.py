"""monitoring/: Prometheus configuration and alert rules that encode the plan, checked by
the real promtool (Debian `prometheus`): `check config` (which also reads the file_sd
target files), `check rules`, `check metrics` on plan.prom, and `test rules`, which
evaluates the rules on series named as the exporters name them (node_exporter,
guilbaults/infiniband-exporter) and must fire exactly the alerts a miscabled or
misbehaving fabric should raise."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from compiler.pipeline import build_plan, write_outputs

from .conftest import SPECS

DATA = Path(__file__).parent / "data" / "verify"
PROMTOOL = shutil.which("promtool")
needs_promtool = pytest.mark.skipif(PROMTOOL is None, reason="needs promtool (Debian package prometheus, "
                                    "listed in .ci/debian-packages)")


def _monitoring(tmp_path: Path, spec: Path) -> Path:
    _, plan = build_plan(spec)
    return write_outputs(plan, tmp_path, ["monitoring"]) / "monitoring"


def _promtool(*args: str, cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([PROMTOOL, *args], cwd=cwd, input=stdin, capture_output=True, text=True, timeout=120)


@needs_promtool
@pytest.mark.parametrize("spec", [DATA / "tiny-ib.yaml", DATA / "tiny-rail.yaml", SPECS / "h100-superpod-1su.yaml",
                                  SPECS / "roce-2spine-4leaf-sonic.yaml", SPECS / "b300-xdr-1su.yaml"])
def test_promtool_accepts_config_rules_and_plan_series(tmp_path, spec):
    mon = _monitoring(tmp_path, spec)
    for args in (["check", "config", "prometheus.yml"], ["check", "rules", "alerts.rules.yml"]):
        r = _promtool(*args, cwd=mon)
        assert r.returncode == 0, r.stdout + r.stderr
    r = _promtool("check", "metrics", cwd=mon, stdin=(mon / "plan.prom").read_text())
    assert r.returncode == 0 and not r.stdout.strip(), r.stdout + r.stderr  # no lint findings either
    # a broken target file is caught by check config: the test above reads them for real
    (mon / "targets" / "hosts.json").write_text('[{"targets": 5}]')
    assert _promtool("check", "config", "prometheus.yml", cwd=mon).returncode == 1


def test_targets_and_plan_series_count_the_plan(tmp_path):
    _, plan = build_plan(SPECS / "roce-2spine-4leaf-sonic.yaml")
    mon = write_outputs(plan, tmp_path, ["monitoring"]) / "monitoring"
    hosts = json.loads((mon / "targets" / "hosts.json").read_text())
    switches = json.loads((mon / "targets" / "switches.json").read_text())
    assert len(hosts) == 32 and len(switches) == 6
    # management addresses from the plan's addressing (172.16.0.0/13 servers, 172.26.0.0/15 leaves)
    assert hosts[0] == {"targets": ["172.16.0.1:9100"], "labels": {"name": "gpu-0001", "role": "server", "fabric": "compute"}}
    assert switches[0]["targets"] == ["172.26.0.1:9100"] and switches[0]["labels"]["role"] == "leaf"
    prom = (mon / "plan.prom").read_text()
    links = dict(re.findall(r'^clusterc_plan_switch_links\{name="([^"]+)",role="\w+"\} (\d+)$', prom, re.M))
    assert links == {"leaf-001": "128", "leaf-002": "128", "leaf-003": "128", "leaf-004": "128",
                     "spine-01": "128", "spine-02": "128"}
    ports = re.findall(r"^clusterc_plan_port\{", prom, re.M)
    assert len(ports) == 256 + 2 * 256  # one per switch end: server-leaf once, leaf-spine twice
    # SONiC interface names, as node_exporter on the switch will label them
    assert 'clusterc_plan_port{name="leaf-001",port="Ethernet0",peer="gpu-0001",peer_port="nic1",cable="gpu-0001:1"} 1' in prom


def test_infiniband_plan_series_use_ib_port_numbers_and_node_name_map_names(tmp_path):
    mon = _monitoring(tmp_path, SPECS / "h100-superpod-1su.yaml")
    prom = (mon / "plan.prom").read_text()
    assert 'clusterc_plan_port{name="su1-leaf-r1",port="1",peer="dgx-su1-001 osfp4-p2",peer_port="1",cable="dgx-su1-001:1"} 1' in prom
    assert 'clusterc_plan_port{name="spine-01",port="1",peer="su1-leaf-r1",peer_port="33",cable="su1-leaf-r1:33"} 1' in prom
    # the 8 DGX H100 ports by their mlx5 names (catalog), 31 servers
    assert len(re.findall(r"^clusterc_plan_host_port\{", prom, re.M)) == 31 * 8
    assert 'clusterc_plan_host_port{name="dgx-su1-001",device="mlx5_11",port="osfp1-p1"} 1' in prom
    prometheus = yaml.safe_load((mon / "prometheus.yml").read_text())
    jobs = {j["job_name"]: j for j in prometheus["scrape_configs"]}
    assert set(jobs) == {"clusterc-hosts", "clusterc-infiniband", "clusterc-plan"}
    assert jobs["clusterc-infiniband"]["static_configs"] == [{"targets": ["ufm-01:9683"]}]


def test_q3400_fabric_gets_no_per_port_rules(tmp_path):
    """The Q3400's InfiniBand port numbering is not in the catalog: no per-port plan series
    or rules that could only ever fire wrongly; the per-switch link counts remain."""
    mon = _monitoring(tmp_path, SPECS / "b300-xdr-1su.yaml")
    assert "clusterc_plan_port{" not in (mon / "plan.prom").read_text()
    rules = (mon / "alerts.rules.yml").read_text()
    assert "PlannedPortDown" not in rules and "SwitchLinksBelowPlan" in rules


# --- the rules fire on what a broken fabric reports ----------------------------------------

def _plan_series(mon: Path) -> list[dict]:
    series = []
    for line in (mon / "plan.prom").read_text().splitlines():
        if line and not line.startswith("#"):
            metric, value = line.rsplit(" ", 1)
            series.append({"series": metric, "values": f"{value}x40"})
    return series


def _labels(metric: str) -> dict:
    return dict(re.findall(r'(\w+)="([^"]*)"', metric))


def _run_rule_test(mon: Path, series: list[dict], alerts: list[dict], eval_time: str = "30m") -> None:
    test = {"rule_files": ["alerts.rules.yml"], "evaluation_interval": "1m",
            "tests": [{"interval": "1m", "input_series": series,
                       "alert_rule_test": [dict(a, eval_time=eval_time) for a in alerts]}]}
    (mon / "rules.test.yml").write_text(yaml.safe_dump(test, sort_keys=False))
    r = _promtool("test", "rules", "rules.test.yml", cwd=mon)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]


@needs_promtool
def test_infiniband_rules_fire_on_a_miscabled_fabric(tmp_path):
    mon = _monitoring(tmp_path, DATA / "tiny-ib.yaml")
    plan = _plan_series(mon)
    ports = [_labels(s["series"]) for s in plan if s["series"].startswith("clusterc_plan_port{")]
    series = list(plan) + [{"series": 'infiniband_scrape_ok{job="clusterc-infiniband"}', "values": "1x40"},
                           {"series": 'up{job="clusterc-infiniband"}', "values": "1x40"}]
    down = ports[0]  # su1-leaf-r1 port 1: no link
    crossed = ports[1]  # su1-leaf-r1 port 2: up, but to another host
    slow = ports[2]
    for p in ports:
        if p == down:
            continue
        remote = "dgx-su1-004 osfp4-p1" if p == crossed else p["peer"]
        labels = (f'component="switch",local_name="{p["name"]}",local_port="{p["port"]}",remote_name="{remote}",'
                  f'remote_port="{p["peer_port"]}",local_guid="0x1",remote_guid="0x2"')
        series.append({"series": f"infiniband_width{{{labels}}}", "values": "4x40"})
        series.append({"series": f"infiniband_speed{{{labels}}}", "values": ("53.125" if p == slow else "106.25") + "x40"})
        flapping = p == ports[3]
        series.append({"series": f"infiniband_linkdownedcounter_total{{{labels}}}",
                       "values": "0+1x40" if flapping else "0x40"})
    hosts = [_labels(s["series"]) for s in plan if s["series"].startswith("clusterc_plan_host_port{")]
    series += [{"series": f'node_infiniband_state_id{{job="clusterc-hosts",name="{h["name"]}",device="{h["device"]}",port="1"}}',
                "values": ("1" if i == 0 else "4") + "x40"} for i, h in enumerate(hosts)]
    series += [{"series": f'up{{job="clusterc-hosts",name="{n}"}}', "values": "1x40"} for n in sorted({h["name"] for h in hosts})]

    def sw(p):
        return f'local_name="{p["name"]}",local_port="{p["port"]}"'
    assert down["name"] == crossed["name"] == "su1-leaf-r1" and (down["port"], crossed["port"]) == ("1", "2")
    def alert(labels: dict, summary: str) -> dict:
        return {"exp_labels": labels, "exp_annotations": {"summary": summary}}

    def ib_port(p: dict, remote: str | None = None) -> dict:
        return {"component": "switch", "local_name": p["name"], "local_port": p["port"], "remote_name": remote or p["peer"],
                "remote_port": p["peer_port"], "local_guid": "0x1", "remote_guid": "0x2"}

    _run_rule_test(mon, series, [
        {"alertname": "SwitchLinksBelowPlan", "exp_alerts": [
            alert({"severity": "warning", "name": "su1-leaf-r1", "role": "leaf"}, "su1-leaf-r1: 1 planned cable(s) not up")]},
        {"alertname": "PlannedPortDown", "exp_alerts": [
            alert({"severity": "warning", **down}, "su1-leaf-r1 port 1: cable dgx-su1-001:1 to dgx-su1-001 osfp4-p2 is not up")]},
        {"alertname": "UnplannedNeighbor", "exp_alerts": [
            alert({"severity": "warning", "name": "su1-leaf-r1", "port": "2", "peer": "dgx-su1-004 osfp4-p1",
                   **ib_port(crossed, "dgx-su1-004 osfp4-p1")},
                  "su1-leaf-r1 port 2 reaches dgx-su1-004 osfp4-p1, not its planned neighbour: run clusterc verify on "
                  "ibnetdiscover output for the fix")]},
        {"alertname": "LinkSpeedDegraded", "exp_alerts": [
            alert({"severity": "warning", **ib_port(slow)}, "su1-leaf-r1 port 3 (to dgx-su1-003 osfp4-p2) runs at 53.125 Gb/s "
                  "per lane; the plan says 4xNDR (100 Gb/s per lane)")]},
        {"alertname": "LinkFlapping", "exp_alerts": [
            alert({"severity": "warning", **ib_port(ports[3])}, "su1-leaf-r1 port 4 (to dgx-su1-004 osfp4-p2): link went "
                  "down 15 time(s) in 15 min")]},
        {"alertname": "LinkWidthDegraded", "exp_alerts": []},
        {"alertname": "SymbolErrors", "exp_alerts": []},
        {"alertname": "InfiniBandExporterDown", "exp_alerts": []},
        {"alertname": "HostFabricPortNotActive", "exp_alerts": [
            alert({"severity": "warning", **hosts[0]}, "dgx-su1-001 mlx5_0 (osfp4-p2): the port the plan cables is not ACTIVE")]},
    ])


@needs_promtool
def test_roce_rules_fire_on_port_down_flaps_pause_storms_and_ecn(tmp_path):
    mon = _monitoring(tmp_path, SPECS / "h100-roce-2su-hall.yaml")
    plan = _plan_series(mon)
    ports = [_labels(s["series"]) for s in plan if s["series"].startswith("clusterc_plan_port{")]
    switches = sorted({p["name"] for p in ports})
    series = list(plan) + [{"series": f'up{{job="clusterc-switches",name="{s}"}}', "values": "1x40"} for s in switches]
    down, flapping = ports[0], ports[5]
    for p in ports:
        labels = f'job="clusterc-switches",name="{p["name"]}",device="{p["port"]}"'
        series.append({"series": f"node_network_up{{{labels}}}", "values": ("0" if p == down else "1") + "x40"})
        series.append({"series": f"node_network_carrier_changes_total{{{labels}}}",
                       "values": "0+1x40" if p == flapping else "2x40"})
    host = 'job="clusterc-hosts",name="gpu-su1-001",device="eth2"'
    rdma = 'job="clusterc-hosts",name="gpu-su1-002",device="mlx5_3",port="1"'
    series += [
        {"series": f"node_ethtool_transmitted_pause_storm_warning_events{{{host}}}", "values": "0x20 1x20"},
        {"series": f"node_ethtool_transmitted_pause_storm_error_events{{{host}}}", "values": "0x40"},
        {"series": f"node_ethtool_received_prio3_pause{{{host}}}", "values": "0+600x40"},
        {"series": f"node_infiniband_np_ecn_marked_roce_packets_received_total{{{rdma}}}", "values": "0+6000x40"},
        {"series": f"node_infiniband_rp_cnp_ignored_packets_received_total{{{rdma}}}", "values": "0x30 5x10"},
    ]
    def alert(labels: dict, summary: str) -> dict:
        return {"exp_labels": labels, "exp_annotations": {"summary": summary}}

    _run_rule_test(mon, series, [
        {"alertname": "SwitchLinksBelowPlan", "exp_alerts": [
            alert({"severity": "warning", "name": down["name"], "role": "leaf"}, f"{down['name']}: 1 planned cable(s) not up")]},
        {"alertname": "PlannedPortDown", "exp_alerts": [
            alert({"severity": "warning", **down}, f"{down['name']} {down['port']}: cable {down['cable']} to {down['peer']} "
                                                   f"{down['peer_port']} is not up")]},
        {"alertname": "LinkFlapping", "exp_alerts": [
            alert({"severity": "warning", "job": "clusterc-switches", "name": flapping["name"], "device": flapping["port"]},
                  f"{flapping['name']} {flapping['port']}: carrier changed 15 times in 15 min")]},
        {"alertname": "PfcPauseStorm", "exp_alerts": [
            alert({"severity": "critical", **_labels(host)}, "gpu-su1-001 eth2: PFC pause storm (the NIC stalled and stopped "
                                                             "sending pauses)")]},
        {"alertname": "PfcPausedByFabric", "exp_alerts": [
            alert({"severity": "warning", "priority": "3", **_labels(host)}, "gpu-su1-001 eth2: the fabric has paused priority "
                  "3 for 15 min (10 pause frames/s): congestion ECN did not relieve")]},
        {"alertname": "EcnMarking", "exp_alerts": [
            alert({"severity": "info", **_labels(rdma)}, "gpu-su1-002 mlx5_3: RoCE packets arrive ECN-marked (100/s): "
                                                        "congestion on the path into this host")]},
        {"alertname": "CongestionNotificationsIgnored", "exp_alerts": [
            alert({"severity": "warning", **_labels(rdma)}, "gpu-su1-002 mlx5_3: CNPs received and ignored: RoCE congestion "
                                                           "control (ECN) is not enabled on the adapter")]},
        {"alertname": "SwitchExporterDown", "exp_alerts": []},
    ], eval_time="35m")


@pytest.mark.parametrize("name", ["h100-roce-2su-hall.yaml", "roce-2spine-4leaf-sonic.yaml", "h100-superpod-1su.yaml"])
def test_file_sd_targets_are_what_json_dumps_writes(name):
    """targets/*.json is put together at join speed: it must stay exactly json.dumps(indent=1) of
    the groups (racks in the labels, management addresses or DNS names, a quote in a name)."""
    import dataclasses

    from compiler.render.monitoring import _device_labels, _targets
    from compiler.plan.model import Plan

    from .conftest import shared_plan

    plan: Plan = shared_plan(SPECS / name)
    devices = list(plan.devices)
    devices[0] = dataclasses.replace(devices[0], name='odd "name" \\ é')  # escapes and non-ASCII
    plan = dataclasses.replace(plan, devices=devices, _memo={})
    labels = _device_labels(plan)
    r = plan.routing
    for indices in ([i for i, d in enumerate(devices) if d.tier == 0], [i for i, d in enumerate(devices) if d.tier > 0], []):
        groups = [{"targets": [f"{r.ip(int(r.management[i])) if r is not None and int(r.management[i]) else devices[i].name}:9100"],
                   "labels": labels[i]} for i in indices]
        assert "".join(_targets(plan, indices, 9100)) == json.dumps(groups, indent=1) + "\n"


def _port_lines_one_by_one(plan, ib: bool) -> str:
    """plan.prom's clusterc_plan_port lines spelled a line at a time: every switch end of a
    cable in global port order, names escaped as Prometheus label values."""
    from compiler.plan.naming import SWITCH_ROLES
    from compiler.plan.views import cable_ids, nos_port_names, port_table
    from compiler.render.infiniband import ib_view

    def esc(v: str) -> str:
        return v.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")

    links, devs, offsets, ids = plan.links, plan.devices, plan.port_offsets(), cable_ids(plan)
    view = ib_view(plan) if ib else None
    panel = port_table(plan)["name"] if ib else None
    names = None if ib else nos_port_names(plan, plan.routing.nos if plan.routing is not None else None)
    rows = []
    for k in range(len(links)):
        a, b = (int(links.a_dev[k]), int(links.a_port[k])), (int(links.b_dev[k]), int(links.b_port[k]))
        for (dev, port), (peer, peer_port), side in ((a, b, 0), (b, a, 1)):
            if devs[dev].role not in SWITCH_ROLES:
                continue
            if ib:
                numbers = (int(view.a_port[k]), int(view.b_port[k]))
                own, theirs = str(numbers[side]), str(numbers[1 - side])
                peer_name = devs[peer].name if devs[peer].role in SWITCH_ROLES else f"{devs[peer].name} {panel[offsets[peer] + peer_port]}"
            else:
                own, theirs, peer_name = names[offsets[dev] + port], names[offsets[peer] + peer_port], devs[peer].name
            rows.append((int(offsets[dev] + port), f'clusterc_plan_port{{name="{esc(devs[dev].name)}",port="{esc(own)}",'
                                                   f'peer="{esc(peer_name)}",peer_port="{esc(theirs)}",cable="{esc(ids[k])}"}} 1\n'))
    rows.sort(key=lambda r: r[0])
    return "".join(text for _, text in rows)


@pytest.mark.parametrize("name", ["roce-2spine-4leaf-sonic.yaml", "h100-superpod-1su.yaml", "b300-xdr-1su.yaml"])
def test_plan_port_lines_are_the_lines_spelled_one_by_one(name):
    """plan.prom's port lines are put together from per-device and per-port tables in integer
    order (monitoring._port_rows): they must stay the lines spelled one at a time, with a quote,
    a backslash and a newline in a switch's and a server's name (escaped in every place the
    name goes: switch, peer, cable id)."""
    import dataclasses

    from compiler.plan.columns import text_chunks
    from compiler.plan.model import Plan
    from compiler.render.infiniband import ib_view
    from compiler.render.monitoring import _port_rows

    from .conftest import shared_plan

    plan: Plan = shared_plan(SPECS / name)
    devices = list(plan.devices)
    switch = next(i for i, d in enumerate(devices) if d.tier == 1)
    devices[switch] = dataclasses.replace(devices[switch], name='leaf "odd" \\ one\nline')
    devices[0] = dataclasses.replace(devices[0], name='server "odd" \\ 0')
    plan = dataclasses.replace(plan, devices=devices, _memo={})
    ib = plan.view.protocol == "infiniband"
    if ib and not ib_view(plan).port_numbers_known:
        pytest.skip("no IB port numbers: no port lines")
    pieces, rows = _port_rows(plan, ib)
    expected = _port_lines_one_by_one(plan, ib)
    assert rows == expected.count("\n") > 0
    assert "".join(text_chunks(pieces, rows)) == expected
