"""``Server-Timing`` on the hot fragments: view wall time and the thread's CPU time.

Browser dev tools show it next to the request; the benchmark reads it to tell time spent
working from time spent waiting for a CPU on a busy machine.
"""

from __future__ import annotations

import time
from functools import wraps


def server_timing(view):
    @wraps(view)
    def timed(request, *args, **kwargs):
        wall, cpu = time.perf_counter(), time.thread_time()
        response = view(request, *args, **kwargs)
        response["Server-Timing"] = (
            f"view;dur={(time.perf_counter() - wall) * 1000:.2f}, "
            f"cpu;dur={(time.thread_time() - cpu) * 1000:.2f}"
        )
        return response

    return timed
