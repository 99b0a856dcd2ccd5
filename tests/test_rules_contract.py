"""protocol/RULES.md is the rules contract: every R-line in it has a test named after it in
tests/test_rules.py, no test is named after a rule that is not there, and where the
contract's own copy sits beside the clone (../shared/RULES.md) its R-lines read the same."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
RULES = ROOT / "protocol" / "RULES.md"
RULE_TESTS = ROOT / "tests" / "test_rules.py"
CONTRACT = ROOT.parent / "shared" / "RULES.md"

_LINE = re.compile(r"^- (R\d+\.\d+) ")


def rule_lines(path: Path) -> dict[str, str]:
    """Each R-line's number and its text (continuation lines joined, spaces folded)."""
    out: dict[str, str] = {}
    current = None
    for line in path.read_text(encoding="utf-8").splitlines():
        m = _LINE.match(line)
        if m:
            current = m.group(1)
            out[current] = line[2:].strip()
        elif current and line.startswith("  ") and line.strip():
            out[current] += " " + line.strip()
        else:
            current = None
    return {k: " ".join(v.split()) for k, v in out.items()}


def rules_with_tests() -> set[str]:
    names = re.findall(r"^def test_r(\d+)_(\d+)_", RULE_TESTS.read_text(encoding="utf-8"), re.M)
    return {f"R{a}.{b}" for a, b in names}


def test_the_rules_page_lists_every_rule_from_r1_1_to_r11_2() -> None:
    lines = rule_lines(RULES)
    assert "R1.1" in lines and "R11.2" in lines
    assert {"R3.4", "R6.2", "R10.4", "R10.5", "R10.6", "R10.7"} <= set(lines)
    assert "11 cards" in lines["R10.4"]


def test_every_r_line_has_a_test_named_after_it() -> None:
    missing = sorted(set(rule_lines(RULES)) - rules_with_tests(), key=lambda r: tuple(map(int, r[1:].split("."))))
    assert missing == [], f"rules without a test_rX_Y_... in tests/test_rules.py: {missing}"


def test_no_test_is_named_after_a_rule_that_does_not_exist() -> None:
    assert rules_with_tests() - set(rule_lines(RULES)) == set()


@pytest.mark.skipif(not CONTRACT.exists(), reason="the contract's copy (../shared/RULES.md) is not beside the clone")
def test_the_r_lines_read_as_in_the_contract() -> None:
    ours, theirs = rule_lines(RULES), rule_lines(CONTRACT)
    assert set(ours) == set(theirs)
    differ = {r: (ours[r], theirs[r]) for r in ours if ours[r] != theirs[r]}
    assert differ == {}
