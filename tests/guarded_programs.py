"""Programs for the guarded relaxed trace (issue 21), run like the contract suite.

Each is profiled on a short profile, fixed with ``autosig fix . --profile`` and run
against the original on calls the profile never saw (``contract_cases.run_case``):
other dtypes, ranks, structures, float64 NumPy arrays, a subclass instance. Run by
``test_guarded_trace_tf.py``: ``python tests/guarded_programs.py`` prints one JSON row
per program.
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from contract_programs import Case  # noqa: E402 - the tests folder first

M = "model.py"

PROGRAMS: list[Case] = [
    Case(
        name="global_defined_after_the_def",
        klass="21.3",
        origin="a scoring function whose weights are created below it: the seeding call "
        "must come after them",
        files={
            M: """
            import tensorflow as tf

            @tf.function
            def score(x):
                return tf.reduce_sum(x * weights, axis=-1)

            weights = tf.constant([0.5, -1.0, 0.25, 2.0])
            """
        },
        profiled="out = [m.score(tf.ones([n, 4]) * n) for n in (2, 3, 5)]",
        unseen=(
            "m.score(np.full([2, 4], 1 / 3))",
            "m.score(tf.ones([4], tf.float32))",
            "m.score(tf.ones([2, 3, 4]))",
            "m.score(tf.ones([7, 4]))",
        ),
        rejected=("m.score(tf.ones([2, 4], tf.int32))",),
    ),
    Case(
        name="subclass_sets_its_attribute_after_init",
        klass="21.3",
        origin="a module whose subclass sets a scale after super().__init__(): its instances "
        "must not reuse a trace seeded before that",
        files={
            M: """
            import tensorflow as tf

            class Head(tf.Module):
                def __init__(self):
                    super().__init__()
                    self.w = tf.Variable([[1.0], [2.0]])

                @tf.function
                def __call__(self, x):
                    return x @ self.w * getattr(self, "scale", 1.0)

            class ScaledHead(Head):
                def __init__(self):
                    super().__init__()
                    self.scale = 2.0
            """
        },
        setup="head = m.Head()",
        profiled="out = [head(tf.ones([n, 2])) for n in (1, 2, 3)]",
        unseen=(
            "m.ScaledHead()(tf.ones([2, 2]))",
            "head(np.ones([2, 2]))",
            "head(tf.ones([4, 2], tf.float64))",
        ),
    ),
    Case(
        name="ids_int32_then_int64_list_of_levels",
        klass="21.3",
        origin="a pooled lookup over a list of id tensors: int64 ids and a third list item "
        "come later",
        files={
            M: """
            import tensorflow as tf

            table = tf.Variable(tf.reshape(tf.range(20, dtype=tf.float32), [10, 2]))

            @tf.function
            def pooled(id_lists):
                return tf.add_n([tf.reduce_sum(tf.gather(table, ids), 0) for ids in id_lists])
            """
        },
        profiled="out = [m.pooled([tf.range(n), tf.range(n + 1)]) for n in (1, 2, 3)]",
        unseen=(
            "m.pooled([tf.range(2, dtype=tf.int64), tf.range(3, dtype=tf.int64)])",
            "m.pooled([tf.range(2), tf.range(3), tf.range(4)])",
        ),
    ),
]


def main() -> None:
    import tensorflow as tf
    from contract_cases import TraceCounter, run_case, verdict

    tf.get_logger().setLevel("ERROR")
    counter = TraceCounter()
    for case in PROGRAMS:
        with tempfile.TemporaryDirectory() as tmp, contextlib.redirect_stdout(io.StringIO()):
            row = run_case(case, Path(tmp).resolve(), counter)
        row["verdict"] = verdict(case, row)
        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
