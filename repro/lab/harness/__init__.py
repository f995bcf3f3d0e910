"""The lab's harness: what starts, reaches, watches and removes servers without shaping or
measuring the workload (life cycle, signals, cleanup, images, readiness, connections, the
transport of client programs, progress lines, the run's bookkeeping).

The key of a run (repro/reach.py) follows this code, so what it calls outside this package
(the fixed settings, a container's spec) stays keyed, but does not hash it: fixing the
harness restarts no pool. What is here is reviewed as such: tests/test_harness_keys.py
names every definition."""
