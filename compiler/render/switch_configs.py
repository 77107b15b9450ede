"""Switch configs of every Ethernet fabric, one folder per switch under configs/, for the
NOS the spec names (fabric.nos, and fabrics[].nos for storage / in-band / out-of-band
fabrics, whose switch names carry the fabric: configs/storage-leaf-001/). Python decides
what each switch needs (structured_config.py, on each fabric's fabric_plan and routing
plan); which files a NOS gets, from which templates, is its descriptor's (catalog/data/
nos.yaml); the templates only spell it out.

Writes nothing for InfiniBand fabrics or when no NOS is named.
"""

from __future__ import annotations

import functools

import jinja2

from .. import cyclic_gc
from ..catalog.nos import descriptor
from ..check import CheckResults
from ..plan.fabrics import fabric_names, fabric_plan
from ..plan.model import Plan
from .parallel import in_shares, share_workers
from .structured_config import SwitchConfig, switch_configs
from .templates import environment
from .writer import OutputDir


def render_switch(config: SwitchConfig) -> dict[str, str]:
    """File name -> text for one switch: the files its NOS's descriptor lists for the
    fabric's peering (catalog/data/nos.yaml), each from its template."""
    return {name: template.render(d=config) for name, template in _templates(config.nos, config.peering)}


@functools.cache
def _templates(nos: str, peering: str) -> list[tuple[str, jinja2.Template]]:
    """Looked up once per compile, not per switch (Jinja's lookup stats the template file)."""
    env = environment()
    templates = [(name, env.get_template(template)) for name, template in descriptor(nos).files_for(peering)]
    for _, template in templates:
        # Jinja copies a template's globals into every render's context; as loaded they are a
        # ChainMap over the environment's, copied key by key in Python (about 10% of a switch's
        # render): a plain dict of the same entries is copied in C
        template.globals = dict(template.globals)
    return templates


# Below this many switches one process is quicker than forking.
PARALLEL_FROM = 256


def _write(configs: list[SwitchConfig], out: OutputDir) -> None:
    for config in configs:
        for name, text in render_switch(config).items():
            out.write_text(f"configs/{config.hostname}/{name}", text)


def render(plan: Plan, checks: CheckResults, out: OutputDir) -> None:
    views = [(v, v.routing.nos) for v in (fabric_plan(plan, name) for name in fabric_names(plan)) if v.routing is not None and v.routing.nos]
    if not views:
        return
    # Hundreds of thousands of small records and strings, none cyclic: the cyclic GC
    # would re-scan them over and over (about a third of the time at 5,000 switches).
    with cyclic_gc.paused():
        configs = [c for v, nos in views for c in switch_configs(v, nos)]
        # shares of the switches in forked children, each writing its switches' files
        in_shares(lambda k, n: _write(configs[k::n], out), share_workers(len(configs), PARALLEL_FROM))
