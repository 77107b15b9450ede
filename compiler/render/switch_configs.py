"""Switch configs of every Ethernet fabric, one folder per switch under configs/, for the
NOS the spec names (fabric.nos, and fabrics[].nos for storage / in-band / out-of-band
fabrics, whose switch names carry the fabric: configs/storage-leaf-001/). Python decides
what each switch needs (structured_config.py, on each fabric's fabric_plan and routing
plan); which files a NOS gets, from which templates, is its descriptor's (catalog/data/
nos.yaml); the templates only spell it out.

Writes nothing for InfiniBand fabrics or when no NOS is named.
"""

from __future__ import annotations

import gc
import os

from ..catalog.nos import descriptor
from ..check import CheckResults
from ..plan.fabrics import fabric_names, fabric_plan
from ..plan.model import Plan
from .structured_config import SwitchConfig, switch_configs
from .templates import environment
from .writer import OutputDir


def render_switch(config: SwitchConfig) -> dict[str, str]:
    """File name -> text for one switch: the files its NOS's descriptor lists for the
    fabric's peering (catalog/data/nos.yaml), each from its template."""
    env = environment()
    return {name: env.get_template(template).render(d=config)
            for name, template in descriptor(config.nos).files_for(config.peering)}


# Below this many switches one process is quicker than forking.
PARALLEL_FROM = 256


def _write(configs: list[SwitchConfig], out: OutputDir) -> None:
    for config in configs:
        for name, text in render_switch(config).items():
            out.write_text(f"configs/{config.hostname}/{name}", text)


def _write_forked(configs: list[SwitchConfig], out: OutputDir, workers: int) -> None:
    """Render shares of the switches in forked children (they inherit the configs; each
    file is written by exactly one child, so the output is what one process writes)."""
    pids = []
    for k in range(workers):
        pid = os.fork()
        if pid == 0:  # child: never return into the caller's stack
            code = 0
            try:
                _write(configs[k::workers], out)
            except BaseException:  # noqa: BLE001 - reported through the exit status
                import traceback

                traceback.print_exc()
                code = 1
            finally:
                os._exit(code)
        pids.append(pid)
    failed = [pid for pid in pids if os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) != 0]
    if failed:
        raise RuntimeError(f"switch config rendering failed in {len(failed)} worker(s)")


def render(plan: Plan, checks: CheckResults, out: OutputDir) -> None:
    views = [(v, v.routing.nos) for v in (fabric_plan(plan, name) for name in fabric_names(plan)) if v.routing is not None and v.routing.nos]
    if not views:
        return
    # Hundreds of thousands of small records and strings, none cyclic: the cyclic GC
    # would re-scan them over and over (about a third of the time at 5,000 switches).
    enabled = gc.isenabled()
    gc.disable()
    try:
        configs = [c for v, nos in views for c in switch_configs(v, nos)]
        workers = min(len(os.sched_getaffinity(0)), 8) if hasattr(os, "sched_getaffinity") else 1
        if workers > 1 and len(configs) >= PARALLEL_FROM and hasattr(os, "fork"):
            _write_forked(configs, out, workers)
        else:
            _write(configs, out)
    finally:
        if enabled:
            gc.enable()
