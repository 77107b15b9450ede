"""Slurm topology rules that Slurm 22.05 cannot check here (block plugin, topology.yaml),
written from the man pages as summarised in ../shared/reference/formats.md 1.1-1.3
(topology.conf.5, topology.yaml.5, block_record.c, switch_record.c). Each function
returns a list of problems; empty means the file follows the rules."""

from __future__ import annotations

import re

import yaml

from compiler.render.hostlist import expand

MAX_NAME = 64  # HOST_NAME_MAX


def parse_conf(text: str) -> list[dict[str, str]]:
    """key=value lines (keys case-insensitive, '#' comments) as dicts with lower-case keys."""
    out = []
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            out.append({k.lower(): v for k, v in (item.split("=", 1) for item in line.split())})
    return out


def tree_problems(switches: list[dict], all_nodes: set[str]) -> list[str]:
    """switches: [{name, nodes (list) | children (list)}]."""
    problems = []
    names = [s["name"] for s in switches]
    if len(set(names)) != len(names):
        problems.append("duplicate switch name")
    by_name = {s["name"]: s for s in switches}
    leaf_of: dict[str, str] = {}
    for s in switches:
        if len(s["name"]) > MAX_NAME:
            problems.append(f"{s['name']}: name longer than {MAX_NAME}")
        if bool(s.get("nodes")) == bool(s.get("children")):
            problems.append(f"{s['name']}: needs exactly one of nodes or children")
        for n in s.get("nodes") or []:
            if n in leaf_of:
                problems.append(f"node {n} under two leaves ({leaf_of[n]}, {s['name']})")
            leaf_of[n] = s["name"]
            if n not in all_nodes:
                problems.append(f"unknown node {n}")
        for c in s.get("children") or []:
            if c not in by_name or c == s["name"]:
                problems.append(f"{s['name']}: invalid child {c}")
    if set(leaf_of) != all_nodes:
        problems.append(f"{len(all_nodes - set(leaf_of))} nodes under no leaf")

    def reach(name: str, seen: tuple = ()) -> set[str]:
        if name in seen:
            problems.append("switch configuration is not a tree")
            return set()
        s = by_name[name]
        got = set(s.get("nodes") or [])
        for c in s.get("children") or []:
            if c in by_name:
                got |= reach(c, seen + (name,))
        return got

    if not any(reach(n) == all_nodes for n in by_name):
        problems.append("no switch reaches all nodes (no common root)")
    return problems


def block_problems(blocks: list[dict], sizes: list[int], all_nodes: set[str], order: list[str]) -> list[str]:
    """blocks: [{name, nodes (list)}] in file order; order: nodes in network-locality order."""
    problems = []
    if not sizes:
        problems.append("no BlockSizes")
        return problems
    base = sizes[0]
    for s in sizes[1:]:
        k = (s // base).bit_length() - 1
        if s % base or s != base << k or not 1 <= k <= 15:
            problems.append(f"BlockSizes value {s} is not {base} x 2^k (k = 1..15)")
    if sizes != sorted(set(sizes)):
        problems.append("BlockSizes not increasing")
    names = [b["name"] for b in blocks]
    if len(set(names)) != len(names):
        problems.append("duplicate BlockName")
    seen: set[str] = set()
    for b in blocks:
        if len(b["nodes"]) < base:
            problems.append(f"block {b['name']} has {len(b['nodes'])} nodes, fewer than the base {base}")
        for n in b["nodes"]:
            if n in seen:
                problems.append(f"node {n} in two blocks")
            if n not in all_nodes:
                problems.append(f"unknown node {n}")
            seen.add(n)
    flat = [n for b in blocks for n in b["nodes"]]
    rank = {n: i for i, n in enumerate(order)}
    if [rank[n] for n in flat if n in rank] != sorted(rank[n] for n in flat if n in rank):
        problems.append("blocks are not in network-locality order")
    return problems


def conf_tree(text: str) -> list[dict]:
    out = []
    for row in parse_conf(text):
        if "switchname" not in row:
            raise ValueError(f"not a tree line: {row}")
        out.append({"name": row["switchname"], "nodes": expand(row["nodes"]) if "nodes" in row else None,
                    "children": expand(row["switches"]) if "switches" in row else None})
    return out


def conf_blocks(text: str) -> tuple[list[dict], list[int]]:
    blocks, sizes = [], []
    for row in parse_conf(text):
        if "blocksizes" in row:
            sizes = [int(x) for x in row["blocksizes"].split(",")]
        else:
            blocks.append({"name": row["blockname"], "nodes": expand(row["nodes"])})
    return blocks, sizes


def yaml_problems(text: str, all_nodes: set[str], order: list[str]) -> tuple[list[str], dict]:
    """topology.yaml.5: a list of objects; `topology` first; exactly one of tree, block, flat
    (ring/torus3d are newer); at most one cluster_default. Returns (problems, {name: object})."""
    problems = []
    data = yaml.safe_load(text)
    if not isinstance(data, list) or not data:
        return ["topology.yaml must be a non-empty list"], {}
    topologies = {}
    defaults = 0
    for item in data:
        if not isinstance(item, dict) or next(iter(item), None) != "topology":
            problems.append("each entry must start with `topology:`")
            continue
        unknown = set(item) - {"topology", "cluster_default", "tree", "block", "flat"}
        if unknown:
            problems.append(f"{item['topology']}: unknown keys {sorted(unknown)}")
        kinds = [k for k in ("tree", "block", "flat") if k in item]
        if len(kinds) != 1:
            problems.append(f"{item['topology']}: exactly one of tree, block, flat")
        defaults += bool(item.get("cluster_default"))
        if not re.fullmatch(r"[A-Za-z0-9_-]+", str(item["topology"])) or item["topology"] in topologies:
            problems.append(f"bad or repeated topology name {item['topology']!r}")
        topologies[item["topology"]] = item
        if "tree" in item:
            switches = [{"name": s["switch"], "nodes": expand(s["nodes"]) if "nodes" in s else None,
                         "children": expand(s["children"]) if "children" in s else None}
                        for s in item["tree"]["switches"]]
            problems += tree_problems(switches, all_nodes)
        if "block" in item:
            blocks = [{"name": b["block"], "nodes": expand(b["nodes"])} for b in item["block"]["blocks"]]
            problems += block_problems(blocks, list(item["block"].get("block_sizes") or []), all_nodes, order)
    if defaults > 1:
        problems.append("more than one cluster_default")
    return problems, topologies
