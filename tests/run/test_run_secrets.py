"""API keys are read from the variable a role names and never written or printed anywhere."""

from __future__ import annotations

from pathlib import Path

from run_helpers import empathos, index_rows, manifest, openai_roles, served, write_config

from empathos.run.manifest import redact_url

FAKE_KEY = "sk-fake-5b1e8c0d2a7f4e6b"
KEY_VAR = "EMPATHOS_TEST_FAKE_KEY"


def test_the_key_never_reaches_files_or_output(tmp_path: Path) -> None:
    with served("scripted", tmp_path) as url:
        roles = openai_roles(url, api_key_env=KEY_VAR)
        config = write_config(
            tmp_path / "run.yaml", roles=roles, cases="en-01-sourdough,zh-01-old-house", max_turns=2
        )
        out = tmp_path / "out"
        done = empathos(
            "run", "--config", config, "--out", out, cwd=tmp_path, env={KEY_VAR: FAKE_KEY}
        )
    assert done.returncode == 0, done.stderr
    assert len(index_rows(out)) == 2
    assert manifest(out)["config"]["roles"]["judge"]["api_key_env"] == KEY_VAR
    assert FAKE_KEY not in done.stdout + done.stderr
    files = [p for p in out.rglob("*") if p.is_file()]
    assert len(files) >= 4  # manifest, index, two records
    for path in files:
        assert FAKE_KEY.encode() not in path.read_bytes(), path


def test_an_unset_key_fails_at_start_naming_role_and_variable(tmp_path: Path) -> None:
    roles = openai_roles("http://127.0.0.1:9/v1")
    roles["judge"]["api_key_env"] = KEY_VAR
    config = write_config(tmp_path / "run.yaml", roles=roles)
    done = empathos("run", "--config", config, "--out", tmp_path / "out", cwd=tmp_path)
    assert done.returncode == 2
    line = done.stderr.strip()
    assert line.startswith("error: ") and "\n" not in line
    assert KEY_VAR in line and "role judge" in line
    assert not (tmp_path / "out").exists()  # nothing was started


def test_addresses_lose_credentials_and_queries_in_the_manifest() -> None:
    assert redact_url("https://bob:pw@api.example.com:8443/v1?key=abc") == (
        "https://api.example.com:8443/v1"
    )
    assert redact_url("http://127.0.0.1:8000/v1") == "http://127.0.0.1:8000/v1"
