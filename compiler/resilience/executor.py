"""Where sample chunks run. An executor maps `run_chunk(model, seeds)` over chunks and
returns the results in chunk order; the model is shipped to each worker once. Chunks and
their seeds are fixed by the sample count alone (never by the worker count), and results
are reduced in sample order, so a seed gives the same figures on any executor and any
number of workers.

`local` (default) runs on this machine's cores with a process pool. A distributed engine
is another class with the same `map` (e.g. dask.distributed: Client.scatter the model,
Client.map the chunks, gather in order), registered in EXECUTORS."""

from __future__ import annotations

from concurrent.futures import ProcessPoolExecutor
from typing import Callable, Protocol

from .errors import ResilienceError

_MODEL = None  # the model, in a worker process (set once by the pool's initializer)


def _init(model) -> None:
    global _MODEL
    _MODEL = model


def _call(args):
    fn, chunk = args
    return fn(_MODEL, chunk)


class Executor(Protocol):
    name: str
    workers: int

    def map(self, fn: Callable, model, chunks: list) -> list: ...


class LocalExecutor:
    """A process pool of `workers` processes (1: in this process, no pool)."""

    name = "local"

    def __init__(self, workers: int = 1, address: str | None = None):
        if address:
            raise ResilienceError("--address is for a distributed executor; `local` runs on this machine")
        if workers < 1:
            raise ResilienceError(f"--workers must be at least 1; got {workers}")
        self.workers = workers

    def map(self, fn: Callable, model, chunks: list) -> list:
        if self.workers == 1 or len(chunks) <= 1:
            return [fn(model, c) for c in chunks]
        with ProcessPoolExecutor(max_workers=self.workers, initializer=_init, initargs=(model,)) as pool:
            return list(pool.map(_call, [(fn, c) for c in chunks]))  # map keeps the chunks' order


EXECUTORS: dict[str, type] = {"local": LocalExecutor}
PLANNED = ("dask", "ray")  # names a user may expect; not built yet


def make_executor(name: str, workers: int, address: str | None = None) -> Executor:
    if name in EXECUTORS:
        return EXECUTORS[name](workers, address)
    if name in PLANNED:
        raise ResilienceError(f"--executor {name}: not installed in this build of clusterc; "
                              f"available: {', '.join(EXECUTORS)}")
    raise ResilienceError(f"--executor {name}: unknown executor; available: {', '.join(EXECUTORS)}")
