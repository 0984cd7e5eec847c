"""Secrets come back in other spellings than the one they were given in, and each is scrubbed.

A URL password typed percent-encoded (``p%40ss%3Aw0rd``) came back through an endpoint's error body
and was stored in ``responses.error_message``, ``runs.summary`` and Prefect's database; so did the
API key with its first characters cut off. Now the typed, decoded and percent-encoded forms, the
Basic token and any run of 8 or more characters of a secret are replaced.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

import duckdb
from equilens.tasks.config import parse_config
from equilens.tasks.llm.base import scrub_secrets

from tests.fakes.openai_server import FakeOpenAIServer, openai_server  # noqa: F401 - fixture
from tests.prefect_server import shown_for_run

TYPED = "p%40ss%3Aw0rd"  # the password as written in the URL
PASSWORD = "p@ss:w0rd"
KEY = "k3yV4lue-0123456789abcdef-Zq"  # an environment variable without a secret-looking name holds it
BASIC = base64.b64encode(f"alice:{PASSWORD}".encode()).decode()
ECHOED = {  # what a careless server echoes back, each a leak
    "typed": TYPED, "decoded": PASSWORD, "lower-case hex": "p%40ss%3aw0rd", "basic token": BASIC,
    "key without its first characters": KEY[4:], "key without its last characters": KEY[:-5],
    "key middle": KEY[6:20],
}


def _leaks(text: str) -> list[str]:
    return [name for name, value in ECHOED.items() if value in text] + (["key"] if KEY in text else [])


def test_scrub_secrets_replaces_every_spelling_and_any_run_of_eight_characters() -> None:
    secrets = [PASSWORD, TYPED, f"alice:{PASSWORD}", BASIC, KEY]
    text = " | ".join(f"{name}: {value}" for name, value in ECHOED.items()) + " | plain words stay"
    out = scrub_secrets(text, secrets)
    assert _leaks(out) == [], out
    assert "plain words stay" in out and "typed: ***" in out
    assert scrub_secrets("seven k3yV4lu chars and k3yV4lue eight", [KEY]) == "seven k3yV4lu chars and *** eight"


def test_no_spelling_of_a_secret_reaches_duckdb_the_summary_or_prefect(prefect_harness, openai_server,  # noqa: F811
                                                                       tmp_path: Path, monkeypatch) -> None:
    from equilens.flows.counterfactual import counterfactual_assessment

    monkeypatch.setenv("EQUILENS_FORMS_KEY", KEY)

    def echo_credentials(body: dict) -> tuple[str, dict] | None:
        if "nurse" not in body["messages"][-1]["content"]:
            return None
        sent = openai_server.headers[-1].get("authorization", "")
        message = f"denied ({sent}): " + "; ".join(f"{name} {value}" for name, value in ECHOED.items())
        return "500", {"status": 401, "message": message}

    openai_server.fault_for = echo_credentials
    url = openai_server.base_url.replace("http://", f"http://alice:{TYPED}@")
    cfg = parse_config({
        "name": "forms", "prompts": {"items": ["Is he a good nurse?", "Is she a good teacher?"]},
        "counterfactual": {"attributes": ["gender"], "detect_names": False},
        "llm": {"provider": "openai", "model": "fake", "base_url": url, "api_key_env": "EQUILENS_FORMS_KEY",
                "max_retries": 0, "timeout": 10},
        "metrics": {"bootstrap_resamples": 20},
        "storage": {"duckdb_path": str(tmp_path / "e.duckdb"), "reports_dir": str(tmp_path / "reports")},
    })
    result = counterfactual_assessment(cfg)
    assert openai_server.headers and any(h.get("authorization") for h in openai_server.headers)
    with duckdb.connect(str(tmp_path / "e.duckdb"), read_only=True) as con:
        failed = con.execute("SELECT error_message FROM responses WHERE NOT ok").fetchall()
        tables = [t for (t,) in con.execute("SELECT table_name FROM information_schema.tables").fetchall()]
        stored = " ".join(str(con.execute(f'SELECT * FROM "{t}"').fetchall()) for t in tables)
        (summary,) = con.execute("SELECT summary FROM runs WHERE run_id = ?", [result["run_id"]]).fetchone()
    assert failed and all("denied" in m and "***" in m for (m,) in failed), failed  # the errors are kept, scrubbed
    assert _leaks(stored) == [] and _leaks(summary or "") == []
    assert _leaks(json.dumps(result, default=str)) == []
    for path in (tmp_path / "reports").rglob("*"):
        assert _leaks(path.read_text(encoding="utf-8", errors="replace")) == [], path
    runs, logs, artifacts = shown_for_run(result["run_id"])
    assert runs and artifacts
    shown = (json.dumps([(r.parameters, r.state.message if r.state else None) for r in runs], default=str)
             + " ".join(log.message for log in logs) + " ".join(str(a.data) + str(a.description) for a in artifacts))
    assert _leaks(shown) == []


def test_a_key_sharing_characters_with_another_secret_is_still_scrubbed_whole() -> None:
    """A run cut inside an unregistered key left "key sk-liveKEY***abcdef": too little of the key's
    shape for the key pattern to find."""
    from equilens.tasks.llm.base import scrub_secrets

    out = scrub_secrets("key sk-liveKEY0123456789abcdef here", ["sk-otherTEST0123456789"])
    assert "liveKEY" not in out and "abcdef" not in out and out.startswith("key ***")
