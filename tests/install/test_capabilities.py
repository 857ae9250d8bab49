"""The capability table: recorded observations merged into the package data and the docs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from colony_tasks.install import capabilities as caps
from tests.agents.capabilities import OUT, record


def test_record_appends_a_line_only_when_asked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    out = tmp_path / "results.jsonl"
    monkeypatch.delenv(OUT, raising=False)
    record("gemini", "0.61.0", "briefing", "yes")
    assert not out.exists()
    monkeypatch.setenv(OUT, str(out))
    record("gemini", "0.61.0", "briefing", "yes")
    record("qwen", "0.24.4", "mcp_tools", "yes")
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    assert lines == [
        {"client": "gemini", "version": "0.61.0", "capability": "briefing", "value": "yes"},
        {"client": "qwen", "version": "0.24.4", "capability": "mcp_tools", "value": "yes"},
    ]
    with pytest.raises(ValueError, match="unknown capability"):
        record("qwen", "0.24.4", "telepathy", "yes")


def test_merge_keeps_a_version_s_cells_and_starts_a_new_version_fresh():
    line = {"client": "gemini", "version": "0.61.0", "capability": "briefing", "value": "yes"}
    table = caps.merge({}, [line, {**line, "capability": "warn_after", "value": "after"}])
    again = caps.merge(table, [{**line, "capability": "mcp_tools", "value": "yes"}])
    assert again["gemini"]["cells"] == {
        "briefing": "yes",
        "warn_after": "after",
        "mcp_tools": "yes",
    }
    newer = caps.merge(again, [{**line, "version": "0.62.0"}])
    assert newer["gemini"] == {"version": "0.62.0", "cells": {"briefing": "yes"}}


def test_unmeasured_cells_say_so_and_the_docs_section_is_rewritten_in_place():
    table = {"qwen": {"version": "0.24.4", "cells": {"briefing": "yes | system prompt"}}}
    docs = f"# Clients\n\nIntro.\n\n{caps.BEGIN}\nold table\n{caps.END}\n\nAfter.\n"
    text = caps.rewrite_docs(docs, table)
    assert text.startswith("# Clients\n\nIntro.\n\n") and text.endswith(f"{caps.END}\n\nAfter.\n")
    assert "old table" not in text
    (row,) = [x for x in text.splitlines() if x.startswith("| Qwen Code")]
    cells = [c.strip() for c in row.strip("|").split(" | ")]
    assert cells[:3] == ["Qwen Code", "0.24.4", "yes \\| system prompt"]
    assert cells[3:] == [caps.NOT_MEASURED] * (len(caps.CAPABILITIES) - 1)
    assert caps.rewrite_docs(text, table) == text


def test_the_generator_merges_results_into_data_and_docs(tmp_path: Path):
    results = tmp_path / "results.jsonl"
    line = {"client": "claude", "version": "2.1.330", "capability": "mid_turn", "value": "yes"}
    results.write_text(json.dumps(line) + "\n")
    data, docs = tmp_path / "capabilities.json", tmp_path / "clients.md"
    args = ["--from", str(results), "--data", str(data), "--docs", str(docs)]
    assert caps.main(args) == 0
    assert json.loads(data.read_text()) == {
        "claude": {"version": "2.1.330", "cells": {"mid_turn": "yes"}}
    }
    assert "| Claude Code | 2.1.330 |" in docs.read_text()


def test_doctor_rows_name_each_installed_client_and_what_is_not_measured():
    table = {"gemini": {"version": "0.61.0", "cells": {"briefing": "yes"}}}
    gemini, qwen = caps.rows_for(["gemini", "qwen"], table)
    assert gemini.startswith("Gemini CLI 0.61.0: briefing at start: yes; delta per turn: not")
    assert qwen == "Qwen Code: not measured by the agents suite"


def test_the_shipped_table_holds_only_known_capabilities():
    for row in caps.load().values():
        assert set(row["cells"]) <= set(caps.CAPABILITIES)
