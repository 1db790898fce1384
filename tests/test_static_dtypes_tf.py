"""The TensorFlow facts ``analysis/static_dtypes.py`` relies on, measured: the APIs it
reads as float32 by default return float32 whatever their inputs' dtype (unless the
argument it checks for is given)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

pytestmark = pytest.mark.tf


@pytest.fixture(scope="module")
def tf() -> Any:
    return pytest.importorskip("tensorflow")


@pytest.mark.parametrize("dtype", ["float64", "float16", "uint8", "int32"])
def test_resize_gives_float32_whatever_the_images_dtype(tf: Any, dtype: str) -> None:
    images = np.ones((5, 7, 3), dtype)
    assert tf.image.resize(images, (4, 4)).dtype == tf.float32
    assert tf.image.resize(images, (4, 4), antialias=True).numpy().dtype == np.float32
    nearest = tf.image.resize(images, (4, 4), method="nearest")
    assert nearest.dtype.name == dtype  # the method it checks for keeps the images' dtype


def test_float32_by_default(tf: Any) -> None:
    made = [
        tf.zeros([2]),
        tf.ones([2]),
        tf.random.uniform([2]),
        tf.random.normal([2]),
        tf.random.truncated_normal([2]),
    ]
    assert [t.dtype for t in made] == [tf.float32] * len(made)
