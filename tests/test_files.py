"""Source files are read and written back without changing what we did not mean to."""

from __future__ import annotations

import codecs
import os
import stat
from pathlib import Path

import pytest

from autosig.errors import AutosigError
from autosig.source.files import (
    atomic_write_bytes,
    iter_python_files,
    mentions_function,
    read_source,
    write_source,
)


@pytest.mark.parametrize(
    "raw",
    [
        b"x = 1\r\ny = 2\r\n",
        b"x = 1\ny = 2\r\nz = 3",
        codecs.BOM_UTF8 + "s = 'é'\n".encode(),
        "# -*- coding: latin-1 -*-\ns = 'é'\n".encode("latin-1"),
        b"",
        b"\tif True:\n\t\tpass\n",
    ],
)
def test_round_trip_is_byte_identical(tmp_path: Path, raw: bytes) -> None:
    path = tmp_path / "m.py"
    path.write_bytes(raw)
    source = read_source(path)
    write_source(source, source.text)
    assert path.read_bytes() == raw


def test_latin1_edit_keeps_encoding(tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    path.write_bytes("# -*- coding: latin-1 -*-\ns = 'é'\n".encode("latin-1"))
    source = read_source(path)
    write_source(source, source.text + "t = 'ü'\n")
    assert path.read_bytes().decode("latin-1").endswith("t = 'ü'\n")


def test_non_utf8_is_one_line_error(tmp_path: Path) -> None:
    path = tmp_path / "bad.py"
    path.write_bytes(b"x = '\xff\xfe'\n")
    with pytest.raises(AutosigError) as info:
        read_source(path)
    message = str(info.value)
    assert str(path) in message and "\n" not in message and "utf-8" in message


def test_directory_named_py_is_not_a_file(tmp_path: Path) -> None:
    (tmp_path / "x.py").mkdir()
    (tmp_path / "x.py" / "inner.py").write_text("a = 1\n")
    found = list(iter_python_files([tmp_path]))
    assert found == [tmp_path / "x.py" / "inner.py"]
    with pytest.raises(AutosigError, match="directory"):
        read_source(tmp_path / "x.py")


def test_symlink_loop_and_excludes(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "a.py").write_text("a = 1\n")
    (pkg / "loop").symlink_to(tmp_path, target_is_directory=True)
    (pkg / "gen").mkdir()
    (pkg / "gen" / "b.py").write_text("b = 1\n")
    (pkg / ".venv").mkdir()
    (pkg / ".venv" / "c.py").write_text("c = 1\n")
    found = [p.relative_to(tmp_path).as_posix() for p in iter_python_files([tmp_path])]
    assert found == ["pkg/a.py", "pkg/gen/b.py"]
    found = [
        p.relative_to(tmp_path).as_posix() for p in iter_python_files([tmp_path], exclude=["gen"])
    ]
    assert found == ["pkg/a.py"]


def test_missing_path_is_reported_not_raised(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("a = 1\n")
    items = list(iter_python_files([tmp_path / "nope", tmp_path / "a.py"]))
    assert isinstance(items[0], AutosigError) and "nope" in str(items[0])
    assert items[1] == tmp_path / "a.py"


def test_atomic_write_keeps_mode_and_leaves_no_temp(tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    path.write_text("old\n")
    os.chmod(path, 0o751)
    atomic_write_bytes(path, b"new\n")
    assert path.read_bytes() == b"new\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o751
    assert [p.name for p in tmp_path.iterdir()] == ["m.py"]


@pytest.mark.skipif(os.geteuid() == 0, reason="root can write read-only directories")
def test_unwritable_directory_is_one_line_error(tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    path.write_text("old\n")
    os.chmod(tmp_path, 0o500)
    try:
        with pytest.raises(AutosigError, match="cannot write"):
            atomic_write_bytes(path, b"new\n")
        assert path.read_text() == "old\n"
    finally:
        os.chmod(tmp_path, 0o700)


@pytest.mark.parametrize(
    "src",
    [
        b"@tf.function\ndef f(): pass\n",
        b"@tf2 . function(jit_compile=True)\ndef f(): pass\n",
        b"from tensorflow import function as f\n",
        b"from tensorflow import (\n    constant,\n    function,\n)\n",
        b"from tensorflow.python.eager.def_function import function\n",
        b"fast = tf.compat.v2.function(slow)\n",
    ],
)
def test_prefilter_keeps_every_site_spelling(src: bytes) -> None:
    assert mentions_function(src)


@pytest.mark.parametrize(
    "src", [b"x = 1\n", b"# a function that adds\ndef add(a, b): return a + b\n"]
)
def test_prefilter_skips_files_without_sites(src: bytes) -> None:
    assert not mentions_function(src)


@pytest.mark.parametrize(
    "text",
    [
        "@tf.function\ndef f(x):\n    return x\n",
        "step = tf . function(step)\n",
        "from tensorflow import function\n",
        "from tensorflow import (\n    constant,\n    function as fn,\n)\n",
        "from tensorflow.compat.v2 import function\n",
        "# uses tf.function\n",
        "x = 1  # nothing\n",
        "def function(x):\n    return x\n",
        "from tensorflow import functional\n",
        "a.functions = 1\n",
        "from keras import function\n",
    ],
)
def test_the_fast_prefilter_agrees_with_its_pattern(text: str) -> None:
    """mentions_function searches PREFILTER's alternatives apart (faster): same answer."""
    from autosig.source.files import PREFILTER, mentions_function

    data = text.encode()
    assert mentions_function(data) == (PREFILTER.search(data) is not None)
