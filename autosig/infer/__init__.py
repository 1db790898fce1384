"""Inference: a profile's recorded calls plus facts about the code -> the plan fixes apply.

For each profiled tf.function this decides one of three things: an ``input_signature``
(every parameter that varied gets a spec loose enough for every observed call and no
looser), ``reduce_retracing=True`` (a signature would reject a call or change what the
function does: Python flags, objects, dtype conflicts, Python numbers the code needs as
Python values), or nothing (traced once, stale profile, library code, already signed).
Each planned parameter carries the evidence it was derived from, and the AS2xx findings
say why the function retraced. Works on the profile's JSON data and the current source
text only (the static facts come from ``autosig.analysis``): no TensorFlow, no user code.
The plan ``fix``, ``explain`` and ``verify`` share is built here and nowhere else.

The modules, in the order the data flows:

- ``specs``: planned TypeSpecs as data, TensorFlow's supertype and acceptance rules on
  them, their source text, and how shapes and values read in words.
- ``plan``: the plan as data (``Plan``, ``FunctionPlan``, ``ParamPlan``, ``Blocker``).
- ``observations``: recorded calls -> what each parameter allows (``InferOptions``);
  ``observe``, the first stage: a record's facts read once (``Observed``).
- ``python_params``, ``dimensions`` (with ``shape_rewrites`` and ``size_arguments``),
  ``distributed_inputs``, ``action``, ``call_site_plan``, ``findings``: the stages
  after it, in their order (``findings.honour_comments`` last).
- ``stages``: one function's chain: the source checks, then the stages in order.
- ``library``: library code's advice (it cannot be edited).
- ``planner``: the entry points ``infer_plan`` and ``infer_function``.
- ``build_first``: variables created on the first call, and the model builds and
  ``optimizer.build`` that remove those retraces.
- ``planning``: ``plan_fixes``, the plan ``fix`` applies (with builds, suppressions and
  the selected codes), shared by ``explain`` and ``verify``.
- ``retrace_sim``: how many traces ``reduce_retracing`` would make, replayed.

Import the API from those modules. This file imports nothing, on purpose: the rewriter,
``fix`` and the report import ``specs`` and ``plan`` on paths that parse no file, and
re-exporting the planner here would load libcst and both analyses there too.
"""
