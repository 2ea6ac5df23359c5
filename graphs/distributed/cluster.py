"""The cluster a command runs on: a LocalCluster of N worker processes on 127.0.0.1
(`--workers N`), or a running scheduler (`--cluster tcp://HOST:PORT`, or `tls://` with
dask's security options), closed when the command ends, fails or is interrupted.

Every wait on the cluster is bounded: `Session.gather` polls its futures and, between
polls, asks the scheduler which workers are alive, so a worker that dies under a
job that only it can run (a training replica) is a located runtime error, not a hang.
A job that any worker can run (a share of `check`, a graph file of `test`) is
rescheduled by dask on the workers that remain; after `ALLOWED_FAILURES` deaths under
the same task it is given up (dask's KilledWorker) and reported the same way.
"""
from __future__ import annotations

import contextlib
import logging
import time
from dataclasses import dataclass
from typing import Any, Iterator

from ..results import GraphRuntimeError

# AG047: the cluster failed under a job (a worker died, the scheduler went away, or
# dask is not installed). A runtime failure: exit status 3.
CLUSTER_FAILED = "AG047"
INSTALL_DASK = "pip install 'agrad[dask]'"

CONNECT_TIMEOUT_S = 30          # to reach a scheduler, or for a LocalCluster's workers to start
POLL_S = 0.5                    # how often a wait looks at which workers are alive
ALLOWED_FAILURES = 2            # worker deaths a task survives before it is given up (dask's default: 3)

LOCAL_CLUSTER_CONFIG = {
    # NOTE: dask retries a task whose worker died 3 times by default; a job of ours that kills
    # its worker (out of memory) should fail fast, and a one-off death still gets a retry
    "distributed.scheduler.allowed-failures": ALLOWED_FAILURES,
    # NOTE: dask's default environment for worker processes also sets MALLOC_TRIM_THRESHOLD_,
    # which turns off glibc's adaptive mmap threshold: every array over 128 KB is then a fresh
    # mmap and page faults, and a check's perturbed copies ran 4x slower than in one process.
    # One BLAS thread per worker is kept: each worker is one engine on one core.
    "distributed.nanny.pre-spawn-environ": {"OMP_NUM_THREADS": 1, "MKL_NUM_THREADS": 1, "OPENBLAS_NUM_THREADS": 1},
    # NOTE: the worker's statistical profiler samples the running task's stack every 10 ms; on
    # an engine's many small Python calls it cost a third of a check's time
    "distributed.worker.profile.enabled": False,
}


@dataclass(frozen=True)
class ClusterOptions:
    """What `--workers N` / `--cluster ADDRESS` (with `--tls-*`) asked for; plain data, so
    the CLI can build it without importing dask."""
    workers: int | None = None
    address: str | None = None
    tls_ca_file: str | None = None
    tls_cert: str | None = None
    tls_key: str | None = None

    @property
    def wanted(self) -> bool:
        return self.workers is not None or self.address is not None

    def describe(self) -> str:
        return f"--cluster {self.address}" if self.address else f"--workers {self.workers}"


def cluster_error(message: str, location=None) -> GraphRuntimeError:
    return GraphRuntimeError(message, location, code=CLUSTER_FAILED)


def _import_distributed():
    try:
        import distributed
    except ImportError as exc:
        raise cluster_error(f"--workers and --cluster need dask.distributed, which is not installed "
                            f"({exc}); install it with: {INSTALL_DASK}") from exc
    return distributed


def _security(options: ClusterOptions):
    """dask's Security for a tls:// scheduler: the files given, or dask's configuration
    (`distributed.comm.tls.*`, e.g. DASK_DISTRIBUTED__COMM__TLS__CA_FILE) when none is."""
    if not (options.tls_ca_file or options.tls_cert or options.tls_key):
        return None
    from distributed.security import Security

    return Security(tls_ca_file=options.tls_ca_file, tls_client_cert=options.tls_cert,
                    tls_client_key=options.tls_key, require_encryption=True)


