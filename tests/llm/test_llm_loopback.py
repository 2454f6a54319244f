"""The loopback caching server's structured answers: a fixed answer per schema name where one
is given (the prompt benchmark's IEDR form), the first valid instance of the schema else."""

from __future__ import annotations

import json

from empathos.llm.loopback import CachingServer

SCHEMA = {
    "type": "object",
    "properties": {"level": {"enum": [0, 1, 2, 3], "type": "integer"}},
    "required": ["level"],
}


def _body(name: str) -> bytes:
    fmt = {"type": "json_schema", "json_schema": {"name": name, "schema": SCHEMA}}
    return json.dumps({"model": "m", "response_format": fmt, "messages": []}).encode()


def test_a_named_form_gets_its_fixed_answer_the_others_the_first_instance() -> None:
    server = CachingServer(forms={"IEDRForm": '{"level": 2}'})  # not started: answer() only
    fixed = server.answer(_body("IEDRForm"))["choices"][0]["message"]["content"]
    first = server.answer(_body("MDEPForm"))["choices"][0]["message"]["content"]
    assert json.loads(fixed) == {"level": 2}
    assert json.loads(first) == {"level": 0}
    assert [ex.body["response_format"]["json_schema"]["name"] for ex in server.exchanges] == [
        "IEDRForm",
        "MDEPForm",
    ]
