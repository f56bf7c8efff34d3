"""Several GPUs through Dask: a graph partitioned across the workers of a Dask cluster, and the
propagations and traversals run on it with the single-GPU kernels.

    >>> from onyx_rapids import dask as odask                              # doctest: +SKIP
    >>> client = odask.local_cluster()      # a LocalCUDACluster: one worker per GPU
    >>> g = odask.Graph.from_parquet("edges/", "src", "dst", client=client)
    >>> ranks = odask.pagerank(g)           # a dask(-cuDF) DataFrame: vertex, pagerank
    >>> ranks.nlargest(5, "pagerank").compute()

The graph is cut into vertex ranges by destination (:class:`Graph`); each worker holds its
ranges' in-edges as an ordinary :class:`onyx_rapids.Graph` and, each iteration, receives the
rows of the source vertices it reads from their owners (:mod:`onyx_rapids.dask.run`).  The
algorithms (:func:`pagerank`, :func:`personalized_pagerank`, :func:`label_propagation`,
:func:`feature_propagation`, :func:`bfs`, :func:`weakly_connected_components`) take the
arguments and give the columns of their single-GPU namesakes, and are declared in
:data:`ALGORITHMS` (``onyx-rapids list --dask``): their inputs, columns and the execution
options they take (``change_driven`` for the PageRanks and label propagation), as
``execution=`` or keywords, validated once; ``return_info=True`` adds a
:class:`~onyx_rapids.RunInfo` with ``npartitions``, ``bytes_exchanged`` (per iteration),
``transport`` and ``seconds`` (phases).  Each also takes ``transport=``: ``"nccl"`` (one
resident task per GPU worker for the whole run, rows GPU to GPU through NCCL; the default on
GPUs), ``"dask"`` (resident, rows over the workers' Dask connections; the default elsewhere)
or ``"tasks"`` (a Dask task per partition and iteration, recomputable from Dask's lineage);
see :mod:`onyx_rapids.dask.run`.  Resident runs from one client go one at a time.

Needs ``dask[dataframe]`` and ``distributed`` (``pip install 'onyx_rapids[dask]'``), and on GPUs
``dask-cuda`` and ``dask-cudf`` (``'.[dask-cu13]'``); the single-GPU package never imports them.
Without a GPU, workers run the kernels under the CUDA simulator (as CI does).
"""

from __future__ import annotations

from .. import device
from .algorithms import (ALGORITHMS, bfs, feature_propagation, label_propagation, pagerank,
                         personalized_pagerank, weakly_connected_components)
from .graph import Graph

__all__ = ["ALGORITHMS", "Graph", "bfs", "feature_propagation", "label_propagation", "local_cluster",
           "pagerank", "personalized_pagerank", "weakly_connected_components"]


def local_cluster(n_workers: int | None = None, **kwargs):
    """A ``Client`` of a new local cluster: ``dask_cuda.LocalCUDACluster`` (one worker per
    visible GPU, or ``n_workers``) on a GPU machine, else a ``distributed.LocalCluster`` of
    ``n_workers`` (default 2) single-threaded CPU processes running the simulator.  ``kwargs``
    go to the cluster (``protocol="ucx"`` for GPU-to-GPU transfers where UCX is installed).
    Close both with ``client.close(); client.cluster.close()``, or use the client as a
    context manager.

    Example::

        >>> client = local_cluster(2)                                      # doctest: +SKIP
        >>> len(client.scheduler_info()["workers"])                        # doctest: +SKIP
        2
    """
    from distributed import Client

    if n_workers is not None and (isinstance(n_workers, bool) or int(n_workers) != n_workers
                                  or n_workers < 1):
        raise ValueError(f"n_workers must be a positive integer, got {n_workers!r}")
    kwargs.setdefault("dashboard_address", ":0")  # any free port: clusters side by side
    if device.BACKEND == "gpu":
        try:
            from dask_cuda import LocalCUDACluster
        except ImportError as e:
            raise ImportError("local_cluster on a GPU needs dask-cuda: pip install "
                              "'onyx_rapids[dask-cu13]'") from e
        if n_workers is not None:
            kwargs.setdefault("CUDA_VISIBLE_DEVICES", list(range(int(n_workers))))
        return _ready(Client(LocalCUDACluster(**kwargs)))
    import dask
    from distributed import LocalCluster

    kwargs.setdefault("threads_per_worker", 1)  # the simulator runs one kernel at a time
    # The simulator runs a thread per GPU thread; Dask's statistical profiler, sampling every
    # thread's stack each 10 ms, then starves the workers' event loops (heartbeats missed)
    with dask.config.set({"distributed.worker.profile.enabled": False}):
        return _ready(Client(LocalCluster(n_workers=2 if n_workers is None else int(n_workers),
                                          processes=True, **kwargs)))


def _ready(client):
    """``client`` once the scheduler knows every worker of its cluster."""
    client.wait_for_workers(len(client.cluster.workers))
    return client
