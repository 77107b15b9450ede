"""Kubernetes labels, Kueue objects, hosts.csv and hostname patterns.

Modules exercised here: expand/hosts.py (the spec's hosts section), plan/hosts.py (one row per
server)."""

from __future__ import annotations

import csv
import re

import pytest
import yaml

from .conftest import SPECS, cli_in_process, shared_outputs

# kubernetes.io "Labels and Selectors", Syntax and character set (written out here,
# independently of compiler/render/k8s_labels.py).
DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
LABEL_NAME = re.compile(r"^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$")


def valid_key(key: str) -> bool:
    prefix, _, name = key.rpartition("/")
    return (not prefix or (len(prefix) <= 253 and DNS_SUBDOMAIN.match(prefix) is not None)) and \
        len(name) <= 63 and LABEL_NAME.match(name) is not None


def valid_value(value: str) -> bool:
    return value == "" or (len(value) <= 63 and LABEL_NAME.match(value) is not None)


def compile_to(tmp_path, text: str, name: str):
    spec = tmp_path / f"{name}.yaml"
    spec.write_text(text)
    r = cli_in_process("compile", str(spec), "-o", str(tmp_path / "out"))
    return r, tmp_path / "out" / name


def with_name(spec: str, name: str, extra: str = "") -> str:
    text = (SPECS / spec).read_text()
    old = next(line for line in text.splitlines() if line.startswith("name:"))
    return text.replace(old, f"name: {name}") + extra


@pytest.mark.parametrize("spec,extra", [("b200-superpod-16su.yaml", ""), ("seed-8k-fat-tree.yaml", ""),
                                        ("h100-superpod-4su.yaml", "hosts: {label_prefix: fabric.example.org}\n")])
def test_labels_and_kueue(tmp_path, spec, extra):
    if extra:
        r, folder = compile_to(tmp_path, with_name(spec, "k", extra), "k")
        assert r.returncode == 0, r.stderr
    else:  # the example as it is: the session's compiled folder
        folder = shared_outputs(SPECS / spec)
    nodes = [d for d in yaml.safe_load_all((folder / "k8s" / "node-labels.yaml").read_text()) if d]
    topo, flavor = list(yaml.safe_load_all((folder / "k8s" / "kueue-topology.yaml").read_text()))
    hosts = list(csv.DictReader(open(folder / "hosts.csv", newline="")))
    assert [n["metadata"]["name"] for n in nodes] == [h["hostname"] for h in hosts]
    for n in nodes:
        assert n["apiVersion"] == "v1" and n["kind"] == "Node" and valid_value(n["metadata"]["name"])
        for k, v in n["metadata"]["labels"].items():
            assert valid_key(k) and valid_value(v), (k, v)
    # Kueue Topology: 1-16 unique levels, coarse to fine, hostname only last
    levels = [lv["nodeLabel"] for lv in topo["spec"]["levels"]]
    assert topo["kind"] == "Topology" and topo["apiVersion"] == "kueue.x-k8s.io/v1beta2"
    assert 1 <= len(levels) <= 16 and len(set(levels)) == len(levels) and levels[-1] == "kubernetes.io/hostname"
    assert "kubernetes.io/hostname" not in levels[:-1] and all(valid_key(k) for k in levels)
    prefix = "fabric.example.org" if extra else "topology.clusterc.io"
    assert all(k.startswith(prefix + "/") for k in levels[:-1])
    # every node carries every level, and each level nests in the one above it
    parent_of: dict[tuple, str] = {}
    for n in nodes:
        labels = n["metadata"]["labels"]
        values = [labels[k] for k in levels[:-1]]
        for i in range(1, len(values)):
            assert parent_of.setdefault((i, values[i]), values[i - 1]) == values[i - 1]
    # the ResourceFlavor selects these nodes and names the Topology
    assert flavor["kind"] == "ResourceFlavor" and flavor["spec"]["topologyName"] == topo["metadata"]["name"]
    assert flavor["spec"]["nodeLabels"] and all(
        all(n["metadata"]["labels"].get(k) == v for k, v in flavor["spec"]["nodeLabels"].items()) for n in nodes)
    assert DNS_SUBDOMAIN.match(flavor["metadata"]["name"]) and DNS_SUBDOMAIN.match(topo["metadata"]["name"])
    # kubectl label lines say the same as the manifest
    lines = [ln for ln in (folder / "k8s" / "label-nodes.sh").read_text().splitlines() if ln.startswith("kubectl")]
    assert len(lines) == len(nodes)
    for ln, n in zip(lines, nodes):
        words = ln.split()
        assert words[:4] == ["kubectl", "label", "--overwrite", "node"] and words[4] == n["metadata"]["name"]
        assert dict(w.split("=", 1) for w in words[5:]) == n["metadata"]["labels"]


