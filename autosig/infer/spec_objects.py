"""Objects TensorFlow traces by their TypeSpec (tf.data iterators and other composites).

No spec node can be written for them, so they always block a signature; but their
recorded spec text shows what varied (a batch dimension, usually), which is what the
report and the advice for library code need.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from autosig.infer.leaf import Leaf
from autosig.infer.values import Observation
from autosig.infer.wording import plural
from autosig.specs import Shape
from autosig.supertype import varying_dimensions

SPEC_SHAPE = re.compile(r"shape=(?:TensorShape\()?\(([^()]*)\)")
"""A shape inside a TypeSpec's repr: ``shape=(16, 6)`` or ``shape=TensorShape([16, 6])``."""


def spec_object_leaf(observations: Sequence[Observation], where: str, name: str) -> Leaf:
    """An object of type ``name`` whose every observation carries its TypeSpec's repr."""
    specs: Counter[str] = Counter()
    for value, calls in observations:
        specs[str(value["spec"])] += calls
    per_spec = [_spec_shapes(spec) for spec in specs]
    dims: set[int] = set()
    if len({len(shapes) for shapes in per_spec}) == 1:
        for position in range(len(per_spec[0])):
            dims.update(varying_dimensions([shapes[position] for shapes in per_spec]))
    cause = None
    if len(specs) > 1:
        listed = ", ".join(map(str, sorted(dims)))
        what = f"dimension {listed} varies" if len(dims) == 1 else f"dimensions {listed} vary"
        cause = f"{where}'s element spec changes ({len(specs)} distinct specs" + (
            f"; {what})" if dims else ")"
        )
    total = sum(c for _, c in observations)
    return Leaf(
        blocker=f"{where} is a {name}: TensorFlow traces it by its element spec, which a "
        "signature cannot name",
        evidence=[f"{name}, {plural(total, 'call')}, {plural(len(specs), 'distinct spec')}"],
        cause=cause,
        variety=len(specs),
        dims=frozenset(dims),
    )


def _spec_shapes(spec_repr: str) -> list[Shape]:
    shapes: list[Shape] = []
    for match in SPEC_SHAPE.finditer(spec_repr.replace("[", "(").replace("]", ")")):
        dims = [d.strip() for d in match.group(1).split(",") if d.strip()]
        shapes.append(
            tuple(
                None if d == "None" else int(d)
                for d in dims
                if d.lstrip("-").isdigit() or d == "None"
            )
        )
    return shapes
