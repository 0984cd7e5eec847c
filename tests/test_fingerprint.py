"""Cache fingerprints follow the data files the stages really read."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from equilens.tasks.assessments.stereotype.stages import stereotype_data_fingerprint
from equilens.tasks.inputs.lexicon import LEXICON_DIR
from equilens.tasks.storage.fingerprint import lexicon_fingerprint


def test_default_lexicon_fingerprint_does_not_depend_on_the_working_directory(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    here = lexicon_fingerprint(None)
    monkeypatch.chdir(tmp_path)  # "data/lexicons" relative to this directory does not exist
    assert lexicon_fingerprint(None) == here != "missing"


def test_editing_a_lexicon_changes_the_fingerprint(tmp_path: Path) -> None:
    copy = tmp_path / "lexicons"
    shutil.copytree(LEXICON_DIR, copy)
    before = lexicon_fingerprint(str(copy))
    (copy / "gender.yaml").write_text((copy / "gender.yaml").read_text() + "\n# edited\n")
    assert lexicon_fingerprint(str(copy)) != before


def test_stereotype_fingerprint_covers_default_targets_and_stop_words(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from equilens.tasks.assessments.stereotype import metrics as st

    before = stereotype_data_fingerprint(None, None)
    stop = tmp_path / "stopwords.txt"
    stop.write_text(st.STOPWORDS_FILE.read_text() + "extra\n")
    monkeypatch.setattr(st, "STOPWORDS_FILE", stop)
    assert stereotype_data_fingerprint(None, None) != before
    targets = tmp_path / "targets.yaml"
    targets.write_text("adjective: [kind]\n")
    assert stereotype_data_fingerprint(str(targets), None) != stereotype_data_fingerprint(None, None)


def test_notes_beside_the_lexicons_do_not_change_their_fingerprint(tmp_path: Path) -> None:
    """Editing SOURCES.md or a build script re-ran every cached expansion; only the word lists count."""
    (tmp_path / "gender.yaml").write_text("a: 1\n")
    (tmp_path / "NOTES.md").write_text("notes\n")
    (tmp_path / "build.py").write_text("x = 1\n")
    before = lexicon_fingerprint(str(tmp_path))
    (tmp_path / "NOTES.md").write_text("more notes\n")
    (tmp_path / "build.py").write_text("x = 2\n")
    assert lexicon_fingerprint(str(tmp_path)) == before
    (tmp_path / "gender.yaml").write_text("a: 2\n")
    assert lexicon_fingerprint(str(tmp_path)) != before
