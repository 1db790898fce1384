"""Probe evidence without TensorFlow: the candidates, the verdict rules on graphs built by
hand, combining evidence, the profile format (version 2 and version 1), explain's lines,
and the forked copy the probes run in."""

from __future__ import annotations

import json
import os
import re
import time
from collections import Counter
from pathlib import Path

import pytest

from autosig.explain.evidence import evidence_lines
from autosig.profile.evidence import (
    DimEvidence,
    NumberEvidence,
    ProbeEvidence,
    ProbeStats,
    RandomEvidence,
    merge_dim,
    merge_evidence,
    merge_number,
)
from autosig.profile.format import FunctionRecord, Profile, load_profile, save_profile
from autosig.profile.merge import merge_profiles
from autosig.profile.probe.candidates import (
    NumberTracker,
    alternate_sizes,
    float32_keeps_digits,
    plan_round,
    python_numbers,
)
from autosig.profile.probe.graphs import CanonicalGraph, marks_unknown, number_difference
from autosig.profile.probe.isolation import fork_available, run_forked
from autosig.profile.probe.scheduler import budget_from_env
from autosig.profile.probe.verdicts import (
    TraceResult,
    cast_only_verdict,
    dim_verdict,
    number_verdict,
)


def tensor(*shape: int | None, dtype: str = "float32") -> dict:
    return {"kind": "tensor", "shape": list(shape), "dtype": dtype}


def python(value: object) -> dict:
    return {"kind": "python", "type": type(value).__name__, "value": value}


# -- candidates ---------------------------------------------------------------------------


def test_varied_dimensions_that_move_together_are_one_group() -> None:
    signatures = [
        {"x": tensor(8, 20, 3), "y": tensor(8), "lr": python(0.1)},
        {"x": tensor(16, 24, 3), "y": tensor(16), "lr": python(0.2)},
    ]
    plan = plan_round(signatures, signatures[1], {"x": "positional", "y": "positional"}, set())
    labels = [g.label for g in plan.groups]
    assert labels[0] == "x:0+y:0"  # the batch of x and y: same sizes in every call
    assert "x:1" in labels and "x:2" in labels
    varied = {g.label: g.varied for g in plan.groups}
    assert varied["x:1"] is True and varied["x:2"] is False
    assert [(n.param, n.type, n.value) for n in plan.numbers] == [("lr", "float", 0.2)]


def test_fixed_dimensions_group_by_axis_and_size_across_arguments() -> None:
    signatures = [{"a": tensor(4, 3), "b": tensor(4, 5), "c": tensor(3)}]
    plan = plan_round(signatures, signatures[0], {}, set())
    labels = [g.label for g in plan.groups]
    # c[0] == 3 sits on another axis than a[1] == 3: not tied; the batch axis comes first
    assert labels == ["a:0+b:0", "c:0", "a:1", "b:1"]


def test_done_candidates_are_not_probed_again_until_they_vary() -> None:
    first = [{"x": tensor(8, 3)}]
    plan = plan_round(first, first[0], {}, set())
    done = {m.key for g in plan.groups for m in g.members}
    assert not plan_round(first, first[0], {}, done)
    later = [*first, {"x": tensor(9, 3)}]
    again = plan_round(later, later[1], {}, done)
    assert [g.label for g in again.groups] == ["x:0"] and again.groups[0].varied


def test_numbers_left_at_their_default_bools_and_varied_values_are_not_probed() -> None:
    sig = {
        "n": python(3),
        "flag": python(True),
        "k": python(2),
        "many": {"kind": "python", "type": "int", "varied": True},
    }
    plan = plan_round([sig], sig, {"n": "positional", "k": "default"}, set())
    assert [n.param for n in plan.numbers] == ["n"]


def test_a_leaf_whose_rank_varies_is_left_out_with_a_note() -> None:
    signatures = [{"x": tensor(3)}, {"x": tensor(3, 4)}]
    plan = plan_round(signatures, signatures[1], {}, set())
    assert not plan.groups and plan.notes == ["x: its rank varies, not probed"]


