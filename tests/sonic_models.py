"""Which SONiC YANG models the tests validate config_db.json with, and which tables they lack.

The models are not copied into the project (their licence is unclear: Apache-2.0 in
sonic-yang-models/LICENSE, GPLv3 in its setup.py). They are read from
../shared/reference/sonic/yang (every *.yang there: 44 modules, the PORT/QoS/BGP tables, the
management ones MGMT_PORT, MGMT_INTERFACE, MGMT_VRF_CONFIG, NTP_SERVER, DNS_NAMESERVER,
SYSLOG_SERVER, the PFC watchdog's PFC_WD and BUFFER_POOL/PROFILE/PG) and from every directory
in CLUSTERC_SONIC_YANG_EXTRA (os.pathsep-separated; e.g. every yang-models/*.yang of the same
sonic-buildimage commit, 086b03bd, which also models BUFFER_QUEUE and
BUFFER_PORT_INGRESS/EGRESS_PROFILE_LIST: sonic-buffer-queue.yang and
sonic-buffer-port-{ingress,egress}-profile-list.yang, not in the shared set).

A table with no model among them cannot be validated: `ReferenceYang.validate` checks the
modelled tables and remembers the others, and a test that passed while some table went
unvalidated is reported as xfail naming exactly those tables (conftest.py), never as a pass.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED_YANG = ROOT.parent / "shared" / "reference" / "sonic" / "yang"
EXTRA_ENV = "CLUSTERC_SONIC_YANG_EXTRA"


def model_dirs() -> list[Path]:
    """The shared reference set first (it holds the rendered sonic-types/sonic-extension that
    every other module imports), then the extra directories, those that exist."""
    extra = [Path(p) for p in os.environ.get(EXTRA_ENV, "").split(os.pathsep) if p.strip()]
    return [d for d in [SHARED_YANG, *extra] if d.is_dir()]


@functools.cache
def load_models(dirs: tuple[Path, ...]):
    """One libyang context with every module of `dirs` that loads (first directory wins for a
    name found twice). A module that imports one only sonic-buildimage's yang-templates hold
    (sonic-acl, sonic-policer: Jinja2 sources, not rendered here) does not load; its tables
    stay unmodelled, which validation then reports. Built once per session (~0.2 s)."""
    from .sonic_yang import SonicYang

    names: dict[str, Path] = {}
    for d in dirs:
        for f in sorted(d.glob("*.yang")):
            names.setdefault(f.stem, d)
    return SonicYang(os.pathsep.join(map(str, dirs)), modules=list(names), skip_unloadable=True)


class ReferenceYang:
    """Validates a config_db.json with every model found; collects the tables no model covers.
    Without libyang or without any model directory nothing is modelled: every table is
    collected, and `why_none` says why."""

    def __init__(self, yang=None, why_none: str = ""):
        self.yang = yang
        self.why_none = why_none
        self.unmodelled: set[str] = set()

    @property
    def tables(self) -> set[str]:
        return set(self.yang.tables) if self.yang is not None else set()

    def validate(self, cfg: dict) -> list[str]:
        modelled = self.tables
        self.unmodelled.update(t for t in cfg if t not in modelled)
        part = {t: v for t, v in cfg.items() if t in modelled}
        return self.yang.validate(part) if part else []

    def require(self, tables) -> None:
        """Skip a test that means to see these tables' models reject something."""
        import pytest

        lacking = [t for t in tables if t not in self.tables]
        if lacking:
            pytest.skip(f"no SONiC YANG model for {', '.join(lacking)}: {self.where()}")

    def where(self) -> str:
        if self.yang is None:
            return self.why_none
        return (f"models read from {', '.join(str(d) for d in model_dirs())}; set {EXTRA_ENV} to a directory of "
                f"sonic-buildimage src/sonic-yang-models/yang-models/*.yang to validate them")

    def xfail_reason(self) -> str | None:
        if not self.unmodelled:
            return None
        return f"config_db tables not validated, no SONiC YANG model: {', '.join(sorted(self.unmodelled))} ({self.where()})"


def reference_yang() -> ReferenceYang:
    """A fresh checker (its own record of unmodelled tables) over the session's models."""
    try:
        import libyang  # noqa: F401
    except ImportError:
        return ReferenceYang(why_none="PyPI libyang (==2.7.1 on Debian libyang2-dev) is not installed")
    dirs = model_dirs()
    if not dirs:
        return ReferenceYang(why_none=f"no SONiC YANG models at {SHARED_YANG} nor in {EXTRA_ENV} "
                                      "(licence unclear, so they are not copied into the project)")
    return ReferenceYang(load_models(tuple(dirs)))
