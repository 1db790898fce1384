"""Probe traces: ask TensorFlow, in the profiled process, what a fix may change.

When a tf.function retraces during ``autosig profile``, its *original* Python function
is traced again on fresh ``tf.function`` objects (the program's own trace cache is never
touched) with candidate inputs: a dimension relaxed to ``None`` or set to other sizes, a
Python number given as a scalar tensor of some dtype. Only traces: no probe graph is
ever executed. The probes run in a forked copy of the process, so nothing they do at
trace time (prints, ``self.n += 1``, Python or TensorFlow random state, Keras layer
state, name counters) reaches the program; TensorFlow's eager runtime does not survive
a fork, so the copy refuses any eager op instead of hanging on it.

- ``candidates.py``: which dimensions and numbers to probe, grouped (pure).
- ``graphs.py``: a graph's structure as comparable data; the comparisons (pure).
- ``verdicts.py``: per dimension free / fixed / read, per number its dtype (pure).
- ``tracing.py``: the probe round inside the forked copy (TensorFlow).
- ``isolation.py``: the fork, its pipe, the eager guard, captured output, deadlines.
- ``scheduler.py``: when a round runs, the time budget, evidence kept per function.

The evidence itself is ``autosig/profile/evidence.py`` (stored in the profile).
"""