def test_nested_arguments_use_explains_paths() -> None:
    sig = {
        "batch": {"kind": "dict", "items": {"ids": tensor(4, 7, dtype="int32"), "w": python(0.5)}}
    }
    plan = plan_round([sig], sig, {"batch": "positional"}, set())
    assert {m.param for g in plan.groups for m in g.members} == {"batch['ids']"}
    assert [n.param for n in plan.numbers] == ["batch['w']"]
    assert list(python_numbers("batch", {"ids": None, "w": 0.5, "n": [1, 2.0]})) == [
        ("batch['w']", 0.5),
        ("batch['n'][0]", 1),
        ("batch['n'][1]", 2.0),
    ]


def test_alternate_sizes_include_one() -> None:
    assert alternate_sizes(8) == [9, 1]
    assert alternate_sizes(1) == [2, 3]
    assert alternate_sizes(0) == [1, 2]


@pytest.mark.parametrize(
    "value, keeps",
    [
        (0.01, True),
        (1e-4, True),
        (3.0, True),
        (0.1 * 3, True),  # float64 noise does not count
        (16777216, True),
        (16777217, False),
        (1_700_000_000.25, False),  # a timestamp: float32 steps by 128 there
        (0.1234567891, False),
        (1e39, False),
    ],
)
def test_float32_keeps_digits(value: float, keeps: bool) -> None:
    assert float32_keeps_digits(value) is keeps


def test_number_tracker_sees_int32_overflow_and_float32_loss() -> None:
    seed = NumberTracker("int")
    for value in (7, 3_000_000_000):
        seed.add(value)
    assert seed.exceeds_int32 and (seed.min, seed.max, seed.count) == (7, 3_000_000_000, 2)
    stamp = NumberTracker("float")
    stamp.add(1_700_000_003.25)
    assert not stamp.float32_keeps_digits and stamp.float32_max_abs_error == 3.25
    lr = NumberTracker("float")
    lr.add(0.01)
    assert lr.float32_keeps_digits and not lr.float32_exact


# -- verdict rules on graphs built by hand ---------------------------------------------


def graph(
    *nodes: tuple[str, str],
    consts: dict | None = None,
    kinds: dict | None = None,
    ints: dict | None = None,
) -> CanonicalGraph:
    g = CanonicalGraph()
    for name, op in nodes:
        g.nodes[name] = (op, (), ())
        g.order.append(name)
        g.ops[name] = op
        g.raw[name] = name
    g.consts = dict(consts or {})
    g.const_kinds = dict(kinds or {})
    g.const_ints = dict(ints or {})
    return g


def ok(g: CanonicalGraph, lines: dict | None = None) -> TraceResult:
    return TraceResult(graph=g, line_of=dict(lines or {}))


def failed(error: str, where: str) -> TraceResult:
    return TraceResult(error=error, where=where)


BASE = graph(("x", "Placeholder"), ("mul", "Mul"))


def test_every_other_size_failing_means_fixed_by_the_code() -> None:
    bad = failed(
        "ValueError: Depth of input (4) is not a multiple of input depth of filter (3)", "m.py:16"
    )
    finding = dim_verdict(3, False, ok(BASE), {4: bad, 1: bad, None: ok(BASE)})
    assert finding.verdict == "fixed" and finding.where == "m.py:16"
    assert "Depth of input" in (finding.error or "")


def test_a_varied_dimension_cannot_be_fixed_by_the_code() -> None:
    bad = failed("ValueError: Dimensions must be equal", "m.py:3")
    assert dim_verdict(5, True, ok(BASE), {6: bad, 1: bad, None: ok(BASE)}).verdict == "read"


