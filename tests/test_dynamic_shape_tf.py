"""Each place ``autosig.infer.size_arguments`` lets a size become a scalar tensor, measured.

For every entry of ``SIZE_ARGUMENTS`` (plus slice bounds and ``for`` loops over
``range``) the entry's example runs twice with TensorFlow: as the original code writes
it (``x.shape[0]``, no signature: one trace per shape) and as ``fix`` rewrites it
(``tf.shape(x)[0]``, a signature with None). Both must give the same values and dtypes
on every shape, and the rewritten one must trace once. An entry that TensorFlow does
not accept with a tensor fails here.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from autosig.infer.size_arguments import (
    RANGE_LOOP_EXAMPLE,
    RANGE_LOOP_WHY,
    SIZE_ARGUMENTS,
    SLICE_EXAMPLE,
    SLICE_WHY,
)

pytestmark = pytest.mark.tf

SHAPES = [(3, 4), (5, 2), (1, 3), (4, 4), (7, 1)]
SIGNATURE = "@tf.function(input_signature=[tf.TensorSpec([None, None], tf.float32)])"

EXAMPLES = {
    f"{api.removeprefix('tensorflow.')}:{slot.keyword}": slot.example
    for api, slots in SIZE_ARGUMENTS.items()
    for slot in slots
}
EXAMPLES["slice"] = SLICE_EXAMPLE
EXAMPLES["range_loop"] = RANGE_LOOP_EXAMPLE


@pytest.fixture(scope="module")
def tf() -> Any:
    import os

    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    return pytest.importorskip("tensorflow")


def _module(example: str, tmp_path: Path, name: str) -> Any:
    """``static`` (x.shape[0], no signature) and ``dynamic`` (tf.shape, signature)."""
    if example.startswith("def "):
        body = example.split("\n", 1)[1]
    else:
        body = f"    return {example}\n"
    source = (
        "import tensorflow as tf\n\n"
        f"@tf.function\ndef static(x):\n{body.format(n='x.shape[0]')}\n"
        f"{SIGNATURE}\ndef dynamic(x):\n{body.format(n='tf.shape(x)[0]')}"
    )
    path = tmp_path / f"{name.replace(':', '_')}.py"
    path.write_text(source)  # autograph reads the source of the functions it converts
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_a_scalar_tensor_works_where_the_int_did(name: str, tf: Any, tmp_path: Path) -> None:
    module = _module(EXAMPLES[name], tmp_path, name)
    rng = np.random.default_rng(5)
    for shape in SHAPES:
        x = tf.constant(rng.uniform(-1, 1, size=shape).astype("float32"))
        want = module.static(x)
        got = module.dynamic(x)
        assert got.dtype == want.dtype, (name, shape)
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6, err_msg=f"{shape}")
    assert module.static.experimental_get_tracing_count() == len(SHAPES)
    assert module.dynamic.experimental_get_tracing_count() == 1


def test_every_reason_is_covered() -> None:
    whys = {slot.why for slots in SIZE_ARGUMENTS.values() for slot in slots}
    assert len(EXAMPLES) == sum(len(s) for s in SIZE_ARGUMENTS.values()) + 2
    assert whys and SLICE_WHY not in whys and RANGE_LOOP_WHY not in whys
