"""[tool.autosig] discovery, validation and the per-path / per-function lookups."""

from __future__ import annotations

from pathlib import Path

import pytest

from autosig.errors import AutosigError
from autosig.source.config import Config, find_config_file, load_config, path_matches


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


FULL = """
[project]
name = "demo"

[tool.autosig]
select = ["AS1"]
ignore = ["as107"]
exclude = ["legacy/*"]
unsafe-fixes = true
relax = "batch"
jobs = 3

[tool.autosig.per-path-ignores]
"tests/*" = ["AS101", "AS105"]
"**/gen_*.py" = ["AS102"]

[tool.autosig.functions."src/train.py::Model.step"]
relax = "all"
params.images.relax = "none"

[tool.autosig.functions."src/*.py::eval_step"]
relax = "none"
"""


def test_defaults_when_no_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.py").write_text("x = 1\n")
    config = load_config([tmp_path / "a.py"])
    assert config.source is None
    assert config.select is None and config.ignore == () and config.relax == "auto"
    assert config.rules_for(tmp_path / "a.py") == (None, ())


def test_full_pyproject_is_read(tmp_path: Path) -> None:
    pyproject = write(tmp_path / "pyproject.toml", FULL)
    config = load_config([tmp_path / "src" / "train.py"])
    assert config.source == pyproject
    assert config.root == tmp_path
    assert config.select == ("AS1",)
    assert config.ignore == ("AS107",)  # normalised to upper case
    assert config.exclude == ("legacy/*",)
    assert config.unsafe_fixes is True and config.jobs == 3 and config.relax == "batch"


def test_nearest_config_above_first_path_wins(tmp_path: Path) -> None:
    write(tmp_path / "pyproject.toml", '[tool.autosig]\nselect = ["AS101"]\n')
    write(tmp_path / "pkg" / "pyproject.toml", '[tool.autosig]\nselect = ["AS102"]\n')
    write(tmp_path / "pkg" / "mod" / "x.py", "")
    assert load_config([tmp_path / "pkg" / "mod" / "x.py"]).select == ("AS102",)
    assert load_config([tmp_path / "other.py"]).select == ("AS101",)


def test_pyproject_without_section_is_skipped(tmp_path: Path) -> None:
    write(tmp_path / "pyproject.toml", '[tool.autosig]\nignore = ["AS104"]\n')
    write(tmp_path / "sub" / "pyproject.toml", '[project]\nname = "x"\n')
    assert find_config_file(tmp_path / "sub") == tmp_path / "pyproject.toml"
    assert load_config([tmp_path / "sub"]).ignore == ("AS104",)


def test_autosig_toml_has_keys_at_top_level(tmp_path: Path) -> None:
    toml = write(tmp_path / "autosig.toml", 'ignore = ["AS103"]\nrelax = "all"\n')
    write(tmp_path / "pyproject.toml", '[tool.autosig]\nignore = ["AS101"]\n')
    config = load_config([tmp_path])
    assert config.source == toml and config.ignore == ("AS103",) and config.relax == "all"


def test_explicit_config_file(tmp_path: Path) -> None:
    other = write(tmp_path / "elsewhere" / "custom.toml", 'select = ["AS105"]\n')
    write(tmp_path / "pyproject.toml", '[tool.autosig]\nselect = ["AS101"]\n')
    config = load_config([tmp_path], other)
    assert config.select == ("AS105",) and config.root == other.parent
    explicit_pyproject = write(tmp_path / "p2" / "pyproject.toml", "[tool.autosig]\njobs = 2\n")
    assert load_config([tmp_path], explicit_pyproject).jobs == 2


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ('[tool.autosig]\nselekt = ["AS101"]\n', "'tool.autosig.selekt'; did you mean 'select'"),
        ('[tool.autosig]\nselect = "AS101"\n', "'tool.autosig.select': expected a list"),
        ('[tool.autosig]\nselect = ["print"]\n', "'print' is not a rule code"),
        ('[tool.autosig]\nrelax = "some"\n', "'tool.autosig.relax': expected one of"),
        (
            '[tool.autosig]\nignore = ["AS108"]\n',
            "'tool.autosig.ignore': unknown rule code 'AS108'",
        ),
        ('[tool.autosig]\nselect = ["AS4"]\n', "'tool.autosig.select': unknown rule code 'AS4'"),
        ("[tool.autosig]\njobs = 0\n", "'tool.autosig.jobs': expected a positive integer"),
        ("[tool.autosig]\njobs = true\n", "'tool.autosig.jobs'"),
        ('[tool.autosig]\nunsafe-fixes = "yes"\n', "'tool.autosig.unsafe-fixes'"),
        ('[tool.autosig]\nper-path-ignores = ["x"]\n', "'tool.autosig.per-path-ignores'"),
        (
            '[tool.autosig.per-path-ignores]\n"t/*" = "AS101"\n',
            "'tool.autosig.per-path-ignores.\"t/*\"'",
        ),
        ('[tool.autosig.functions."nocolons"]\nrelax = "all"\n', "<path>::<qualname>"),
        (
            '[tool.autosig.functions."a.py::f"]\nrelx = "all"\n',
            "'tool.autosig.functions.\"a.py::f\".relx'",
        ),
        (
            '[tool.autosig.functions."a.py::f"]\nparams.x.relax = "wide"\n',
            "'tool.autosig.functions.\"a.py::f\".params.x.relax'",
        ),
        (
            '[tool.autosig.functions."a.py::f"]\nparams.x.shape = 1\n',
            "unknown key 'tool.autosig.functions.\"a.py::f\".params.x.shape'",
        ),
        ("[tool.autosig\n", "invalid TOML"),
    ],
)
def test_bad_config_names_file_and_key(tmp_path: Path, text: str, needle: str) -> None:
    pyproject = write(tmp_path / "pyproject.toml", text)
    with pytest.raises(AutosigError) as info:
        load_config([tmp_path])
    assert info.value.path == str(pyproject)
    assert needle in str(info.value)
    assert "\n" not in str(info.value)