class Session:
    """A connected client and the waits a job needs."""

    def __init__(self, client, description: str):
        self.client = client
        self.description = description
        self._empty_since: float | None = None      # when the cluster was last seen without workers

    def workers(self) -> list[str]:
        """The addresses of the workers alive now, in a stable order."""
        return sorted(self.client.ncores())

    def submit(self, fn, *args, worker: str | None = None, **kwargs):
        """`fn(*args)` on the cluster, on `worker` only when given; never cached by key
        (a job submitted twice runs twice, as a command run twice does)."""
        options: dict[str, Any] = {"pure": False}
        if worker is not None:
            options.update(workers=[worker], allow_other_workers=False)
        return self.client.submit(fn, *args, **options, **kwargs)

    def gather(self, futures: list, *, pinned: list[str] | None = None, on_done=None) -> list:
        """The results of `futures`, in their order. `on_done(i, result)` is called as
        each one finishes. A worker of `pinned` that dies, a task given up after repeated
        worker deaths, or a scheduler that goes away is a GraphRuntimeError (AG047); an
        exception a task raised is re-raised as it was."""
        distributed = _import_distributed()
        results: list = [None] * len(futures)
        index = {f.key: i for i, f in enumerate(futures)}
        pending = set(futures)
        try:
            while pending:
                try:
                    with self.client.as_current():        # `wait` finds its client there, never a global
                        done, pending = distributed.wait(list(pending), timeout=POLL_S,
                                                         return_when="FIRST_COMPLETED")
                except (TimeoutError, distributed.TimeoutError):
                    self.require_alive(pinned)     # no progress for POLL_S: is anyone still there?
                    continue
                except OSError as exc:
                    raise cluster_error(f"lost the scheduler of {self.description}: {exc}") from exc
                pending = set(pending)
                for future in done:
                    i = index[future.key]
                    results[i] = self._result(future)
                    if on_done is not None:
                        on_done(i, results[i])
        except BaseException:
            # a failed or interrupted job leaves nothing running on a cluster that outlives it
            with contextlib.suppress(Exception):
                self.client.cancel(list(pending))
            raise
        return results

    def forget_everywhere(self, forget, job_id: str) -> None:
        """`forget(job_id)` on every worker alive now, to free what a job kept there; best effort
        (a worker that dies meanwhile has forgotten already)."""
        with contextlib.suppress(Exception):
            self.client.run(forget, job_id, workers=self.workers(), on_error="ignore")

    def in_order(self, futures: list, *, pinned: list[str] | None = None) -> Iterator:
        """The results of `futures` one by one, in their order, each as soon as it and those
        before it are done (the others keep running meanwhile); failures as in `gather`.
        Closing the generator early cancels what has not finished."""
        try:
            for future in futures:
                yield self.gather([future], pinned=pinned)[0]
        finally:
            with contextlib.suppress(Exception):
                self.client.cancel([f for f in futures if not f.done()])

    def _result(self, future):
        distributed = _import_distributed()
        try:
            return future.result()
        except distributed.client.FutureCancelledError as exc:
            raise cluster_error(f"{self.description}: a task was cancelled ({exc})") from exc
        except distributed.KilledWorker as exc:
            raise cluster_error(f"{self.description}: workers died {ALLOWED_FAILURES} times under the same "
                                f"task ({exc}); giving up") from exc

    def require_alive(self, pinned: list[str] | None = None) -> None:
        """Raise (AG047) when the scheduler is gone, no worker has been seen for a while, or a
        worker of `pinned` has died."""
        if self.client.status not in ("running", "connecting"):
            raise cluster_error(f"lost the scheduler of {self.description} (client {self.client.status})")
        try:
            alive = set(self.client.ncores())
        except OSError as exc:
            raise cluster_error(f"lost the scheduler of {self.description}: {exc}") from exc
        if alive:
            self._empty_since = None
        elif self._empty_since is None:
            self._empty_since = time.monotonic()
        elif time.monotonic() - self._empty_since > CONNECT_TIMEOUT_S:
            raise cluster_error(f"{self.description} has had no worker for {CONNECT_TIMEOUT_S} s")
        if pinned:
            gone = [w for w in pinned if w not in alive]
            if gone:
                raise cluster_error(f"worker {gone[0]} of {self.description} died; its part of the job cannot "
                                    "move to another worker")


