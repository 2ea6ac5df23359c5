"""Commands on more than one process: a dask.distributed cluster runs `check`'s finite
differences, `test`'s graph files and `train`'s data-parallel replicas.

One module per job: `cluster` (start or join a cluster, wait on its futures without
ever hanging), `check` (finite-difference columns split across workers), `testing`
(graph files fanned out, reported in file order), `training` (engine replicas with
DistributedDataParallel's semantics). Nothing here is imported unless a command is
given `--workers` or `--cluster`; dask itself is imported only inside `cluster`.
"""
