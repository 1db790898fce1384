"""TensorFlow and Keras objects the static analysis knows, and what their methods read.

Traced code hands its tensors to objects as often as to functions: ``tape.watch(x)``,
``ta.write(t, x)``, ``v.assign(x)``, ``optimizer.apply_gradients(...)``,
``loss_object(labels, predictions)``, ``train_loss(loss)``, ``strategy.run(step, ...)``.
Counted as code outside the project, each such call was assumed to read every
dimension but the batch, which kept dimensions fixed (and labelled the fix unsafe)
where nothing reads them. Here each object kind lists the calls that make one
(qualified names, in ``module_view.library_name``'s spelling) and, per method, what it
does with its tensor arguments and the property of TensorFlow that rests on.

Every property is checked with real TensorFlow by ``tests/test_tf_objects_tf.py``: the
method traced with every dimension None must build, and compute what the trace with
concrete sizes computes, on several sizes (for stateful objects: the same state after
the same calls). A method that is not listed is not known: the analysis treats the call
as code outside the project, as before.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

Reads = Literal["nothing", "follow"]
"""``nothing``: reads no static size of its tensor arguments (a relaxed trace computes
the same); ``follow``: calls its function argument with the others, which the analysis
follows (``strategy.run``)."""

ANY_SIZE = "accepts any size in every dimension: traced with every dimension None it computes what concrete sizes compute"


@dataclass(frozen=True)
class Method:
    reads: Reads
    property: str
    """What the entry relies on, as the TensorFlow test checks it."""


@dataclass(frozen=True)
class ObjectKind:
    name: str
    made_by: frozenset[str]
    """Qualified names of the calls that return one (exact names)."""
    made_by_prefix: tuple[str, ...] = ()
    """Families whose every class shares the methods (``keras.optimizers.``)."""
    methods: Mapping[str, Method] = field(default_factory=dict)
    returns_same: frozenset[str] = frozenset()
    """Methods returning an object of the same kind (``ta = ta.write(t, x)``)."""

    def makes(self, name: str) -> bool:
        if name in self.made_by:
            return True
        last = name.rsplit(".", 1)[-1]
        return any(name.startswith(p) for p in self.made_by_prefix) and last[:1].isupper()


def _all(names: tuple[str, ...], reads: Reads, why: str) -> dict[str, Method]:
    return {name: Method(reads, why) for name in names}


KERAS_LOSSES = (
    "SparseCategoricalCrossentropy",
    "CategoricalCrossentropy",
    "BinaryCrossentropy",
    "MeanSquaredError",
    "MeanAbsoluteError",
    "MeanSquaredLogarithmicError",
    "MeanAbsolutePercentageError",
    "Huber",
    "KLDivergence",
    "CosineSimilarity",
    "Hinge",
    "SquaredHinge",
    "CategoricalHinge",
    "LogCosh",
    "Poisson",
    "BinaryFocalCrossentropy",
    "CategoricalFocalCrossentropy",
    "Tversky",
    "Dice",
)
"""Keras loss classes whose ``__call__`` is checked with None dimensions (``keras`` and
``tf.keras``)."""

KERAS_METRICS = (
    "Mean",
    "Sum",
    "SparseCategoricalAccuracy",
    "SparseCategoricalCrossentropy",
    "SparseTopKCategoricalAccuracy",
    "MeanSquaredError",
    "MeanAbsoluteError",
    "MeanAbsolutePercentageError",
    "RootMeanSquaredError",
    "CategoricalAccuracy",
    "BinaryAccuracy",
    "Accuracy",
    "AUC",
    "Precision",
    "Recall",
    "CategoricalCrossentropy",
    "BinaryCrossentropy",
    "TopKCategoricalAccuracy",
    "CosineSimilarity",
    "LogCoshError",
    "KLDivergence",
    "Poisson",
    "Hinge",
)
"""Keras metric classes whose ``__call__``/``update_state`` are checked with None
dimensions."""

STRATEGIES = (
    "MirroredStrategy",
    "OneDeviceStrategy",
    "MultiWorkerMirroredStrategy",
    "TPUStrategy",
    "CentralStorageStrategy",
    "ParameterServerStrategy",
    "experimental.CentralStorageStrategy",
    "experimental.MultiWorkerMirroredStrategy",
    "experimental.TPUStrategy",
    "experimental.ParameterServerStrategy",
    "get_strategy",
)

TAPE_PROPERTY = (
    "differentiates whatever shapes it is given: gradients and jacobians are computed by ops"
)
TENSOR_ARRAY_PROPERTY = (
    "sizes and element shapes are tensors at run time (a None element dimension is merged)"
)
VARIABLE_PROPERTY = (
    "checks the value against the variable's own shape: with None dimensions it accepts "
    "and rejects the same values (an InvalidArgumentError when run instead of a "
    "ValueError when traced)"
)

OBJECT_KINDS: tuple[ObjectKind, ...] = (
    ObjectKind(
        "tf.GradientTape",
        frozenset({"tensorflow.GradientTape", "tensorflow.autodiff.GradientTape"}),
        methods=_all(
            ("watch", "gradient", "jacobian", "batch_jacobian", "stop_recording", "reset"),
            "nothing",
            TAPE_PROPERTY,
        ),
    ),
    ObjectKind(
        "tf.TensorArray",
        frozenset({"tensorflow.TensorArray"}),
        methods=_all(
            ("write", "read", "stack", "gather", "concat", "scatter", "unstack", "split")
            + ("size", "close", "identity"),
            "nothing",
            TENSOR_ARRAY_PROPERTY,
        ),
        returns_same=frozenset({"write", "scatter", "unstack", "split", "identity"}),
    ),
    ObjectKind(
        "tf.Variable",
        frozenset({"tensorflow.Variable", "keras.Variable", "tensorflow.compat.v1.Variable"}),
        made_by_prefix=(),
        methods=_all(
            ("assign", "assign_add", "assign_sub", "read_value", "value")
            + ("scatter_update", "scatter_add", "scatter_sub", "scatter_nd_update"),
            "nothing",
            VARIABLE_PROPERTY,
        ),
    ),
    ObjectKind(
        "Keras optimizer",
        frozenset({"keras.mixed_precision.LossScaleOptimizer"}),
        made_by_prefix=("keras.optimizers.",),
        methods={
            "apply_gradients": Method(
                "nothing",
                "updates each variable with a gradient of the variable's own shape; "
                "checked with SGD, Adam, RMSprop and Adagrad (keras and tf.keras)",
            ),
        },
    ),
    ObjectKind(
        "Keras loss",
        frozenset(f"keras.losses.{name}" for name in KERAS_LOSSES),
        methods=_all(("__call__", "call"), "nothing", ANY_SIZE),
    ),
    ObjectKind(
        "Keras metric",
        frozenset(f"keras.metrics.{name}" for name in KERAS_METRICS),
        methods=_all(
            ("__call__", "update_state", "result", "reset_state", "reset_states"),
            "nothing",
            ANY_SIZE,
        ),
    ),
    ObjectKind(
        "tf.distribute strategy",
        frozenset(f"tensorflow.distribute.{name}" for name in STRATEGIES),
        methods={
            "run": Method("follow", "calls the function once per replica with its arguments"),
            "experimental_run_v2": Method("follow", "the older name of run"),
            "reduce": Method("nothing", "reduces per-replica values with ops (any size)"),
            "experimental_local_results": Method("nothing", "returns the per-replica values"),
            "gather": Method("nothing", "concatenates per-replica values with ops"),
        },
    ),
    ObjectKind(
        "tf.summary writer",
        frozenset(
            {"tensorflow.summary.create_file_writer", "tensorflow.summary.create_noop_writer"}
        ),
        methods=_all(
            ("as_default", "set_as_default", "flush", "close", "init"),
            "nothing",
            "takes no tensor but the step; the summaries written under it accept any size",
        ),
    ),
)


def object_kind(made_by: str) -> ObjectKind | None:
    """The kind of object the library call ``made_by`` returns (None: not known)."""
    for kind in OBJECT_KINDS:
        if kind.makes(made_by):
            return kind
    if made_by.startswith("keras.") and made_by.endswith(".add_weight"):
        return VARIABLE  # a Keras layer's own weight
    return None


def method_of(made_by: str, method: str) -> Method | None:
    """What ``<object made by made_by>.<method>(...)`` reads (None: not known)."""
    kind = object_kind(made_by)
    return kind.methods.get(method) if kind is not None else None


VARIABLE = next(k for k in OBJECT_KINDS if k.name == "tf.Variable")