def test_label_syntax_checker_can_fail():
    assert not valid_key("Topology.Example.com/su") and not valid_key("a/" + "x" * 64) and not valid_value("su1-")
    assert valid_key("topology.clusterc.io/su") and valid_value("dgx-su1-001")


@pytest.mark.parametrize("prefix", ["Topology.example.com", "a/b", "-x.example.com", "x" * 254])
def test_bad_label_prefix_is_a_spec_error(tmp_path, prefix):
    r, _ = compile_to(tmp_path, with_name("b200-superpod-2su.yaml", "bad", f'hosts: {{label_prefix: "{prefix}"}}\n'), "bad")
    assert r.returncode == 2 and "hosts.label_prefix" in r.stderr and "Traceback" not in r.stderr


def test_hosts_csv_matches_cabling(tmp_path):
    r, folder = compile_to(tmp_path, with_name("h100-superpod-1su.yaml", "inv"), "inv")
    assert r.returncode == 0
    rows = list(csv.DictReader(open(folder / "hosts.csv", newline="")))
    assert len(rows) == 31 and rows[0]["hostname"] == "dgx-su1-001" and rows[0]["su"] == "1"
    cabling = list(csv.DictReader(open(folder / "cabling.csv", newline="")))
    leaves: dict[str, list[str]] = {}
    for c in cabling:
        if c["kind"] == "server-leaf":
            leaves.setdefault(c["a_device"], []).append(c["b_device"])
    for row in rows:
        assert row["rail_leaves"].split(";") == leaves[row["hostname"]]
        # InfiniBand, no layout, no oob fabric: the plan knows none of these
        assert row["rack"] == row["ru"] == row["bmc_address"] == row["mgmt_address"] == ""


def _plan_json(folder):
    import json

    return json.loads((folder / "plan.json").read_text())


def test_hosts_csv_has_rack_u_and_management_address_of_a_laid_out_ethernet_plan(tmp_path):
    r, folder = compile_to(tmp_path, with_name("h100-roce-2su-hall.yaml", "hall"), "hall")
    assert r.returncode in (0, 1), r.stderr
    hosts = {row["hostname"]: row for row in csv.DictReader(open(folder / "hosts.csv", newline=""))}
    plan = _plan_json(folder)
    cols = plan["devices"]["columns"]
    place = {d[0]: d for d in plan["devices"]["rows"]}
    mgmt = {name: m for name, _, _, m in plan["addressing"]["devices"]["rows"]}
    assert len(hosts) == 32
    for name, row in hosts.items():
        d = place[name]
        assert (row["rack"], row["ru"]) == (d[cols.index("rack")], str(d[cols.index("u")]))
        assert row["mgmt_address"] == mgmt[name] and row["mgmt_address"]
        assert row["bmc_address"] == ""  # no out-of-band fabric in this spec
    # The same places as the cabling sheet's server ends; management from 172.16.0.0/12 (servers the
    # first half, 172.16.0.0/13, its first address skipped): server 1 -> .0.1, server 32 -> .0.32.
    cabling = [c for c in csv.DictReader(open(folder / "cabling.csv", newline="")) if c["a_device"] == "dgx-su2-016"]
    assert len(cabling) == 8 and {(c["a_rack"], c["a_ru"]) for c in cabling} == {(hosts["dgx-su2-016"]["rack"], hosts["dgx-su2-016"]["ru"])}
    # the spine rack stands first (A01: the shortest cables in this hall), SU1's network rack next (A02)
    assert (hosts["dgx-su1-001"]["rack"], hosts["dgx-su1-001"]["ru"]) == ("DH2.A03", "1")
    assert hosts["dgx-su1-001"]["mgmt_address"] == "172.16.0.1" and hosts["dgx-su2-016"]["mgmt_address"] == "172.16.0.32"


def test_hosts_csv_bmc_address_is_its_address_on_the_management_network(tmp_path):
    r, folder = compile_to(tmp_path, with_name("h100-superpod-1su-multi-fabric.yaml", "mf"), "mf")
    assert r.returncode in (0, 1), r.stderr
    hosts = {row["hostname"]: row for row in csv.DictReader(open(folder / "hosts.csv", newline=""))}
    network = _plan_json(folder)["design"]["fabrics"]["oob"]["management_network"]
    bmc = {server: address for server, _, _, address in network["bmc"]["rows"]}
    assert len(hosts) == 31 and len(bmc) == 31
    for name, row in hosts.items():
        assert row["bmc_address"] == bmc[name]
        assert row["mgmt_address"] == ""  # the compute fabric is InfiniBand: no management pool in use
    # oob is the second extra fabric: management pool 10.207.0.0/16, its leaf's subnet 10.207.0.0/26
    # (gateway .1 on the leaf), BMC on host port p (swp1 = 0) at .(2 + p).
    assert hosts["dgx-su1-001"]["bmc_address"] == "10.207.0.2" and hosts["dgx-su1-031"]["bmc_address"] == "10.207.0.32"


