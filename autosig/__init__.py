"""autosig: end TensorFlow retracing.

Profiles tf.functions under real calls, infers stable input signatures, rewrites the
source with libcst and verifies the rewrite. Static parts never import TensorFlow.
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"

__all__ = ["__version__", "expect_traces", "record"]


def record(path: str = ".autosig/profile.json", **options: Any) -> Any:
    """Context manager recording every tf.function call into a profile at ``path``.

    Imported lazily so that ``import autosig`` never imports TensorFlow.
    """
    from autosig.profile.recorder import record as _record

    return _record(path, **options)


def expect_traces(fn: Any, *, at_most: int = 1) -> Any:
    """Context manager: fail (AssertionError) when the tf.function ``fn`` traces more than
    ``at_most`` times inside the block, naming each extra trace's cause as
    ``autosig explain`` does (``autosig.explain.budget.expect_traces``)::

        with autosig.expect_traces(model.train_step, at_most=1):
            for batch in batches:
                model.train_step(batch)
    """
    from autosig.explain.budget import expect_traces as _expect

    return _expect(fn, at_most=at_most)
