"""The executor abstraction: serial, local processes and a Dask LocalCluster give the same results."""

from __future__ import annotations

import math
import os

import pytest

from executor_tasks import fails_on_three as _fails_on_three, square_with_pid as _square_with_pid
from stableval.errors import StableValError
from stableval.parallel import DaskExecutor, ProcessExecutor, SerialExecutor, make_executor


def test_make_executor_choices() -> None:
    with make_executor(jobs=1) as executor:
        assert isinstance(executor, SerialExecutor)
        assert executor.describe() == "serial (1 worker)"
    with make_executor(jobs=2) as executor:
        assert isinstance(executor, ProcessExecutor) and executor.workers == 2
    with pytest.raises(ValueError, match="jobs must be >= 0"):
        make_executor(jobs=-1)


def test_serial_and_processes_agree_and_processes_use_workers() -> None:
    items = list(range(20))
    with SerialExecutor() as serial:
        expected = [value for value, _ in serial.map(_square_with_pid, items)]
    with ProcessExecutor(2) as pool:
        results = pool.map(_square_with_pid, items)
        unordered = dict(pool.map_unordered(_square_with_pid, items))
    assert [value for value, _ in results] == expected == [x * x for x in items]
    assert {pid for _, pid in results} - {os.getpid()}  # ran in worker processes
    assert sorted(unordered) == items


def test_task_errors_propagate() -> None:
    with ProcessExecutor(2) as pool, pytest.raises(ValueError, match="task 3 failed"):
        pool.map(_fails_on_three, list(range(6)))
    with pytest.raises(ValueError, match="task 3 failed"):
        SerialExecutor().map(_fails_on_three, list(range(6)))


def test_dask_local_cluster() -> None:
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None
                                  ) as cluster, distributed.Client(cluster) as client:
        executor = DaskExecutor(client)
        assert executor.workers == 2 and "dask at" in executor.describe()
        assert executor.map(math.factorial, [3, 4, 5]) == [6, 24, 120]
        executor.close()  # a client passed in stays open
        assert client.status == "running"


def test_unreachable_scheduler_is_a_clear_error() -> None:
    pytest.importorskip("distributed")
    with pytest.raises(StableValError, match=r"cannot reach the Dask scheduler at tcp://127\.0\.0\.1:9"):
        DaskExecutor("tcp://127.0.0.1:9", timeout=0.5)
