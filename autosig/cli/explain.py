"""``autosig explain [PROFILE]``: why each tf.function retraced, from a recorded profile.

The advice names what ``autosig fix --profile`` will really do (``explain.advice``).
Static: no TensorFlow, no user code.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

import click

from autosig.errors import AutosigError
from autosig.explain.advice import fix_plans
from autosig.explain.retraces import explain_profile, render_json, render_text
from autosig.profile.format import load_profile
from autosig.profile.locate import missing_profile_hint

DEFAULT_PROFILE = Path(".autosig/profile.json")


@click.command(
    "explain",
    context_settings={"help_option_names": ["-h", "--help"]},
    epilog="""\b
Examples:
  autosig profile -- python train.py && autosig explain
  autosig explain runs/profile.json --format json
  autosig explain --all          # list every trace, not just the first 20 per function
""",
)
@click.argument("profile", required=False, type=click.Path(path_type=Path), default=DEFAULT_PROFILE)
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="Output format.",
)
@click.option("--all", "show_all", is_flag=True, help="List every trace of every function.")
def command(profile: Path, output_format: str, show_all: bool) -> None:
    """Explain from a profile why each function retraced.

    Per function, most tracing time first: calls, traces, time spent tracing, number of
    tf.function objects, and for each retrace one line naming the parameter and what
    changed since the nearest earlier trace (a varying dimension, a dtype, a Python
    value, a new object). A summary line per cause says how to remove it: when the
    function's source file is found, that advice is what 'autosig fix --profile' will
    really do (an input_signature, a scalar spec, or reduce_retracing=True and why),
    planned from the current source and config exactly as fix plans it. Functions
    from installed libraries (Keras' train_function ...) are marked [library]; the
    advice is then about how to call them.

    'probe:' lines give what probe traces of the original code showed (profiles
    written by 'autosig profile' since format 2): per tensor argument, which
    dimensions are free, fixed by the code or read (with the error and the line);
    per Python number, the dtype TensorFlow gave it; the stateful random ops.

    PROFILE defaults to .autosig/profile.json (written by 'autosig profile'). A
    partial profile (the recorded command failed or was interrupted) is said to be
    one on the first line (JSON: "partial" and "exit_code").
    Exit codes: 0 done, 2 the profile is missing, corrupt or of another version.
    """
    try:
        data = load_profile(profile)
    except AutosigError as exc:
        raise AutosigError(
            exc.message + missing_profile_hint(profile, use="autosig explain {}"), exc.path
        ) from None
    plans = fix_plans(
        data, profile, warn=lambda text: click.echo(f"autosig: warning: {text}", err=True)
    )
    explanations = explain_profile(data, str(profile), plans)
    stale = sorted({plan.qualname for plan in plans.values() if plan.stale})
    if stale:
        click.echo(
            f"autosig: warning: {profile}: stale for {', '.join(stale)} (changed since it was "
            "profiled): 'autosig fix --profile' refuses "
            f"{'it' if len(stale) == 1 else 'them'}; re-run 'autosig profile'",
            err=True,
        )
    note = data.partial_note()
    if output_format == "json":
        report = render_json(explanations, str(profile))
        report["partial"] = data.partial
        report["exit_code"] = data.exit_code
        report["stale"] = stale
        report["probes"] = None if data.probes is None else asdict(data.probes)
        if note is not None:
            report["note"] = note
        click.echo(json.dumps(report, indent=1))
    else:
        if note is not None:
            click.echo(f"note: {profile}: {note}")
        click.echo(render_text(explanations, limit=None if show_all else 20), nl=False)
        if data.probes is not None and (data.probes.rounds or not data.probes.enabled):
            click.echo(data.probes.summary())
