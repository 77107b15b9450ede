"""Where sample chunks run. An executor maps `run_chunk(model, seeds)` over chunks and
returns the results in chunk order; the model is shipped to each worker once. Chunks and
their seeds are fixed by the sample count alone (never by the worker count), and results
are reduced in sample order, so a seed gives the same figures on any executor and any
number of workers.

`local` (default) runs on this machine's cores with a process pool. `dask` runs on
dask.distributed: a LocalCluster of `workers` processes, or an existing cluster's scheduler
at `address` (tcp://host:8786). Dask rather than Ray: the work is a plain map of pure
functions over numpy arrays, which dask.distributed's Client.map and scatter serve as they
are; it installs from PyPI as pure Python wheels, starts no object store, and HPC users run
it under Slurm/PBS with dask-jobqueue. Another engine is another class with the same `map`,
registered in EXECUTORS."""

from __future__ import annotations

from concurrent.futures import ProcessPoolExecutor
from typing import Protocol
from collections.abc import Callable

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


class DaskExecutor:
    """dask.distributed: the model scattered to every worker once, one task per chunk,
    gathered in chunk order. An optional extra (pip install 'clusterc[resilience]')."""

    name = "dask"
    CONNECT_TIMEOUT_S = 10

    def __init__(self, workers: int = 1, address: str | None = None):
        try:
            import distributed  # noqa: F401
        except ImportError:
            raise ResilienceError("--executor dask: dask.distributed is not installed "
                                  "(pip install 'clusterc[resilience]')") from None
        if workers < 1:
            raise ResilienceError(f"--workers must be at least 1; got {workers}")
        self.workers, self.address = workers, address
        if address:  # reachable before any work is done
            self._client().close()

    def _client(self):
        from distributed import Client

        try:
            return Client(self.address, timeout=self.CONNECT_TIMEOUT_S)
        except (OSError, TimeoutError) as exc:
            raise ResilienceError(f"--executor dask: no scheduler reachable at {self.address}: {exc}") from None

    def map(self, fn: Callable, model, chunks: list) -> list:
        from distributed import Client, LocalCluster

        if self.address:
            with self._client() as client:
                return self._run(client, fn, model, chunks)
        with LocalCluster(n_workers=self.workers, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
                Client(cluster) as client:
            return self._run(client, fn, model, chunks)

    @staticmethod
    def _run(client, fn: Callable, model, chunks: list) -> list:
        shared = client.scatter(model, broadcast=True)
        futures = client.map(fn, [shared] * len(chunks), chunks, pure=False)
        return client.gather(futures)  # in the order of `futures`: the chunks' order


EXECUTORS: dict[str, type] = {"local": LocalExecutor, "dask": DaskExecutor}
PLANNED = ("ray",)  # a name a user may expect; not built


def make_executor(name: str, workers: int, address: str | None = None) -> Executor:
    if name in EXECUTORS:
        return EXECUTORS[name](workers, address)
    if name in PLANNED:
        raise ResilienceError(f"--executor {name}: not installed in this build of clusterc; "
                              f"available: {', '.join(EXECUTORS)}")
    raise ResilienceError(f"--executor {name}: unknown executor; available: {', '.join(EXECUTORS)}")