def test_sizes_that_do_not_trace_beside_ones_that_do_bound_a_free_dimension() -> None:
    rejected = failed(
        "ValueError: Negative dimension size caused by subtracting 2 from 1", "m.py:2"
    )
    finding = dim_verdict(8, True, ok(BASE), {9: ok(BASE), 1: rejected, None: ok(BASE)})
    assert finding.verdict == "bounded" and finding.where == "m.py:2"
    other = graph(("x", "Placeholder"), ("Squeeze", "Squeeze"), ("mul", "Mul"))
    finding = dim_verdict(8, True, ok(BASE), {9: ok(other), 1: rejected, None: ok(BASE)})
    assert finding.verdict == "read"


def test_gradient_nodes_may_differ_where_the_forward_graph_does_not() -> None:
    def with_gradient(*extra: str) -> TraceResult:
        g = graph(("x", "Placeholder"), ("mul", "Mul"), *((e, "Sum") for e in extra))
        g.gradient = set(extra) | {"gradient_tape/mul/Mul"}
        g.nodes["gradient_tape/mul/Mul"] = ("Mul", (), ())
        g.order.append("gradient_tape/mul/Mul")
        g.ops["gradient_tape/mul/Mul"] = "Mul"
        lines = {k: "m.py:9" for k in g.gradient}  # the tape.gradient line
        return ok(g, {**lines, "mul": "m.py:4"})

    base, at_one = with_gradient(), with_gradient("gradient_tape/add/Sum")
    assert dim_verdict(8, True, base, {9: base, 1: at_one, None: base}).verdict == "free"
    custom = with_gradient("gradient_tape/custom/Sum")
    custom.line_of["gradient_tape/custom/Sum"] = "m.py:20"  # a custom gradient's own line
    assert dim_verdict(8, True, base, {9: base, 1: custom, None: base}).verdict == "read"


def test_another_graph_at_size_one_is_a_read_with_the_branch_line() -> None:
    branch = graph(("x", "Placeholder"), ("Squeeze", "Squeeze"), ("mul", "Mul"))
    finding = dim_verdict(
        5, True, ok(BASE), {6: ok(BASE), 1: ok(branch, {"Squeeze": "m.py:8"}), None: ok(BASE)}
    )
    assert finding.verdict == "read" and finding.where == "m.py:8" and "Squeeze" in finding.reason


def test_a_failing_relaxed_trace_is_a_read() -> None:
    relaxed = failed("TypeError: 'NoneType' object cannot be interpreted as an integer", "m.py:5")
    finding = dim_verdict(5, True, ok(BASE), {6: ok(BASE), 1: ok(BASE), None: relaxed})
    assert finding.verdict == "read" and finding.where == "m.py:5"


def _with_const(
    value: str, kind: tuple, ints: tuple | None = None, op: str = "Const"
) -> CanonicalGraph:
    g = graph(
        ("x", "Placeholder"),
        ("c", op),
        ("mul", "Mul"),
        consts={"c": value} if op == "Const" else {},
        kinds={"c": kind} if op == "Const" else {},
        ints={"c": ints} if ints else {},
    )
    return g


def test_a_size_constant_the_relaxed_graph_keeps_is_a_read() -> None:
    kind = (1, (), (("RealDiv", 1),))
    results = {
        6: ok(_with_const("six", kind)),
        1: ok(_with_const("one", kind)),
        None: ok(_with_const("one", kind)),
    }
    assert dim_verdict(5, True, ok(_with_const("five", kind)), results).verdict == "read"


def test_a_size_constant_that_becomes_a_shape_op_is_free() -> None:
    kind = (3, (2,), (("Fill", 0),))
    results = {
        6: ok(_with_const("six", kind)),
        1: ok(_with_const("one", kind)),
        None: ok(_with_const("", kind, op="Shape")),
    }
    finding = dim_verdict(5, True, ok(_with_const("five", kind)), results)
    assert finding.verdict == "free" and "become ops" in finding.reason