def test_verify_codes_are_accepted_in_select_ignore_and_per_path(tmp_path: Path) -> None:
    config = load_config(
        [tmp_path],
        write(
            tmp_path / "autosig.toml",
            'select = ["AS1", "as3"]\nignore = ["AS302"]\n'
            '[per-path-ignores]\n"tests/*" = ["AS301"]\n',
        ),
    )
    assert config.select == ("AS1", "AS3") and config.ignore == ("AS302",)
    assert config.rules_for(tmp_path / "tests" / "t.py")[1] == ("AS302", "AS301")


def test_unknown_key_in_autosig_toml_has_no_prefix(tmp_path: Path) -> None:
    write(tmp_path / "autosig.toml", "colour = true\n")
    with pytest.raises(AutosigError, match=r"unknown key 'colour'"):
        load_config([tmp_path])


def test_missing_explicit_config(tmp_path: Path) -> None:
    with pytest.raises(AutosigError, match="config file not found"):
        load_config([tmp_path], tmp_path / "nope.toml")


def test_per_path_ignores(tmp_path: Path) -> None:
    write(tmp_path / "pyproject.toml", FULL)
    config = load_config([tmp_path])
    assert config.rules_for(tmp_path / "tests" / "test_a.py") == (
        ("AS1",),
        ("AS107", "AS101", "AS105"),
    )
    assert config.rules_for(tmp_path / "tests" / "deep" / "b.py")[1] == ("AS107", "AS101", "AS105")
    assert config.rules_for(tmp_path / "gen_x.py")[1] == ("AS107", "AS102")
    assert config.rules_for(tmp_path / "a" / "b" / "gen_y.py")[1] == ("AS107", "AS102")
    assert config.rules_for(tmp_path / "src" / "train.py")[1] == ("AS107",)


def test_command_line_rules_add_to_a_files_and_to_stdins(tmp_path: Path) -> None:
    from autosig.source.collect import rules_for, stdin_rules

    write(tmp_path / "pyproject.toml", FULL)
    config = load_config([tmp_path])
    path = tmp_path / "tests" / "test_a.py"
    assert rules_for(config, path, None, ["AS101", "AS999"]) == (
        ("AS1",),
        ("AS107", "AS101", "AS105", "AS999"),
    )
    assert rules_for(config, path, ["AS2"], None) == (("AS2",), ("AS107", "AS101", "AS105"))
    # stdin has no path: no per-path ignore applies, --ignore adds without repeating
    assert stdin_rules(config, None, ["AS107", "AS999"]) == (("AS1",), ("AS107", "AS999"))
    assert stdin_rules(config, ["AS2"], None) == (("AS2",), ("AS107",))


def test_relative_paths_are_resolved_from_cwd(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(tmp_path / "pyproject.toml", FULL)
    monkeypatch.chdir(tmp_path)
    config = load_config([Path("tests")])
    assert config.rules_for(Path("tests/test_a.py"))[1] == ("AS107", "AS101", "AS105")
    assert config.is_excluded(Path("legacy/old.py"))
    assert not config.is_excluded(Path("src/legacy.py"))


def test_relax_for_precedence(tmp_path: Path) -> None:
    write(tmp_path / "pyproject.toml", FULL)
    config = load_config([tmp_path])
    train = tmp_path / "src" / "train.py"
    assert config.relax_for(train, "Model.step", "images") == "none"  # parameter override
    assert config.relax_for(train, "Model.step", "labels") == "all"  # function override
    assert config.relax_for(train, "Model.step") == "all"
    assert config.relax_for(train, "other") == "batch"  # global
    assert config.relax_for(tmp_path / "src" / "eval.py", "eval_step", "x") == "none"  # glob
    assert config.relax_for(tmp_path / "lib" / "eval.py", "eval_step", "x") == "batch"
    # fix --relax replaces the global policy, never a function's own override
    assert config.relax_for(train, "other", default="all") == "all"
    assert config.relax_for(train, "Model.step", "images", default="all") == "none"


def test_config_is_plain_data() -> None:
    config = Config(root=Path("/r"))
    assert config.relax_for("/r/a.py", "f", "x") == "auto"
    assert config.override_for("/r/a.py", "f") is None


@pytest.mark.parametrize(
    ("path", "pattern", "expected"),
    [
        ("tests/a.py", "tests/*", True),
        ("tests/sub/a.py", "tests/*", True),
        ("tests/sub/a.py", "tests", True),
        ("tests/sub/a.py", "tests/", True),
        ("src/tests.py", "tests/*", False),
        ("a/b/test_x.py", "test_*.py", True),
        ("a/b/test_x.py", "a/test_*.py", False),
        ("gen.py", "**/gen.py", True),
        ("a/b/gen.py", "**/gen.py", True),
        ("a/b/gen.py", "a/**/gen.py", True),
        ("a/gen.py", "a/**/gen.py", True),
        ("./x.py", "x.py", True),
        ("a/x.py", "b/x.py", False),
        ("x.py", "./x.py", True),
    ],
)
def test_path_matches(path: str, pattern: str, expected: bool) -> None:
    assert path_matches(path, pattern) is expected
