"""autosig: end TensorFlow retracing.

Profiles tf.functions under real calls, infers stable input signatures, rewrites the
source with libcst and verifies the rewrite. Static parts never import TensorFlow.
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"

__all__ = ["__version__", "record"]


def record(path: str = ".autosig/profile.json", **options: Any) -> Any:
    """Context manager recording every tf.function call into a profile at ``path``.

    Imported lazily so that ``import autosig`` never imports TensorFlow.
    """
    from autosig.profile.recorder import record as _record

    return _record(path, **options)