def test_default_names_unchanged_and_pattern_used_everywhere(tmp_path):
    r, folder = compile_to(tmp_path, with_name("b200-superpod-2su.yaml", "pat", 'hosts: {hostname: "{prefix}{su}n{index:02}"}\n'), "pat")
    assert r.returncode == 0, r.stderr
    names = [row["hostname"] for row in csv.DictReader(open(folder / "hosts.csv", newline=""))]
    assert names[0] == "dgx1n01" and names[-1] == "dgx2n32" and len(set(names)) == 64
    assert "SwitchName=su1 Nodes=dgx1n[01-32]" in (folder / "slurm" / "topology.conf").read_text()
    assert "name: \"dgx2n32\"" in (folder / "k8s" / "node-labels.yaml").read_text()
    assert "dgx1n01," in (folder / "cabling.csv").read_text()
    r, folder = compile_to(tmp_path, with_name("b200-superpod-2su.yaml", "dflt"), "dflt")
    assert "dgx-su2-032" in (folder / "hosts.csv").read_text()


@pytest.mark.parametrize("pattern,message", [
    ("{prefix}-{rack}", "unknown field {rack}"),
    ("Node{n}", "may only hold a-z"),
    ("{prefix.__class__}", "expected text and fields"),
    ("node_{n}", "may only hold a-z"),
    ("{prefix}-{index}", "gives several servers the same name"),
    ("x" * 62 + "{n:04}", "not a valid hostname"),
    ("{prefix}-{n}-", "not a valid hostname"),
])
def test_bad_hostname_patterns_are_spec_errors(tmp_path, pattern, message):
    r, _ = compile_to(tmp_path, with_name("b200-superpod-2su.yaml", "bad", f'hosts: {{hostname: "{pattern}"}}\n'), "bad")
    assert r.returncode == 2 and message in r.stderr and "Traceback" not in r.stderr
    assert "hosts.hostname" in r.stderr and ":" in r.stderr.split(" ")[0]  # file:line:col


def test_su_field_without_sus_is_an_error(tmp_path):
    r, _ = compile_to(tmp_path, with_name("seed-8k-fat-tree.yaml", "ft", 'hosts: {hostname: "{prefix}-su{su}-{index}"}\n'), "ft")
    assert r.returncode == 2 and "no scalable units" in r.stderr


@pytest.mark.parametrize("name", ["no", "on", "010", "1e3", "null"])
def test_names_yaml_1_1_readers_would_retype_stay_strings(tmp_path, name):
    """Kubernetes' YAML reader (like PyYAML) is YAML 1.1: an unquoted `name: no` is false
    and `010` is 8. A spec may be named so; every name in the k8s files must stay text."""
    r, folder = compile_to(tmp_path, with_name("h100-superpod-1su.yaml", f'"{name}"'), name)
    assert r.returncode == 0, r.stderr
    topo, flavor = list(yaml.safe_load_all((folder / "k8s" / "kueue-topology.yaml").read_text()))
    assert topo["metadata"]["name"] == name and flavor["spec"]["topologyName"] == name
    assert isinstance(flavor["metadata"]["name"], str) and flavor["metadata"]["name"].startswith(f"{name}-")
    nodes = [d for d in yaml.safe_load_all((folder / "k8s" / "node-labels.yaml").read_text()) if d]
    assert all(isinstance(n["metadata"]["name"], str) for n in nodes)


def test_label_check_names_every_failing_value_in_sorted_order():
    """The syntax check runs over every node's name; it reports the failing values sorted
    (only they are sorted), after the failing keys, and passes a clean set."""
    from compiler.render.k8s import _check

    _check(["example.com/su"], ["gpu-node-1", "gpu-node-2"], [("example.com/su", ["su1", "su2"])])
    with pytest.raises(AssertionError) as failed:
        _check(["bad key!"], ["zz-", "gpu-node-1", "-aa"], [("example.com/su", "x_")])
    message = str(failed.value)
    assert message.index("'bad key!'") < message.index("'-aa'") < message.index("'x_'") < message.index("'zz-'")
    assert "'gpu-node-1'" not in message
