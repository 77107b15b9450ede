"""One failure state: what it cuts off and what bisection it leaves, and sampled states.

A state is the set of units down per class. It becomes the check layer's masks: switches
down (keep_switch), switch-switch links down (keep_link) and server links down; a GPU is
cut off when no port of its NIC is reached (the check layer's reached_ports, less the ports
whose own link is down), so a dual-plane GPU keeps going on one plane; bisection is the worst of
the check layer's balanced cuts (ctx.worst_cut_gbps) on the damaged fabric, as a fraction of the intact fabric's worst cut. A server link down does
not change the fabric's bisection (it shows as its GPU cut off)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..check.bisection import check_bisection
from ..check.cuts import Cut
from ..check.redundancy import damaged_cuts, reached_ports
from .collective import Collective, collective_fraction
from .components import CLASSES, Components


@dataclass
class Model:
    """What every worker needs: the components, each class's unavailability, the cuts and
    the intact bisection. Picklable (sent once to each worker)."""

    comps: Components
    unavailability: dict[str, float]
    cuts: list[Cut]
    intact_gbps: int
    min_fraction: float
    collective: Collective | None = None  # --pattern: also the collective's throughput fraction
    # GPU attachments -> their NIC (compact ids), and the GPUs behind each NIC: a GPU is cut
    # off when no port of its NIC reaches the fabric (a dual-plane NIC keeps its GPU on one plane)
    at_nic: np.ndarray | None = None
    nic_gpus: np.ndarray | None = None

    @classmethod
    def build(cls, comps: Components, rates: dict[str, dict], min_fraction: float,
              collective: Collective | None = None, per_server: bool = False) -> Model:
        """`per_server`: a GPU is cut off when no port of its server on this fabric is reached
        (a storage or management fabric serves the whole server through any of its NICs);
        else when no port of its own NIC is (the compute fabric: each GPU has its NIC)."""
        ctx = comps.ctx
        bis, _ = check_bisection(ctx)
        cuts = ctx.failure_cuts(bis.cuts)
        at_nic, nic_gpus = _gpus_per_nic(comps, per_server)
        return cls(comps, {c: rates[c]["unavailability"] for c in rates}, cuts, bis.worst_cut_gbps, min_fraction,
                   collective, at_nic, nic_gpus)

    @property
    def gpu_ports(self) -> int:
        return int(self.comps.ctx.graph.at_is_gpu_server.sum())

    @property
    def gpus(self) -> float:
        assert self.nic_gpus is not None  # build() sets it
        return float(self.nic_gpus.sum())

    def gpus_cut_off(self, reach: np.ndarray) -> float:
        g = self.comps.ctx.graph
        gpu = g.at_is_gpu_server
        assert self.at_nic is not None and self.nic_gpus is not None  # build() sets them
        reached = np.bincount(self.at_nic, weights=reach[gpu].astype(np.float64), minlength=self.nic_gpus.size)
        return float(self.nic_gpus[reached == 0].sum())


def _gpus_per_nic(comps: Components, per_server: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Per GPU attachment its NIC (compact id) and per NIC the GPUs it serves: the server's GPUs
    shared evenly over its NICs on the fabric. An attachment without a NIC (a direct network's
    node: a switchless server, a chip) stands for its own NIC."""
    plan, g = comps.ctx.plan, comps.ctx.graph
    gpu = g.at_is_gpu_server
    nic = comps.groups["nic"]
    unit_of_link = np.full(comps.n_links, -1, dtype=np.int64)
    unit_of_link[nic.links] = np.repeat(np.arange(nic.count), np.diff(nic.indptr))
    links = g.at_link[gpu]
    unit = np.where(links >= 0, unit_of_link[np.maximum(links, 0)], -1)
    own = unit < 0
    unit[own] = nic.count + np.arange(int(own.sum()))
    ids, at_nic = np.unique(unit, return_inverse=True)
    dev_of_nic = np.zeros(ids.size, dtype=np.int64)
    dev_of_nic[at_nic] = g.at_device[gpu]
    nics_per_dev = np.bincount(dev_of_nic, minlength=len(plan.devices))
    models = plan.view.facts.models
    gpus_per_dev = np.array([models[d.model].gpus or 0 if d.role == "server" else 0
                             for d in plan.devices], dtype=np.float64)
    if per_server:  # the server's ports on this fabric as one unit, serving all its GPUs
        devs, at_dev = np.unique(dev_of_nic[at_nic.reshape(-1)], return_inverse=True)
        return at_dev.reshape(-1), np.where(gpus_per_dev[devs] > 0, gpus_per_dev[devs], 1.0)
    per = gpus_per_dev[dev_of_nic]
    nic_gpus = np.where(per > 0, per / np.maximum(nics_per_dev[dev_of_nic], 1), 1.0)  # a chip: one accelerator
    return at_nic.reshape(-1), nic_gpus


