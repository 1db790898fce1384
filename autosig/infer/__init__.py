"""Inference: from a profile's observed calls to a per-function plan of specs, with evidence.

For each profiled tf.function this decides one of three things: an ``input_signature``
(every parameter that varied gets a spec loose enough for every observed call and no
looser), ``reduce_retracing=True`` (a signature would reject a call or change what the
function does: Python flags, objects, dtype conflicts, Python numbers the code needs as
Python values), or nothing (traced once, stale profile, library code, already signed).
Each planned parameter carries the evidence it was derived from, and the AS2xx findings
say why the function retraced. Works on the profile's JSON data and the current source
text only: no TensorFlow, no user code.

The names below are the API; the modules of this package are its parts, one job each,
in the order the data flows:

- ``values``, ``wording``: reading a profile's value descriptions; report text.
- ``leaf``, ``tensors``, ``spec_objects``, ``python_values``, ``arguments``: what one
  argument allows.
- ``options``, ``params``: one parameter, with its defaults and the user's shape policy.
- ``source``, ``tensorize``: the function's current source, and which Python numbers
  its code lets become tensors.
- ``decision``, ``findings``, ``library``, ``planner``: the plan of one function.
- ``accepts``: whether a planned spec takes a recorded value (the property tests' oracle).
"""

from autosig.infer.accepts import spec_accepts
from autosig.infer.options import InferOptions
from autosig.infer.planner import infer_function, infer_plan

__all__ = [
    "InferOptions",
    "infer_function",
    "infer_plan",
    "spec_accepts",
]
