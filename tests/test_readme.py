"""The README's promises stay true: its rule table is generated from the rules' own docs."""

from __future__ import annotations

from pathlib import Path

from autosig.rules.registry import markdown_table

README = Path(__file__).resolve().parent.parent / "README.md"


def test_rule_table_is_generated_from_the_rules() -> None:
    assert markdown_table().strip() in README.read_text(encoding="utf-8")


def test_readme_opens_with_the_two_commands() -> None:
    text = README.read_text(encoding="utf-8")
    first_block = text.split("```bash", 1)[1].split("```", 1)[0]
    commands = [line.split("#")[0].strip() for line in first_block.strip().splitlines()]
    assert commands == ["bash scripts/demo.sh", "bash scripts/test.sh"]
    root = README.parent
    assert (root / "scripts" / "demo.sh").exists() and (root / "scripts" / "test.sh").exists()
    assert "scripts/test.sh" in (root / ".ci" / "run").read_text()
