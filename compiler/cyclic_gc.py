"""Pausing Python's cyclic garbage collector around work that builds many objects, none cyclic.

Each collection of the oldest generation walks every tracked object alive; work that
allocates hundreds of thousands of records (the devices of a large plan, switch configs)
triggers such collections again and again while the heap grows, each finding nothing to
free. Reference counting still frees everything the work drops; a cycle made meanwhile
waits for the first collection after it.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused() -> Iterator[None]:
    """The cyclic GC off inside; on again after only where it was on before (a caller that
    turned it off keeps it off)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
