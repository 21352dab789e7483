"""The pieces of ``bench/bench_faults.py``: the hostile files (:mod:`.hostile`), the local stack it runs
on a throw-away folder (:mod:`.stack`, :mod:`.supervise`) and the browser-less client it drives the real
views with (:mod:`.client`)."""
