"""Golden results: the tournaments of tests/golden/configs/ publish exactly what
tests/golden/expected/ holds (tools/golden.py; clock-dependent fields aside), and `verify`
passes every one of them: formats, table sizes, duplicate and plain deals, a variant, a
disqualified entrant, both early stops and a league whose field changed."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("golden", ROOT / "tools" / "golden.py")
golden = importlib.util.module_from_spec(_spec)
assert _spec.loader is not None
_spec.loader.exec_module(golden)


@pytest.mark.parametrize("scenario", list(golden.SCENARIOS))
def test_golden_results_are_unchanged_and_verify(scenario: str, tmp_path: Path) -> None:
    assert golden.differences(scenario, tmp_path) == []
    report = (golden.EXPECTED / scenario / "verify.txt").read_text()
    assert "FAIL" not in report and report.count("\nok ") >= 5, report
