"""A Gaussian-mechanism audit on a Dask cluster of worker processes: per-worker memory, the same
report whatever the number of workers, and a worker killed mid-run changing nothing.

    python benchmarks/dask_cluster.py [--samples 1e9] [--workers 2 1] [--memory-limit 1GiB] [--kill]
    python benchmarks/dask_cluster.py --scheduler tcp://HOST:8786 --samples 1e9   # a real cluster

For each worker count a `distributed.LocalCluster` of that many single-thread worker processes is
started with every server on 127.0.0.1 and no dashboard (`processes=True, host="127.0.0.1",
dashboard_address=None`), each worker under the given memory limit, and the audit runs on it through
`audit(..., backend="dask", scheduler=client)`: the code path of a real cluster's address (with
--scheduler that address is used instead, and the worker counts are the cluster's). The mechanism is
f(D) + N(0, sigma^2), sigma = 4.8448 ((1, 1e-5) by the classic calibration), batched, 41 eps in [0, 1],
quadratic scorer, seed 0. Prints per run the wall time, the phases, the peak resident memory of each
worker process (sampled every 0.2 s) and whether the report (timings and memory figures aside) is
identical to the first run's. With --kill SECONDS, one more run on the largest worker count kills one
worker process (SIGKILL) SECONDS after the audit started (choose a time inside the held-out phase,
which the runs before print); its nanny starts a new one and the scheduler re-runs the lost chunks,
which reproduce themselves from their seeds.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import threading
import time

import numpy as np
import psutil

from ndis.auditor import Execution, audit

SIGMA = 4.8448
#: The HTTP servers of the scheduler and workers (bound to 127.0.0.1) serve /health only, as
#: `auditor.sampling.chunks.local_cluster`'s do.
HEALTH_ONLY = {f"distributed.{node}.http.routes": ["distributed.http.health"] for node in ("scheduler", "worker")}
#: info entries that depend on the machine (times, available memory) or on the run (its phases), not on the seed
VOLATILE = ("timings", "phases", "memory", "scorer_selection")


def gaussian_mechanism(data, n, rng):
    """f(D) + N(0, SIGMA^2): data is the query value f(D) (a number); batched."""
    return data + SIGMA * rng.standard_normal((n, 1))


class WorkerMemory:
    """The peak resident memory of each worker process of a client's cluster, sampled every `every`
    seconds by `watch` (run in a thread); with `kill_after` seconds, SIGKILL one worker process once
    then (its nanny restarts it)."""

    def __init__(self, client, kill_after=None, every=0.2):
        self.client, self.kill_after, self.every = client, kill_after, every
        self.peaks, self.killed = {}, None

    def watch(self, stop: threading.Event) -> None:
        started = time.perf_counter()
        while not stop.is_set():
            with contextlib.suppress(Exception):  # a worker may be restarting
                for address, pid in self.client.run(os.getpid, on_error="ignore").items():
                    self.peaks[pid] = max(self.peaks.get(pid, 0), psutil.Process(pid).memory_info().rss)
                    if self.kill_after is not None and self.killed is None and \
                            time.perf_counter() - started > self.kill_after:
                        os.kill(pid, signal.SIGKILL)
                        self.killed = (address, pid, time.perf_counter() - started)
            stop.wait(self.every)


def comparable(report) -> str:
    """The report as JSON without the figures that depend on the machine's speed and memory."""
    data = report.to_dict()
    for key in VOLATILE:
        data["info"].pop(key, None)
    return json.dumps(data, sort_keys=True, default=str)


def run(client, n_samples, label, kill_after=None):
    """One audit on the client's cluster: prints its wall time, phases and worker peaks; returns
    (the comparable report, the largest worker peak in bytes, the wall time)."""
    memory, stop = WorkerMemory(client, kill_after), threading.Event()
    watcher = threading.Thread(target=memory.watch, args=(stop,), daemon=True)
    started = time.perf_counter()
    watcher.start()
    try:
        report = audit(gaussian_mechanism, 1.0, 0.0, eps=np.linspace(0, 1, 41), n_samples=n_samples, seed=0,
                       scorer="quadratic", progress=False, execution=Execution(backend="dask", scheduler=client))
    finally:
        stop.set()
        watcher.join()
    seconds = time.perf_counter() - started
    peaks = ", ".join(f"{peak / 2**30:.2f}" for peak in memory.peaks.values())
    print(f"[{label}] {n_samples:.3g} samples per side: wall {seconds:.1f} s; peak RSS per worker process (GiB): "
          f"{peaks}; phases: " + ", ".join(f"{k} {v:.1f} s" for k, v in report.timings.items())
          + (f"; killed worker pid {memory.killed[1]} at {memory.killed[2]:.0f} s" if memory.killed else ""),
          flush=True)
    return comparable(report), max(memory.peaks.values(), default=0), seconds


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=float, default=1e9, help="samples per side (default 1e9)")
    parser.add_argument("--workers", type=int, nargs="+", default=[2, 1], help="worker counts (default 2 1)")
    parser.add_argument("--memory-limit", default="1GiB", help="per worker (default 1GiB)")
    parser.add_argument("--kill", type=float, default=None, metavar="SECONDS",
                        help="one more run on the largest worker count, killing a worker after SECONDS")
    parser.add_argument("--scheduler", default=None, help="a running cluster's address instead of local clusters")
    args = parser.parse_args(argv)
    import dask
    from distributed import Client, LocalCluster

    n = int(args.samples)
    print(f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}; OPENBLAS_NUM_THREADS="
          f"{os.environ.get('OPENBLAS_NUM_THREADS', 'unset')}", flush=True)
    results = []
    if args.scheduler:
        with Client(args.scheduler) as client:
            results.append(run(client, n, f"cluster {args.scheduler}"))
    else:
        runs = [(w, None) for w in args.workers]
        if args.kill is not None:
            runs.append((max(args.workers), args.kill))
        for workers, kill_after in runs:
            with dask.config.set(HEALTH_ONLY), LocalCluster(
                    n_workers=workers, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None,
                    worker_dashboard_address="127.0.0.1:0", scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},
                    memory_limit=args.memory_limit) as cluster, Client(cluster) as client:
                label = f"{workers} worker process(es), limit {args.memory_limit}" + (", one killed" if kill_after else "")
                results.append(run(client, n, label, kill_after))
    same = all(r[0] == results[0][0] for r in results)
    print(f"reports identical across runs: {same}; largest worker peak {max(r[1] for r in results) / 2**30:.2f} GiB "
          f"(target <= 1 GiB); load average now {os.getloadavg()[0]:.1f}", flush=True)


if __name__ == "__main__":
    main()
