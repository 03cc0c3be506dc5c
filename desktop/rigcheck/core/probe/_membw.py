"""A short multi-threaded memory copy test: the host bandwidth offloaded weights are read at.

Each thread copies its own pair of buffers (numpy releases the GIL for the copy) over and over until
the time is up; bytes read plus bytes written over the elapsed time, as STREAM's "Copy" counts them
(McCalpin, STREAM benchmark: 2 × array bytes per copy). The buffers together are far larger than any
CPU cache, so the figure is DRAM's.
"""

from __future__ import annotations

import os
import threading
import time

MIB = 1024**2
#: total bytes of source buffers across threads (each has a destination of the same size)
DEFAULT_WORKING_SET = 512 * MIB
DEFAULT_SECONDS = 1.0


def measure_copy_bandwidth(
    seconds: float = DEFAULT_SECONDS, working_set: int = DEFAULT_WORKING_SET, threads: int | None = None
) -> int:
    """Bytes per second copied by ``threads`` threads (default one per core, at most 16) in ``seconds``."""
    import numpy as np

    count = max(1, min(threads or os.cpu_count() or 1, 16))
    size = max(working_set // count, MIB)
    buffers = [(np.ones(size, dtype=np.uint8), np.empty(size, dtype=np.uint8)) for _ in range(count)]
    for src, dst in buffers:  # touch the destinations so page faults are not timed
        np.copyto(dst, src)
    moved = [0] * count
    start = time.perf_counter()
    deadline = start + seconds

    def work(index: int) -> None:
        src, dst = buffers[index]
        while time.perf_counter() < deadline:
            np.copyto(dst, src)
            moved[index] += 2 * size

    workers = [threading.Thread(target=work, args=(i,), daemon=True) for i in range(count)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    elapsed = time.perf_counter() - start
    return int(sum(moved) / elapsed) if elapsed > 0 else 0
