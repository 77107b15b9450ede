"""Switchless small clusters: the servers' compute NIC ports cabled straight to other
servers, as a ring or a full mesh (link kind `server-server`).

Wiring rule (rail affinity): port r of a server only ever meets port r of its peer, so
every NCCL channel stays on its own GPU-NIC pair. Each rail is therefore a matching of
the servers (every server at most once), and the rails take turns over a fixed list of
matchings ("rounds"): rail r is wired in round r mod R.

- full-mesh: the round-robin 1-factorization of the complete graph (circle method).
  n even: R = n - 1 rounds, each a perfect matching; n odd: R = n rounds, each leaving
  one server out (its "bye"), so one port per server stays idle. Every pair of servers
  meets in exactly one round, so it gets floor(P / R) links, one more when its round is
  among the first P mod R. Needs P >= R ports per server.
- ring: server i links to i + 1 (and n - 1 to 0). Ring edges alternate between two
  matchings (edges from an even server, edges from an odd server); with n odd the closing
  edge (n - 1, 0) is a third matching of its own. Needs n >= 3 and P >= 2 (3 for odd n).

The circle method is relabelled so that round 0 pairs neighbours in plan order,
(0, 1), (2, 3), ...: then the first half of the servers in plan order is also a good
split for the heavy round (the one with the extra rail). Links are numpy columns.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..diagnostics import SpecInvalid
from ..plan.model import Device
from ..spec.load import LoadedSpec
from . import media as media_choice
from ..plan import naming
from . import ports
from .assembly import PlanAssembly
from .hosts import plain_hosts_record
from .resolve import Common, OnCommon, resolve_common, size_field

LINK_KINDS = ("server-server",)


@dataclass(frozen=True)
class DirectDesign(OnCommon):
    c: Common
    ring: bool
    rails: int  # P: compute NIC ports per server
    rounds: int  # R: matchings the rails take turns over
    notes: tuple[str, ...]

    def rails_per_round(self) -> list[int]:
        """t_k: rails wired in round k (rail r in round r mod R)."""
        base, extra = divmod(self.rails, self.rounds)
        return [base + (k < extra) for k in range(self.rounds)]


def max_full_mesh(ports: int) -> int:
    """The most servers a full mesh of `ports`-port servers holds under the rail rule:
    n even needs n - 1 ports, n odd needs n."""
    even = ports + 1 if (ports + 1) % 2 == 0 else ports
    odd = ports if ports % 2 else ports - 1
    return max(even, odd, 1)


def mesh_rounds(n: int) -> list[np.ndarray]:
    """Round-robin matchings of n servers (circle method), each an (pairs, 2) array with the
    smaller index first; round 0 is (0, 1), (2, 3), ... A bye (n odd) is left out."""
    m = n + (n % 2)  # an odd count plays against a dummy, m - 1: its partner sits out
    # Relabel circle positions so that round 0 pairs plan-order neighbours.
    label = np.empty(m, dtype=np.int64)
    label[0], label[m - 1] = (0, 1) if m == n else (n - 1, n)
    for j in range(1, m // 2):
        first = 2 * j if m == n else 2 * (j - 1)
        label[j], label[m - 1 - j] = first, first + 1
    out = []
    for k in range(m - 1):
        steps = np.arange(1, m // 2)
        a = np.concatenate([[k], (k + steps) % (m - 1)])
        b = np.concatenate([[m - 1], (k - steps) % (m - 1)])
        la, lb = label[a], label[b]
        keep = (la < n) & (lb < n)
        pairs = np.stack([np.minimum(la, lb)[keep], np.maximum(la, lb)[keep]], axis=1)
        out.append(pairs[np.argsort(pairs[:, 0], kind="stable")])
    return out


def ring_rounds(n: int) -> list[np.ndarray]:
    """Ring edges (i, i + 1 mod n) as matchings: from even i, from odd i, and for odd n
    the closing edge (n - 1, 0) alone."""
    i = np.arange(n - 1, dtype=np.int64)
    edges = np.stack([i, i + 1], axis=1)
    out = [edges[i % 2 == 0], edges[i % 2 == 1]]
    closing = np.array([[0, n - 1]], dtype=np.int64)
    if n % 2:
        out.append(closing)
    else:
        out[1] = np.concatenate([out[1], closing])
    return out


def resolve(loaded: LoadedSpec) -> DirectDesign:
    spec, fabric = loaded.spec, loaded.spec.fabric
    c = resolve_common(loaded, LINK_KINDS, switchless=True)
    errors = []

    def error(code, path, message, hint=""):
        errors.append(loaded.diagnostic(code, path, message, hint))

    ring = fabric.topology == "ring"
    assert c.nics is not None  # switchless: resolve_common has checked the server's compute NICs
    n, P = c.servers, len(c.nics.ports)
    # extra_endpoints, nos, layout and growth: refused by trait (expand/families.py)
    if ring and n < 3:
        error("DESIGN_IMPOSSIBLE", size_field(spec), f"a ring needs 3 or more servers; the spec gives {n}",
              "two servers cabled to each other are topology: full-mesh" if n == 2 else "use 3 or more servers")
    elif not ring and n < 2:
        error("DESIGN_IMPOSSIBLE", size_field(spec), "a full mesh needs 2 or more servers; the spec gives 1",
              "one server needs no fabric")
    if errors:
        raise SpecInvalid(errors)
    R = (3 if n % 2 else 2) if ring else (n if n % 2 else n - 1)
    if P < R:
        if ring:
            error("DESIGN_IMPOSSIBLE", ("server",),
                  f"a ring of an odd number of servers ({n}) needs 3 ports per server (port r meets port r of the "
                  f"peer, and an odd cycle needs three alternating matchings); {c.server.id} has {P}",
                  f"use an even number of servers ({n - 1} or {n + 1}), or a server with 3 or more compute ports")
        else:
            most = max_full_mesh(P)
            why = (f"{n - 1} ports per server" if n % 2 == 0 else
                   f"{n} ports per server ({n - 1} peers, and with an odd count each server sits out one round)")
            error("DESIGN_IMPOSSIBLE", size_field(spec),
                  f"a full mesh of {n} servers needs {why} when port r meets port r of the peer; {c.server.id} has {P}",
                  f"use at most {most} servers ({most * c.server.gpus} GPUs), or topology: ring")
        raise SpecInvalid(errors)
    d = DirectDesign(c, ring, P, R, ())
    return DirectDesign(c, ring, P, R, tuple(_notes(d)))


def _notes(d: DirectDesign) -> list[str]:
    c, n = d.c, d.c.servers
    t = d.rails_per_round()
    lo, hi = min(t), max(t)
    spread = f"{lo}" if lo == hi else f"{lo} or {hi}"
    rounds = ring_rounds(n) if d.ring else mesh_rounds(n)
    idle = n * d.rails - 2 * sum(tk * len(m) for tk, m in zip(t, rounds, strict=True))
    notes = []
    if d.ring:
        notes.append(f"ring of {n} servers: port r of server i meets port r of server i+1 (rail affinity); ring edges "
                     f"from even servers, from odd servers{', and the closing edge' if n % 2 else ''} take turns over "
                     f"the {d.rails} rails: {spread} links per ring edge")
    else:
        notes.append(f"full mesh of {n} servers: round-robin matchings ({d.rounds} rounds), rail r wired in round "
                     f"r mod {d.rounds}, port r meets port r of the peer: {spread} links per server pair")
    notes.append("growth: the matchings depend on the number of servers, so adding a server re-plugs existing "
                 "cables (clusterc diff lists which); past a few servers a switched design grows without that")
    if idle:
        why = ("a server outside a round's matching leaves that round's rails idle" if d.ring else
               "each server sits out one round, leaving that round's rails idle")
        notes.append(f"{idle} of {n * d.rails} compute ports stay idle (spare in the plan): {why}")
    notes.append("no switches: checks treat each server as a node that relays traffic (GPU to GPU over NVLink "
                 "inside the server, then out on another port); the NICs themselves do not forward. With rail "
                 "affinity each rail alone is a set of disjoint server pairs")
    notes.append("no switch outputs: no switch configs, InfiniBand files or Slurm topology.conf (there is no switch "
                 "tree; Slurm without a topology plugin treats the nodes as equally close); the Kubernetes labels have "
                 "no leaf level; NCCL topology files apply per server as usual")
    assert c.nics is not None  # resolve() read its ports
    end = ports.server_layout(c.server.id, "compute", c.nics).ports[0]
    medium = c.media_requested.get("server-server") or media_choice.choose(c.catalog, None, end, end)
    notes.append(f"server-server cables: {end.form_factor} {end.top}-top at both ends -> {medium} "
                 f"({c.catalog.media[medium].description}); the catalog's DAC cables are finned-to-finned (switch) or "
                 "splitters to a finned cage, none fits two flat-top server cages (the flat-top twin-port DAC variant is "
                 "not in the catalog), so back-to-back copper is not offered")
    return notes


def build(d: DirectDesign):
    c = d.c
    n = c.servers
    b = PlanAssembly(c.catalog, c.media_requested)
    assert c.nics is not None  # resolve() read its ports
    layout = b.layout(ports.server_layout(c.server.id, "compute", c.nics))
    for s in range(n):
        b.add(Device(naming.server(c.server.hostname_prefix, s + 1, None), "server", c.server.id, layout, 0, s + 1))
    rounds = ring_rounds(n) if d.ring else mesh_rounds(n)
    # Rail r -> round r mod R; one block per rail (a matching: every port used at most once).
    a_parts: list[np.ndarray] = []
    b_parts: list[np.ndarray] = []
    rail_parts: list[np.ndarray] = []
    for r in range(d.rails):
        pairs = rounds[r % d.rounds]
        a_parts.append(pairs[:, 0])
        b_parts.append(pairs[:, 1])
        rail_parts.append(np.full(pairs.shape[0], r, dtype=np.int64))
    a_dev, b_dev, rail = np.concatenate(a_parts), np.concatenate(b_parts), np.concatenate(rail_parts)
    order = np.lexsort((rail, b_dev, a_dev))  # cabling order: by server, peer, rail
    b.link_block("server-server", a_dev[order], rail[order], b_dev[order], rail[order])
    return b.plan(c.spec.name, _design_record(d), list(d.notes))


def _design_record(d: DirectDesign) -> dict:
    c = d.c
    t = d.rails_per_round()
    return {
        "topology": c.spec.fabric.topology,
        "tiers": 0,
        "direct": True,
        "node_role": "server",  # the graph's nodes (plan/graph.py): servers, not chips
        "server": c.server.id,
        "switch": None,
        "speed_gbps": c.speed_gbps,
        "switch_radix": None,
        "servers": c.servers,
        "gpus": d.gpus,
        "rails": d.rails,
        "rounds": d.rounds,
        "rails_per_round": t,
        "links_per_pair": {"min": min(t), "max": max(t)},
        "hosts": plain_hosts_record(c.spec, c.server),
    }
