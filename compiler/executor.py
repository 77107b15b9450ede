"""Where many independent evaluations run: sampled failure states (`clusterc resilience`),
a design space's candidates (`clusterc explore`). An executor maps `fn(shared, chunk)` over
chunks and returns the results in chunk order; `shared` (what every chunk needs: a failure
model, a requirements file) is shipped to each worker once. Callers fix the chunks by the
work alone (never by the worker count) and reduce results in chunk order, so a run gives
the same figures on any executor and any number of workers.

`local` (default) runs on this machine's cores with a process pool. `dask` runs on
dask.distributed: a LocalCluster of `workers` processes, or an existing cluster's scheduler
at `address` (tcp://host:8786). Dask rather than Ray: the work is a plain map of pure
functions over numpy arrays, which dask.distributed's Client.map and scatter serve as they
are; it installs from PyPI as pure Python wheels, starts no object store, and HPC users run
it under Slurm/PBS with dask-jobqueue. Another engine is another class with the same `map`,
registered in EXECUTORS.

The lowest layer: it imports nothing of the compiler, so any stage may run work through it."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any, Protocol, TypeVar

S = TypeVar("S")  # what every chunk shares
C = TypeVar("C")  # one chunk
R = TypeVar("R")  # one chunk's result

_SHARED: Any = None  # in a worker process: the shared value (set once by the pool's initializer)


class ExecutorError(ValueError):
    """An executor that cannot run: unknown, not installed, unreachable, or a bad worker count.
    Its message names the command-line option (--executor, --workers, --address)."""


def _init(shared: Any) -> None:
    global _SHARED
    _SHARED = shared


def _call(args: tuple[Callable[[Any, Any], Any], Any]) -> Any:
    fn, chunk = args
    return fn(_SHARED, chunk)


class Executor(Protocol):
    name: str
    workers: int

    def map(self, fn: Callable[[S, C], R], shared: S, chunks: Sequence[C]) -> list[R]: ...


class LocalExecutor:
    """A process pool of `workers` processes (1: in this process, no pool)."""

    name = "local"

    def __init__(self, workers: int = 1, address: str | None = None):
        if address:
            raise ExecutorError("--address is for a distributed executor; `local` runs on this machine")
        if workers < 1:
            raise ExecutorError(f"--workers must be at least 1; got {workers}")
        self.workers = workers

    def map(self, fn: Callable[[S, C], R], shared: S, chunks: Sequence[C]) -> list[R]:
        if self.workers == 1 or len(chunks) <= 1:
            return [fn(shared, c) for c in chunks]
        with ProcessPoolExecutor(max_workers=min(self.workers, len(chunks)), initializer=_init,
                                 initargs=(shared,)) as pool:
            return list(pool.map(_call, [(fn, c) for c in chunks]))  # map keeps the chunks' order


class DaskExecutor:
    """dask.distributed: the shared value scattered to every worker once, one task per chunk,
    gathered in chunk order. An optional extra (pip install 'clusterc[resilience]')."""

    name = "dask"
    CONNECT_TIMEOUT_S = 10

    def __init__(self, workers: int = 1, address: str | None = None):
        try:
            import distributed  # noqa: F401
        except ImportError:
            raise ExecutorError("--executor dask: dask.distributed is not installed "
                                "(pip install 'clusterc[resilience]')") from None
        if workers < 1:
            raise ExecutorError(f"--workers must be at least 1; got {workers}")
        self.workers, self.address = workers, address
        if address:  # reachable before any work is done
            self._client().close()

    def _client(self) -> Any:
        from distributed import Client

        try:
            return Client(self.address, timeout=self.CONNECT_TIMEOUT_S)
        except (OSError, TimeoutError) as exc:
            raise ExecutorError(f"--executor dask: no scheduler reachable at {self.address}: {exc}") from None

    def map(self, fn: Callable[[S, C], R], shared: S, chunks: Sequence[C]) -> list[R]:
        from distributed import Client, LocalCluster

        if self.address:
            with self._client() as client:
                return self._run(client, fn, shared, chunks)
        with LocalCluster(n_workers=self.workers, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
                Client(cluster) as client:
            return self._run(client, fn, shared, chunks)

    @staticmethod
    def _run(client: Any, fn: Callable[[S, C], R], shared: S, chunks: Sequence[C]) -> list[R]:
        held = client.scatter(shared, broadcast=True)
        futures = client.map(fn, [held] * len(chunks), list(chunks), pure=False)
        return list(client.gather(futures))  # in the order of `futures`: the chunks' order


EXECUTORS: dict[str, type[LocalExecutor | DaskExecutor]] = {"local": LocalExecutor, "dask": DaskExecutor}
PLANNED = ("ray",)  # a name a user may expect; not built


def make_executor(name: str, workers: int = 1, address: str | None = None) -> Executor:
    """The executor named on the command line; ExecutorError before any work if it cannot run."""
    if name in EXECUTORS:
        return EXECUTORS[name](workers, address)
    if name in PLANNED:
        raise ExecutorError(f"--executor {name}: not installed in this build of clusterc; "
                            f"available: {', '.join(EXECUTORS)}")
    raise ExecutorError(f"--executor {name}: unknown executor; available: {', '.join(EXECUTORS)}")
