"""The parts of the Inspect task that need no dialogue: our requests as Inspect's (tools,
schemas, messages), Inspect's outputs as our replies, and the one-line errors of bad task
parameters, a missing role and a file that is not a log of the task."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("inspect_ai", reason="needs the inspect extra: pip install 'empathos[inspect]'")

from empa_server import RoleServer, model_name
from inspect_ai import eval as inspect_eval
from inspect_ai.model import ModelOutput, ModelUsage
from typer.testing import CliRunner

from empathos.cli.main import app
from empathos.errors import RecordError
from empathos.integrations.inspect import empa
from empathos.integrations.inspect.backend import inline_refs, raw_reply, tool_infos
from empathos.integrations.inspect.transcript import RECORD_KEY
from empathos.llm.types import json_schema_of
from empathos.rubric.forms import MDEPForm
from empathos.sandbox.actions import DIRECTOR_SPECS


def test_tools_keep_names_required_fields_and_choices() -> None:
    infos = {info.name: info for info in tool_infos([s.to_def() for s in DIRECTOR_SPECS])}
    assert set(infos) == {s.name for s in DIRECTOR_SPECS}
    memory = infos["reveal_memory"].parameters
    assert memory.required == ["period"]
    assert memory.properties["period"].enum == [
        "childhood", "adolescence", "young_adulthood", "current",
    ]  # fmt: skip
    stage = infos["reveal_story_stage"].parameters.properties["stage"]
    assert (stage.type, stage.minimum, stage.maximum) == ("integer", 1, 4)


def test_schema_references_are_inlined_and_recursion_refused() -> None:
    schema = inline_refs(json_schema_of(MDEPForm))
    text = json.dumps(schema)
    assert "$ref" not in text and "$defs" not in text
    assert schema["properties"]["C.Neg"]["properties"]["level"]["enum"] == [0, -1, -2]
    loop = {"$defs": {"A": {"properties": {"a": {"$ref": "#/$defs/A"}}}}, "$ref": "#/$defs/A"}
    with pytest.raises(ValueError, match="cannot inline"):
        inline_refs(loop)


def test_outputs_become_our_replies() -> None:
    cut = raw_reply(ModelOutput.from_content("m", "half a sent", stop_reason="max_tokens"))
    assert (cut.content, cut.finish_reason) == ("half a sent", "length")
    assert raw_reply(ModelOutput.from_content("m", "")).content is None
    arguments = {"observation": "o", "reason": "r"}
    call = raw_reply(ModelOutput.for_tool_call("m", "observe", arguments))
    assert call.content is not None  # Inspect's own text beside the call
    [tool] = call.tool_calls
    assert tool.name == "observe" and json.loads(tool.arguments) == arguments
    assert call.finish_reason == "tool_calls"


def test_prefix_cache_hits_in_inspects_usage_are_our_cached_prompt_tokens() -> None:
    output = ModelOutput.from_content("m", "hello")
    output.usage = ModelUsage(
        input_tokens=10, output_tokens=2, total_tokens=47,
        input_tokens_cache_read=30, input_tokens_cache_write=5,
    )  # fmt: skip
    reply = raw_reply(output)
    assert (reply.input_tokens, reply.cached_tokens, reply.output_tokens) == (45, 30, 2)


@pytest.mark.parametrize(
    ("args", "line"),
    [
        ({"cases": "nope"}, "empathos/empa: cases: unknown scenario ids: nope"),
        ({"max_turns": 0}, "empathos/empa: -T max_turns: Input should be greater than or equal"),
        ({"max_turns": 3, "min_turns": 9}, "empathos/empa: sandbox:"),
        ({"system_prompt": "/no/such/file"}, "/no/such/file: system_prompt: cannot read"),
    ],
)
def test_a_bad_task_parameter_is_one_line(args: dict[str, object], line: str) -> None:
    with pytest.raises(Exception) as info:
        empa(**args)  # type: ignore[arg-type]
    assert info.type.__name__ == "PrerequisiteError"  # Inspect's CLI prints the message alone
    message = info.value.message  # type: ignore[attr-defined]
    assert isinstance(message, str) and line in message and "\n" not in message


def test_a_missing_role_stops_the_eval_naming_its_flag(server: RoleServer, tmp_path: Path) -> None:
    [log] = inspect_eval(
        empa(cases="en-01-sourdough", max_turns=2),
        model=model_name("tested"),
        model_roles={"user": model_name("user"), "judge": model_name("judge")},
        log_dir=str(tmp_path),
        display="none",
    )
    assert log.status == "error" and log.error is not None
    assert "no model for the role(s) director: pass --model-role director=MODEL" in (
        log.error.message
    )
    assert not server.requests("tested")  # stopped before any call


def test_a_dialogue_that_ends_as_error_is_an_error_of_its_sample(
    server: RoleServer, tmp_path: Path
) -> None:
    """The simulated user answers without text (no Inspect error: our client refuses the
    reply): the dialogue ends as error, so does the sample, with the record kept. The
    rule-based director needs no director model."""
    [log] = inspect_eval(
        empa(cases="en-05-choir", director="rules", max_turns=3),
        model=model_name("tested"),
        model_roles={"user": model_name("user"), "judge": model_name("judge")},
        fail_on_error=False,
        log_dir=str(tmp_path),
        display="none",
    )
    [sample] = log.samples or []
    assert sample.error is not None
    assert "the reply holds no text" in sample.error.message
    record = sample.store[RECORD_KEY]
    assert record["termination"]["kind"] == "error" and record["total_turns"] == 1
    assert record["director"][0]["source"] == "rules"


def test_import_of_a_file_that_is_not_a_log_of_the_task(tmp_path: Path) -> None:
    bad = tmp_path / "notes.eval"
    bad.write_text("not a zip", encoding="utf-8")
    res = CliRunner().invoke(app, ["import-inspect", str(bad), "--out", str(tmp_path / "o")])
    assert isinstance(res.exception, RecordError)
    assert res.exception.line().startswith(f"{bad}: not an Inspect .eval log (not a zip archive)")
    res = CliRunner().invoke(app, ["import-inspect", str(tmp_path / "gone.eval"), "--out", "o"])
    assert isinstance(res.exception, RecordError) and "no such file" in res.exception.line()