def test_minus_one_for_the_unknown_size_is_not_a_read() -> None:
    kind = (3, (2,), (("Reshape", 1),))
    concrete = [_with_const(f"{n}", kind, (n, 4)) for n in (5, 6, 1)]
    relaxed = _with_const("unknown", kind, (-1, 4))
    assert marks_unknown(concrete, relaxed, "c")
    results = {6: ok(concrete[1]), 1: ok(concrete[2]), None: ok(relaxed)}
    assert dim_verdict(5, True, ok(concrete[0]), results).verdict == "free"
    wrong = _with_const("wrong", kind, (-1, 5))
    assert not marks_unknown(concrete, wrong, "c")


def test_other_user_lines_in_the_relaxed_graph_are_a_read() -> None:
    lines = {"mul": "m.py:4"}
    results = {6: ok(BASE, lines), 1: ok(BASE, lines), None: ok(BASE, {"mul": "m.py:6"})}
    finding = dim_verdict(5, True, ok(BASE, lines), results)
    assert finding.verdict == "read" and finding.where in ("m.py:4", "m.py:6")


def _numbers(*ops: str) -> Counter:
    return Counter((op, ()) for op in ops)


def test_number_dtype_from_the_scalar_spec_that_gives_the_original_graph() -> None:
    base = TraceResult(graph=BASE, number_ops=_numbers("Pow"))
    results = {
        "float32": TraceResult(graph=BASE, number_ops=_numbers("Pow")),
        "int32": failed("TypeError: Input 'y' of 'Pow' Op has type int32", "m.py:3"),
    }
    evidence = number_verdict("gamma", "int", base, results, ["float32"])
    assert (evidence.dtype, evidence.dtype_from, evidence.spec_matches) == ("float32", "spec", True)


def test_number_unused_when_two_dtypes_give_the_original_graph() -> None:
    base = TraceResult(graph=BASE, number_ops=_numbers("Mul"))
    same = TraceResult(graph=BASE, number_ops=_numbers("Mul"))
    evidence = number_verdict("epoch", "int", base, {"int32": same, "int64": same}, [])
    assert evidence.dtype_from == "unused" and evidence.dtype is None


def test_number_computed_on_in_python_keeps_the_constants_dtype_without_a_match() -> None:
    base = TraceResult(graph=BASE, number_ops=_numbers("AddV2"))
    extra = TraceResult(
        graph=graph(("Sub", "Sub")), line_of={"Sub": "m.py:9"}, number_ops=_numbers("AddV2", "Sub")
    )
    evidence = number_verdict(
        "t",
        "float",
        base,
        {"float32": extra, "float64": failed("TypeError", "m.py:9")},
        ["float32"],
    )
    assert (evidence.dtype, evidence.dtype_from, evidence.spec_matches) == (
        "float32",
        "constant",
        False,
    )
    assert "adds Sub" in evidence.reason and evidence.where == "m.py:9"
    assert number_difference(_numbers("A"), _numbers("A")) is None


# -- combining evidence -------------------------------------------------------------------


def dim(verdict: str, size: int = 3, **kw: object) -> DimEvidence:
    return DimEvidence(param="x", dim=2, verdict=verdict, size=size, **kw)  # type: ignore[arg-type]


def test_merging_dimension_verdicts_is_conservative() -> None:
    assert merge_dim(dim("free"), dim("free")).probes == 2
    assert merge_dim(dim("free"), dim("read", where="m.py:3")).verdict == "read"
    assert merge_dim(dim("unknown"), dim("fixed")).verdict == "fixed"
    same = merge_dim(dim("fixed", 3), dim("fixed", 3))
    assert same.verdict == "fixed"
    other = merge_dim(dim("fixed", 3), dim("fixed", 4))
    assert other.verdict == "read" and "depends on the instance" in other.reason
    assert merge_dim(dim("free"), dim("fixed")).verdict == "read"
    assert merge_dim(dim("free"), dim("bounded")).verdict == "bounded"


