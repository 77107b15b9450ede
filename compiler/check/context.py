"""What every check reads: the plan, its switch graph and the balanced cuts, built once."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ..plan.graph import FabricGraph, fabric_graph
from ..plan.fabrics import Fabric, fabric_names, fabric_record
from ..plan.model import Plan, is_management_leaf
from .cuts import Cut, CutFlow, balanced_cuts
from .families import family_of
from .flows import FlowNetwork


# Above this many switch-to-switch links, failure analysis samples (see failure_cuts).
LARGE_GRAPH_LINKS = 100_000


@dataclass
class CheckContext:
    """One fabric under judgement. `plan` is that fabric's plan (plan/fabrics.py fabric_plan:
    the plan itself for a one-fabric plan), so the fabric checks see its switches and links
    only; `whole` is the plan with every fabric, for what all fabrics share (racks, power,
    cable reach)."""

    plan: Plan
    seed: int = 1
    whole: Plan | None = None

    @property
    def all_fabrics(self) -> Plan:
        return self.whole if self.whole is not None else self.plan

    @property
    def fabric(self) -> Fabric:
        """The record of the fabric judged (plan/fabric_record.py): its name, kind and design."""
        return fabric_record(self.plan, fabric_names(self.plan)[0])

    @cached_property
    def graph(self) -> FabricGraph:
        return fabric_graph(self.plan)

    @cached_property
    def cuts(self) -> list[Cut]:
        return balanced_cuts(self.plan, self.graph, family_of(self.plan).cuts, seed=self.seed)

    @cached_property
    def switch_tier(self) -> np.ndarray:
        return np.fromiter((self.plan.devices[int(d)].tier for d in self.graph.device_of), dtype=np.int64, count=self.graph.n)

    @cached_property
    def management(self) -> np.ndarray:
        """Per switch: a management leaf (extra endpoints only), which compute figures leave out."""
        return np.fromiter((is_management_leaf(self.plan.devices[int(d)]) for d in self.graph.device_of),
                           dtype=bool, count=self.graph.n)

    @cached_property
    def switch_pod(self) -> np.ndarray:
        """Per switch, its pod (0 where it has none)."""
        return np.fromiter((self.plan.devices[int(d)].pod or 0 for d in self.graph.device_of), dtype=np.int64,
                           count=self.graph.n)

    @cached_property
    def switch_role(self) -> np.ndarray:
        return np.array([self.plan.devices[int(d)].role for d in self.graph.device_of], dtype=object)

    @cached_property
    def unit_twins(self) -> np.ndarray:
        """Per switch, its twin class on the intact graph counting links (plan/graph.py
        twin_classes): swapping two twins maps the graph onto itself."""
        return self.network.unit_twins[0]

    @cached_property
    def network(self) -> FlowNetwork:
        return FlowNetwork(self.graph)

    def failure_cuts(self, intact: list[CutFlow]) -> list[Cut]:
        """The cuts failure scenarios are measured on, given the intact fabric's flows over
        every cut (the bisection figures). Every balanced cut on graphs up to
        LARGE_GRAPH_LINKS links; above, the two tightest cuts of the intact fabric (a few
        lost links or one lost switch rarely change which cut binds, and each cut costs a
        max-flow of ~0.1 s on a 400k-link graph)."""
        if self.graph.a.size <= LARGE_GRAPH_LINKS:
            return self.cuts
        by_value = sorted(intact, key=lambda c: c.gbps)[:2]
        names = {c.name for c in by_value}
        return [c for c in self.cuts if c.name in names]

    def cut_gbps(self, cut: Cut, keep_link=None, keep_switch=None) -> int:
        return self.network.flow(cut.side_a, cut.side_b, keep_link, keep_switch)

    def worst_cut_gbps(self, keep_link=None, keep_switch=None, cuts: list[Cut] | None = None) -> tuple[int, str]:
        """The smallest flow over the balanced cuts (all, or `cuts`), and that cut's name."""
        best = None
        for cut in cuts or self.cuts:
            value = self.cut_gbps(cut, keep_link, keep_switch)
            if best is None or value < best[0]:
                best = (value, cut.name)
        return best if best else (0, "")
