"""Signal receivers of the dashboards app, connected in ``DashboardsConfig.ready``."""

from __future__ import annotations

from django.dispatch import receiver

from dashboards import tasks
from dashboards.benchmarks import benchmark_queued


@receiver(benchmark_queued, dispatch_uid="dashboards.queue_benchmark")
def queue_benchmark(sender, *, run_id: int, **kwargs) -> None:
    """A benchmark run is handed to a worker once the transaction that created it commits."""
    tasks.queue_benchmark(run_id)