def test_merging_numbers_pools_values_and_keeps_a_found_dtype() -> None:
    found = NumberEvidence(
        "n",
        "int",
        dtype="int32",
        dtype_from="spec",
        spec_matches=True,
        count=2,
        min=1,
        max=4,
        exceeds_int32=False,
    )
    unused = NumberEvidence(
        "n",
        "int",
        dtype_from="unused",
        spec_matches=True,
        count=1,
        min=9,
        max=9,
        exceeds_int32=False,
    )
    merged = merge_number(unused, found)
    assert (merged.dtype, merged.dtype_from, merged.count, merged.min, merged.max) == (
        "int32",
        "spec",
        3,
        1,
        9,
    )
    other = NumberEvidence("n", "int", dtype="float32", dtype_from="spec", spec_matches=True)
    assert merge_number(found, other).dtype_from == "conflict"


def test_merging_numbers_keeps_a_followed_tensor_from_either_process() -> None:
    """One process saw `k` keep float32 beside `x`, another saw it follow `y`: followed."""

    def probed(follows: list[str], kept: list[str]) -> NumberEvidence:
        return NumberEvidence(
            "k",
            "float",
            "float32",
            "spec",
            True,
            follows=follows,
            kept_with=kept,
            dtype_probes=[f"`{p}` as float64" for p in follows + kept],
        )

    merged = merge_number(probed([], ["x", "y"]), probed(["y"], ["x"]))
    assert (merged.follows, merged.kept_with) == (["y"], ["x"])
    assert merged.dtype_probes == ["`x` as float64", "`y` as float64"]
    unprobed = NumberEvidence("k", "float", "float32", "spec", True)
    assert merge_number(unprobed, probed([], ["x"])).kept_with == ["x"]
    assert merge_number(unprobed, unprobed).follows is None


def test_merging_function_evidence() -> None:
    a = ProbeEvidence(
        rounds=1,
        probes=7,
        dims=[dim("free")],
        random=RandomEvidence(first_call_only=["RandomStandardNormal"]),
        skipped=["y:0: budget"],
    )
    b = ProbeEvidence(
        rounds=1,
        probes=3,
        dims=[DimEvidence("y", 0, "free", 8)],
        random=RandomEvidence(hidden=["RandomStandardNormal"]),
    )
    merged = merge_evidence(a, b)
    assert merged is not None and (merged.rounds, merged.probes) == (2, 10)
    assert merged.skipped == []  # probed later: no longer skipped
    assert merged.random == RandomEvidence(
        hidden=["RandomStandardNormal"]
    )  # in a steady state after all
    assert merge_evidence(None, b) is b


# -- the profile file -----------------------------------------------------------------------


def _record(probe: ProbeEvidence | None) -> FunctionRecord:
    return FunctionRecord("m.py", "f", 3, "a" * 64, True, calls=4, traces=4, probe=probe)


EVIDENCE = ProbeEvidence(
    rounds=1,
    probes=12,
    time_s=1.5,
    baseline_ops=23,
    dims=[
        DimEvidence("img", 0, "free", 10, varied=True, probed=[11, 1, None]),
        DimEvidence("img", 1, "free", 12, varied=True, probed=[13, 1, None]),
        DimEvidence(
            "img",
            2,
            "fixed",
            3,
            probed=[4, 1, None],
            error="ValueError: Depth of input (4) is not a multiple of input depth of filter (3)",
            where="model.py:16",
        ),
    ],
    numbers=[
        NumberEvidence(
            "steps",
            "int",
            "int32",
            "spec",
            True,
            ["int32"],
            count=4,
            min=1,
            max=4,
            exceeds_int32=False,
        ),
        NumberEvidence(
            "t",
            "float",
            None,
            "unknown",
            False,
            ["float32"],
            reason="the float32 scalar spec adds Sub",
            where="model.py:9",
            float32_keeps_digits=False,
            float32_max_abs_error=3.25,
        ),
    ],
    random=RandomEvidence(first_call_only=["RandomStandardNormal"]),
)


def test_evidence_round_trips_through_the_profile_file(tmp_path: Path) -> None:
    profile = Profile(
        functions=[_record(EVIDENCE)],
        probes=ProbeStats(budget_s=60.0, rounds=1, probes=12, time_s=1.5),
    )
    save_profile(profile, tmp_path / "p.json")
    data = json.loads((tmp_path / "p.json").read_text())
    assert (
        data["autosig_profile"] == 2
        and data["functions"][0]["probe"]["dims"][2]["verdict"] == "fixed"
    )
    assert load_profile(tmp_path / "p.json") == profile