_open_clusters = [0, logging.NOTSET]      # how many are open in this process, the level before the first


@contextlib.contextmanager
def _quiet_dask_logs():
    """dask's own INFO lines (workers joining, closing) are not agrad's output: only its errors
    reach stderr while a cluster is open in this process (and until the last one is closed)."""
    logger = logging.getLogger("distributed")
    if _open_clusters[0] == 0:
        _open_clusters[1] = logger.level
    _open_clusters[0] += 1
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        _open_clusters[0] -= 1
        if _open_clusters[0] == 0:
            logger.setLevel(_open_clusters[1])


@contextlib.contextmanager
def _interrupt_deferred():
    """Ctrl-C while a LocalCluster starts is taken when it has started (then it is closed at
    once): interrupted halfway, dask's own exit hook would later trip over the half-started
    workers and print a traceback. Only the main thread receives signals."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    received = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: received.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if received:
        raise KeyboardInterrupt


@contextlib.contextmanager
def open_cluster(options: ClusterOptions) -> Iterator[Session]:
    """A Session on the cluster `options` name; the LocalCluster it starts, and the
    client, are closed when the block ends, however it ends (Ctrl-C included)."""
    distributed = _import_distributed()
    import dask

    cluster = client = None
    quiet = _quiet_dask_logs()
    quiet.__enter__()

    def close() -> None:
        with contextlib.suppress(Exception):
            if client is not None:
                client.close(timeout=CONNECT_TIMEOUT_S)
        with contextlib.suppress(Exception):
            if cluster is not None:
                cluster.close(timeout=CONNECT_TIMEOUT_S)

    try:
        with dask.config.set(LOCAL_CLUSTER_CONFIG), _interrupt_deferred():
            if options.address is not None:
                client = distributed.Client(options.address, security=_security(options), timeout=CONNECT_TIMEOUT_S,
                                            set_as_default=False, direct_to_workers=True)
            else:
                cluster = distributed.LocalCluster(
                    n_workers=options.workers, threads_per_worker=1, processes=True, host="127.0.0.1",
                    dashboard_address="127.0.0.1:0", silence_logs=logging.CRITICAL,
                    timeout=CONNECT_TIMEOUT_S)
                client = distributed.Client(cluster, timeout=CONNECT_TIMEOUT_S, set_as_default=False,
                                            direct_to_workers=True)
    except (OSError, TimeoutError, ValueError) as exc:
        close()
        quiet.__exit__(None, None, None)
        where = options.address or "a local cluster on 127.0.0.1"
        raise cluster_error(f"{options.describe()}: cannot reach {where}: {exc}") from exc
    except BaseException:
        close()
        quiet.__exit__(None, None, None)
        raise
    try:
        yield Session(client, options.describe())
    finally:
        close()
        quiet.__exit__(None, None, None)


@contextlib.contextmanager
def dask_arrays_computed_on(options: ClusterOptions) -> Iterator[Session]:
    """`run --device dask --workers N | --cluster ADDRESS`: the cluster open, and the dask
    backend's compute sent to it, its batch dimension cut into one chunk per worker."""
    import agrad

    backend = agrad.backends.get_backend("dask")
    with open_cluster(options) as session:
        scheduler, partitions = backend.scheduler, backend.partitions
        backend.scheduler, backend.partitions = session.client, max(1, len(session.workers()))
        try:
            yield session
        finally:
            backend.scheduler, backend.partitions = scheduler, partitions
