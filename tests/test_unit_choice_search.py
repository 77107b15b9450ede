"""compiler/expand/unit_choice.py's search (cheapest): sizes tried by their ports' floor,
lowest first, so the cheapest is found early and the rest never priced, and the unit
found is the one the whole candidate list's minimum is."""

from __future__ import annotations

import random

from compiler.expand.unit_choice import UnitCost, cheapest


def _cost(size: int, up: int) -> UnitCost:
    """A made-up fabric: ports fall with the size to a minimum at 40, and rise with uplinks."""
    ports = 1000 + 7 * abs(size - 40) + 3 * up
    return UnitCost(size, 64 - up, up, switches=ports // 50, cables=ports // 2, ports=ports, transceivers=ports // 4)


def _floor(size: int, up: int) -> int:
    return 1000 + 7 * abs(size - 40) + 3 * up - 2  # a lower bound, rising with uplinks by more than its slack


def test_the_cheapest_size_is_priced_first_and_the_sizes_past_it_never():
    priced: list[tuple[int, int]] = []

    def cost_of(size: int, up: int) -> UnitCost:
        priced.append((size, up))
        return _cost(size, up)

    best = cheapest([(size, range(8, 20)) for size in range(1, 65)], cost_of, _floor)
    assert best is not None and (best.size, best.up) == (40, 8)
    # sizes 1..39 come first in the list; their floors pass 40's cost: none is priced
    assert priced == [(40, 8)]


def test_the_unit_found_is_the_minimum_over_every_candidate():
    rng = random.Random(7)
    for _ in range(200):
        table = {(s, u): UnitCost(s, 64 - u, u, rng.randint(1, 4), rng.randint(1, 4), rng.randint(1, 40), rng.randint(1, 4))
                 for s in range(1, 12) for u in range(1, 6)}
        buildable = {k for k in table if rng.random() < 0.8}
        candidates = [(s, range(rng.randint(1, 3), rng.randint(3, 6))) for s in range(1, 12)]

        def cost_of(size: int, up: int, table=table, buildable=buildable) -> UnitCost | None:
            return table[size, up] if (size, up) in buildable else None

        def floor(size: int, up: int, table=table) -> int:  # the least ports of this size at up or more uplinks
            return min(table[size, u].ports for u in range(1, 6) if u >= up) - 1

        every = [table[s, u] for s, ups in candidates for u in ups if (s, u) in buildable]
        expected = min(every, key=UnitCost.key) if every else None
        assert cheapest(candidates, cost_of, floor) == expected