def test_a_version_1_profile_reads_without_evidence(tmp_path: Path) -> None:
    old = {
        "autosig_profile": 1,
        "functions": [
            {"path": "m.py", "qualname": "f", "line": 3, "source_sha256": None, "editable": True}
        ],
    }
    (tmp_path / "old.json").write_text(json.dumps(old))
    profile = load_profile(tmp_path / "old.json")
    assert profile.functions[0].probe is None and profile.probes is None
    assert evidence_lines(profile.functions[0]) == []


def test_merging_profiles_merges_their_evidence() -> None:
    a = Profile(
        functions=[_record(EVIDENCE)], probes=ProbeStats(budget_s=60.0, rounds=1, probes=12)
    )
    other = ProbeEvidence(
        rounds=1, probes=4, dims=[DimEvidence("img", 2, "fixed", 4, error="E", where="model.py:16")]
    )
    b = Profile(functions=[_record(other)], probes=ProbeStats(budget_s=60.0, rounds=1, probes=4))
    merged, _ = merge_profiles([a, b])
    evidence = merged.functions[0].probe
    assert evidence is not None and evidence.dim("img", 2).verdict == "read"  # fixed at 3 and at 4
    assert merged.probes is not None and (merged.probes.processes, merged.probes.probes) == (2, 16)
    alone, _ = merge_profiles([a, Profile(functions=[_record(None)])])
    assert alone.functions[0].probe == EVIDENCE


def test_explain_lines() -> None:
    lines = evidence_lines(_record(EVIDENCE))
    assert lines[0].startswith(
        "img: dims 0, 1 free; dim 2 fixed by the code (model.py:16: ValueError: Depth of input"
    )
    assert (
        lines[1]
        == "steps: Python int -> int32 in the graph; an int32 scalar spec gives the same graph"
    )
    assert "float32 loses digits of the values seen (up to 3.25)" in lines[2]
    assert "no scalar spec gives the same graph at model.py:9" in lines[2]
    assert lines[3].endswith(
        "RandomStandardNormal only in the first call's trace (weights built then)"
    )
    assert lines[4] == "12 probe traces of the original code in 1 round"
    assert not any(re.search(r"\d s\b", line) for line in lines)  # no times: stable text


def test_stats_summary_says_what_the_budget_left_out() -> None:
    stats = ProbeStats(
        budget_s=2.0,
        rounds=3,
        probes=20,
        time_s=1.9,
        skipped_rounds=2,
        skipped_functions=["f (m.py:3)"],
    )
    assert "2 skipped for the budget (f (m.py:3))" in stats.summary()
    assert ProbeStats(enabled=False, note="disabled").summary() == "probes: off (disabled)"


def test_budget_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AUTOSIG_PROBE_BUDGET", raising=False)
    assert budget_from_env() == 60.0
    for text, budget in (
        ("0", 0.0),
        ("off", 0.0),
        ("2.5", 2.5),
        ("none", None),
        ("nonsense", 60.0),
    ):
        monkeypatch.setenv("AUTOSIG_PROBE_BUDGET", text)
        assert budget_from_env() == budget


# -- the forked copy ----------------------------------------------------------------------

COUNTER = {"n": 0}

needs_fork = pytest.mark.skipif(not fork_available(), reason="needs os.fork")


@needs_fork
def test_the_copy_changes_nothing_here_and_its_output_is_captured(
    capfd: pytest.CaptureFixture[str],
) -> None:
    def work(emit):  # noqa: ANN001, ANN202
        COUNTER["n"] += 1
        print("printed while tracing")
        os.write(2, b"C-level stderr\n")
        emit({"kind": "trace", "n": COUNTER["n"]})

    outcome = run_forked(work, deadline=time.monotonic() + 30, stall_s=30)
    assert outcome.status == "done", outcome
    assert COUNTER["n"] == 0
    assert {"kind": "trace", "n": 1} in outcome.messages
    output = next(m["text"] for m in outcome.messages if m["kind"] == "output")
    assert "printed while tracing" in output and "C-level stderr" in output
    captured = capfd.readouterr()
    assert "printed while tracing" not in captured.out + captured.err