@dataclass(frozen=True)
class Outcome:
    gpus_cut_off: float  # GPUs (whole on every catalog server: GPUs per server are a multiple of its NICs)
    bisection_fraction: float
    meets: bool
    collective_fraction: float | None = None


def masks(model: Model, down: dict[str, np.ndarray]):
    """keep_switch, keep_link (switch-switch links), server links down, from units down per class."""
    comps = model.comps
    g = comps.ctx.graph
    link_down = np.zeros(comps.n_links, dtype=bool)
    for cls in ("transceiver", "cable", "nic"):
        units = down.get(cls)
        if units is not None and units.size:
            link_down[comps.groups[cls].links_of(units)] = True
    keep_switch = np.ones(g.n, dtype=bool)
    units = down.get("switch")
    if units is not None and units.size:
        switch_node = comps.groups["switch"].node
        assert switch_node is not None  # the switch class maps its units to graph nodes
        keep_switch[switch_node[units]] = False
    return keep_switch, ~link_down[g.link], link_down[g.at_link], link_down


def evaluate(model: Model, down: dict[str, np.ndarray], exact: bool = False) -> Outcome:
    """The state's outcome. `exact`: also the cuts through the damage, refined on the damaged
    fabric (check layer damaged_cuts), as `clusterc check` measures a single failure."""
    g = model.comps.ctx.graph
    keep_switch, keep_link, at_down, link_down = masks(model, down)
    reach = reached_ports(g, keep_link, keep_switch) & ~at_down
    gpus_cut_off = model.gpus_cut_off(reach)
    if keep_switch.all() and keep_link.all():
        value = model.intact_gbps
    else:
        cuts = model.cuts
        if exact:
            dead = np.nonzero(~keep_switch)[0]
            near = (int(dead[0]),) if dead.size else tuple(int(x) for x in (g.a[~keep_link][0], g.b[~keep_link][0]))
            cuts = damaged_cuts(model.comps.ctx, cuts, near, keep_link, keep_switch)
        value = model.comps.ctx.worst_cut_gbps(keep_link, keep_switch, cuts=cuts)[0]
        if exact:  # a cut through the damage may be tighter intact than the worst balanced cut
            value = min(value, model.intact_gbps)
    fraction = value / model.intact_gbps if model.intact_gbps else 1.0
    coll = None
    if model.collective is not None:
        if keep_switch.all() and not link_down.any():
            coll = model.collective.intact_fraction
        else:
            coll = collective_fraction(model.collective, g.device_of[~keep_switch], np.nonzero(link_down)[0])
    return Outcome(gpus_cut_off, fraction, fraction >= model.min_fraction - 1e-12, coll)


def sample_state(model: Model, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Each unit down independently with its class's unavailability: the number down per class
    is binomial, which units uniform without replacement (the same law, without a draw per unit)."""
    down = {}
    for cls in CLASSES:
        n = model.comps.groups[cls].count
        u = model.unavailability.get(cls, 0.0)
        k = int(rng.binomial(n, u)) if n and u > 0 else 0
        down[cls] = np.sort(rng.choice(n, size=k, replace=False)) if k else np.zeros(0, dtype=np.int64)
    return down


def run_chunk(model: Model, seeds: list[np.random.SeedSequence]) -> np.ndarray:
    """Outcomes of the samples seeded by `seeds`, in their order: rows of (gpus cut off,
    bisection fraction, meets, collective fraction or NaN). A state with nothing down is the
    intact one (not re-measured)."""
    out = np.empty((len(seeds), 4), dtype=np.float64)
    for i, ss in enumerate(seeds):
        o = evaluate(model, sample_state(model, np.random.default_rng(ss)))
        out[i] = (o.gpus_cut_off, o.bisection_fraction, o.meets,
                  np.nan if o.collective_fraction is None else o.collective_fraction)
    return out
