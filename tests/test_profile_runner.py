"""``autosig profile -- CMD``: child processes, exit codes, crashes, Keras, the bootstrap."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from autosig.profile.format import load_profile

PYTHON = sys.executable
ENV = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"}


def autosig(*args: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [PYTHON, "-m", "autosig", *args],
        cwd=cwd,
        env={**ENV, **env},
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_exit_code_passes_through_and_profile_written_without_tensorflow(tmp_path: Path):
    result = autosig("profile", "--", PYTHON, "-c", "import sys; sys.exit(7)", cwd=tmp_path)
    assert result.returncode == 7
    profile = load_profile(tmp_path / ".autosig" / "profile.json")
    assert profile.functions == [] and profile.exit_code == 7
    assert profile.command[-1] == "import sys; sys.exit(7)"
    assert profile.partial  # no earlier profile: written in place, marked partial
    assert result.stderr == (
        "autosig: the command exited with status 7: partial profile (no tf.function calls) "
        "-> .autosig/profile.json\n"
    )


def test_a_failed_run_never_replaces_a_good_profile(tmp_path: Path):
    """Non-zero exit, a forgotten '--', an interrupt: the good profile stays as it was."""
    from autosig.profile.format import FunctionRecord, Profile

    good = tmp_path / ".autosig" / "profile.json"
    good.parent.mkdir()
    good_profile = Profile(
        functions=[FunctionRecord("m.py", "f", 3, None, True, calls=55, traces=2)],
        exit_code=0,
    )
    good.write_text(good_profile.dumps())
    before = good.read_bytes()
    for args, code in (
        (["--", PYTHON, "-c", "import sys; sys.exit(3)"], 3),
        ([PYTHON, "no_such_script.py"], 2),  # forgot '--' and mistyped the script
    ):
        result = autosig("profile", *args, cwd=tmp_path)
        assert result.returncode == code, result.stderr
        assert good.read_bytes() == before
        beside = tmp_path / ".autosig" / "profile.partial.json"
        partial = load_profile(beside)
        assert partial.partial and partial.exit_code == code and partial.functions == []
        line = result.stderr.strip().splitlines()[-1]
        assert line == (
            f"autosig: the command exited with status {code}: partial profile (no tf.function "
            "calls) -> .autosig/profile.partial.json; .autosig/profile.json kept unchanged"
        )
        explained = autosig("explain", ".autosig/profile.partial.json", cwd=tmp_path)
        assert explained.stdout.startswith(
            f"note: .autosig/profile.partial.json: partial profile: the recorded command "
            f"exited with status {code}"
        ), explained.stdout
        data = json.loads(autosig("explain", str(beside), "--format", "json", cwd=tmp_path).stdout)
        assert data["partial"] is True and data["exit_code"] == code
    # a good run replaces it as before
    assert autosig("profile", "--", PYTHON, "-c", "pass", cwd=tmp_path).returncode == 0
    assert not load_profile(good).partial and load_profile(good).exit_code == 0


def test_fix_with_a_partial_profile_says_so(tmp_path: Path):
    from autosig.profile.format import Profile

    (tmp_path / "p.json").write_text(Profile(exit_code=130, partial=True).dumps())
    (tmp_path / "m.py").write_text("x = 1\n")
    result = autosig("fix", "m.py", "--profile", "p.json", "--diff", cwd=tmp_path)
    assert (
        "autosig: warning: p.json: partial profile: the recorded command was interrupted "
        "(exit status 130, signal 2); calls after that are missing"
    ) in result.stderr


def test_ctrl_c_exit_status_is_130_even_when_exit_handlers_import(tmp_path: Path):
    """Python forgets its SIGINT exit status when an atexit handler imports a module (the
    recorder's profile writing does); the bootstrap restores it."""
    script = (
        "import atexit\natexit.register(lambda: __import__('zipfile'))\nraise KeyboardInterrupt\n"
    )
    (tmp_path / "interrupted.py").write_text(script)
    plain = subprocess.run([PYTHON, "interrupted.py"], cwd=tmp_path, capture_output=True)
    assert plain.returncode == 1  # the CPython behaviour this guards against
    result = autosig("profile", "--", PYTHON, "interrupted.py", cwd=tmp_path)
    assert result.returncode == 130, result.stderr
    assert "interrupted (signal 2, exit status 130)" in result.stderr


def test_killed_by_a_signal_is_128_plus_n(tmp_path: Path):
    script = "import os, signal; os.kill(os.getpid(), signal.SIGTERM)"
    result = autosig("profile", "--", PYTHON, "-c", script, cwd=tmp_path)
    assert result.returncode == 143
    assert load_profile(tmp_path / ".autosig" / "profile.json").exit_code == 143


def test_unwritable_output_is_refused_before_running(tmp_path: Path):
    (tmp_path / "blocker").write_text("")
    script = "open('ran', 'w').write('yes')"
    result = autosig("profile", "-o", "blocker/p.json", "--", PYTHON, "-c", script, cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "blocker/p.json" in result.stderr
    assert not (tmp_path / "ran").exists()


def test_no_command_after_options_shows_profiles_own_usage(tmp_path: Path):
    """'autosig profile -o p.json' (the command forgotten): profile's usage, not that of
    a 'profile run' subcommand the user never typed."""
    for args in (["-o", "p.json"], ["-o", "p.json", "--"], []):
        result = autosig("profile", *args, cwd=tmp_path)
        assert result.returncode == 2
        usage, _, rest = result.stderr.partition("   or: ")
        assert usage.startswith("Usage: autosig profile [-o FILE] [--capture-outputs] ")
        assert usage.rstrip().endswith("-- CMD..."), result.stderr
        assert rest.startswith(
            "autosig profile merge PROFILE... -o FILE\nTry 'autosig profile --help' for help.\n"
        ), result.stderr
        assert "profile run" not in result.stderr
        assert "Error: no command to record after '--'" in result.stderr


def test_missing_command_is_one_line(tmp_path: Path):
    result = autosig("profile", "--", "no-such-command-autosig", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.strip() == "autosig: error: command not found: no-such-command-autosig"


def test_bootstrap_modules_run_first_and_existing_sitecustomize_is_chained(tmp_path: Path):
    from autosig.profile.launch import run_recorded

    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text("import builtins\nbuiltins.CHAINED = True\n")
    (site / "early_hook.py").write_text("import sys\nsys.EARLY = 'tensorflow' not in sys.modules\n")
    script = tmp_path / "show.py"
    script.write_text(
        "import builtins, sys\n"
        "print(getattr(builtins, 'CHAINED', False), getattr(sys, 'EARLY', None),\n"
        "      'autosig' in sys.modules)\n"
    )
    checkout = Path(__file__).resolve().parent.parent  # this autosig, not an installed one
    env = {**ENV, "PYTHONPATH": f"{site}{os.pathsep}{checkout}"}
    out = tmp_path / "p.json"
    log = tmp_path / "log.txt"
    with log.open("w") as stdout:
        code = subprocess.run(
            [
                PYTHON,
                "-c",
                "import sys; from pathlib import Path; from autosig.profile.launch import "
                "run_recorded; sys.exit(run_recorded([sys.executable, sys.argv[1]], "
                "Path(sys.argv[2]), env=dict(__import__('os').environ), "
                "bootstrap=['early_hook']))",
                str(script),
                str(out),
            ],
            env=env,
            stdout=stdout,
            timeout=120,
        ).returncode
    assert code == 0
    # Chained, bootstrap module first, and nothing of autosig loaded without TensorFlow.
    assert log.read_text().strip() == "True True False"
    assert load_profile(out).exit_code == 0
    assert run_recorded  # the public entry point helper F calls


CRASHING = textwrap.dedent(
    """
    import os, signal, subprocess, sys
    import tensorflow as tf

    @tf.function
    def parent_fn(x):
        return x * 2

    parent_fn(tf.ones(2))
    parent_fn(tf.ones(3))
    if len(sys.argv) > 1:  # the child: record, then die of SIGTERM
        @tf.function
        def child_fn(x):
            return x + 1
        child_fn(tf.ones(1))
        os.kill(os.getpid(), signal.SIGTERM)
    child = subprocess.run([sys.executable, __file__, "child"])
    print("child returncode", child.returncode, flush=True)
    raise RuntimeError("the program crashes")
    """
)


@pytest.mark.tf
@pytest.mark.slow
def test_crash_and_killed_child_still_leave_a_valid_profile(tmp_path: Path):
    pytest.importorskip("tensorflow")
    (tmp_path / "crash.py").write_text(CRASHING)
    tmp = tmp_path / "tmp"  # the SIGTERM'd child runs no exit handler: AutoGraph's files stay
    tmp.mkdir()
    result = autosig(
        "profile", "--capture-outputs", "--", PYTHON, "crash.py", cwd=tmp_path, TMPDIR=str(tmp)
    )
    assert result.returncode == 1
    assert "RuntimeError: the program crashes" in result.stderr
    assert "child returncode -15" in result.stdout
    profile = load_profile(tmp_path / ".autosig" / "profile.json")
    assert profile.exit_code == 1
    names = {f.qualname: f for f in profile.functions}
    assert (names["parent_fn"].calls, names["parent_fn"].traces) == (4, 4)  # parent + child
    assert names["child_fn"].calls == 1 and names["child_fn"].path == "crash.py"
    # --capture-outputs: every early call sampled with its output, for the verifier.
    from autosig.profile.samples import load_samples, rebuild

    arrays = load_samples(tmp_path / ".autosig" / "profile.json")
    outputs = [rebuild(s.outputs, arrays).tolist() for s in names["parent_fn"].samples]
    assert outputs == [[2.0, 2.0], [2.0, 2.0, 2.0]] * 2


KERAS_LOOP = textwrap.dedent(
    """
    import json, sys
    import numpy as np
    import tensorflow as tf
    import keras

    model = keras.Sequential([
        keras.layers.Embedding(50, 8),
        keras.layers.GlobalAveragePooling1D(),
        keras.layers.Dense(2),
    ])
    optimizer = keras.optimizers.SGD(0.1)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    @tf.function
    def train_step(tokens, labels):
        with tf.GradientTape() as tape:
            loss = loss_fn(labels, model(tokens, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    rng = np.random.default_rng(0)
    lengths = [5, 7, 5, 9, 7, 11, 5]
    for length in lengths:
        tokens = tf.constant(rng.integers(0, 50, (4, length)), tf.int32)
        labels = tf.constant(rng.integers(0, 2, (4,)), tf.int32)
        train_step(tokens, labels)

    model.compile(optimizer="sgd", loss=keras.losses.SparseCategoricalCrossentropy(True))
    x = rng.integers(0, 50, (10, 6))
    y = rng.integers(0, 2, (10,))
    model.fit(x, y, batch_size=3, epochs=1, verbose=0)
    for batch in (2, 3, 5):
        model.train_on_batch(x[:batch], y[:batch])
    json.dump({"calls": len(lengths), "traces": train_step.experimental_get_tracing_count()},
              open(sys.argv[1], "w"))
    """
)


@pytest.mark.tf
@pytest.mark.slow
def test_keras_training_loop_counts_match_tensorflow_and_explain_names_the_dimension(
    tmp_path: Path,
):
    pytest.importorskip("keras")
    (tmp_path / "train.py").write_text(KERAS_LOOP)
    result = autosig("profile", "-o", "p.json", "--", PYTHON, "train.py", "tf.json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    truth = json.loads((tmp_path / "tf.json").read_text())
    profile = load_profile(tmp_path / "p.json")
    step = next(f for f in profile.functions if f.qualname == "train_step")
    assert (step.calls, step.traces) == (truth["calls"], truth["traces"])
    assert step.editable and step.path == "train.py"
    library = [f for f in profile.functions if not f.editable]
    assert {f.qualname.rsplit(".", 1)[-1] for f in library} >= {
        "one_step_on_data",
        "multi_step_on_iterator",
    }
    assert all(f.path and "site-packages" in f.path for f in library)

    explained = autosig("explain", "p.json", cwd=tmp_path)
    assert explained.returncode == 0, explained.stderr
    text = explained.stdout
    assert "train_step: trace 2 of" in text
    assert "tokens shape (4, 5) -> (4, 7): dimension 1 varies" in text
    assert "dimension 1 of tokens varies in" in text
    assert "[library]" in text and "dimension 0 varies" in text
    assert "the batch size varies" in text

    as_json = json.loads(autosig("explain", "p.json", "--format", "json", cwd=tmp_path).stdout)
    first = as_json["functions"][0]
    assert first["trace_time_s"] >= as_json["functions"][-1]["trace_time_s"]


@pytest.mark.tf
@pytest.mark.slow
def test_pytest_plugin_records_the_test_suite_across_xdist_workers(tmp_path: Path):
    pytest.importorskip("tensorflow")
    (tmp_path / "test_model.py").write_text(
        textwrap.dedent(
            """
            import tensorflow as tf

            @tf.function
            def double(x):
                return x * 2

            def test_scalar():
                assert double(tf.constant(2)).numpy() == 4

            def test_vector():
                assert double(tf.constant([1, 2])).numpy().tolist() == [2, 4]
            """
        )
    )
    result = subprocess.run(
        [PYTHON, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "2"]
        + ["--autosig-profile=prof.json"],
        cwd=tmp_path,
        env=ENV,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    profile = load_profile(tmp_path / "prof.json")
    (double,) = profile.functions
    assert (double.qualname, double.calls, double.traces) == ("double", 2, 2)
    assert not (tmp_path / "prof.json.parts").exists()  # xdist workers' parts merged
    assert profile.runs == 1


def test_the_state_folder_ignores_itself_in_git(tmp_path: Path):
    """.autosig/ gets a .gitignore of '*' (as pytest's cache does): profiles, samples and
    stored verify runs never show in git status, with nothing to add to the project's."""
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    (tmp_path / "work.py").write_text("print('hi')\n")
    result = autosig("profile", "--", PYTHON, "work.py", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    ignore = tmp_path / ".autosig" / ".gitignore"
    assert ignore.read_text().splitlines()[-1] == "*"
    status = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    )
    assert status.stdout == "?? work.py\n"
    ignore.write_text("# mine\n")  # the user's own version is kept
    autosig("profile", "--", PYTHON, "work.py", cwd=tmp_path)
    assert ignore.read_text() == "# mine\n"