@needs_fork
def test_the_copy_is_killed_at_the_deadline_and_when_it_stalls() -> None:
    def slow(emit):  # noqa: ANN001, ANN202
        emit({"kind": "trace"})
        time.sleep(60)

    start = time.monotonic()
    outcome = run_forked(slow, deadline=time.monotonic() + 1.0, stall_s=30)
    assert outcome.status == "timeout" and outcome.messages == [{"kind": "trace"}]
    stalled = run_forked(slow, deadline=time.monotonic() + 30, stall_s=1.0)
    assert stalled.status == "stalled"
    assert time.monotonic() - start < 20


@needs_fork
def test_a_crash_in_the_copy_is_reported() -> None:
    def broken(emit):  # noqa: ANN001, ANN202
        raise RuntimeError("boom")

    outcome = run_forked(broken, deadline=time.monotonic() + 30, stall_s=30)
    assert outcome.status == "crashed" and "RuntimeError: boom" in outcome.detail


def test_an_int_only_cast_to_float_takes_the_float_spec_when_it_drops_only_the_casts() -> None:
    base = TraceResult(graph=BASE, number_ops=_numbers("Cast", "RealDiv"))
    evidence = number_verdict(
        "n", "int", base, {"int32": base, "int64": failed("TypeError", "m.py:3")}, ["int32"]
    )
    assert (evidence.dtype, evidence.spec_matches) == ("int32", True)
    float_spec = TraceResult(graph=BASE, number_ops=_numbers("RealDiv"))
    out = cast_only_verdict(evidence, "float32", base, float_spec)
    assert (out.dtype, out.dtype_from, out.spec_matches) == ("float32", "cast", True)
    other = number_verdict("n", "int", base, {"int32": base}, ["int32"])
    changed = TraceResult(graph=BASE, number_ops=_numbers("RealDiv", "Floor"))
    assert cast_only_verdict(other, "float32", base, changed).dtype == "int32"
    assert cast_only_verdict(other, "float32", base, failed("TypeError", "m.py:3")).dtype == (
        "int32"
    )


def test_probe_proofs_read_every_dimension_and_number_once() -> None:
    """``probe_proofs``: the first record of a dimension or number counts (as
    ``ProbeEvidence.dim``/``number`` find it), ties are keyed by (path, dim), undecided
    and unprobed ones are left out, and a method's fixed verdict is about one instance."""
    from autosig.infer.probe_evidence import probe_proofs

    evidence = ProbeEvidence(
        dims=[
            DimEvidence("x", 1, "fixed", 3, tied=["y[0]:1"], relaxed_builds=True),
            DimEvidence("x", 1, "free", 3),  # a later record of the same dimension
            DimEvidence("y[0]", 1, "free", 3, tied=["x:1"]),
            DimEvidence("z", 0, "unknown", 2),
        ],
        numbers=[
            NumberEvidence("lr", "float", dtype="float32", dtype_from="spec", spec_matches=True),
            NumberEvidence("k", "int", reason="not probed"),
        ],
    )
    function = probe_proofs(evidence, method=False)
    assert set(function.dims) == {("x", 1), ("y[0]", 1)}
    fixed = function.dims[("x", 1)]
    assert not fixed.relax and fixed.pin_safe and fixed.tied == {("y[0]", 1): "y[0]:1"}
    assert probe_proofs(evidence, method=True).dims[("x", 1)].relax  # the relaxed trace builds
    assert set(function.numbers) == {"lr"} and function.numbers["lr"].dtype == "float32"
    assert probe_proofs(None, method=False) == probe_proofs(ProbeEvidence(), method=False)
