from empathos.errors import EmpathosError, ModelFatalError, RecordError


def test_error_line_names_file_field_and_problem() -> None:
    err = RecordError("must be a number", file="runs/a.json", field="epj.P_0_initial_deficit")
    assert err.line() == "runs/a.json: epj.P_0_initial_deficit: must be a number"
    assert str(err) == err.line()
    assert isinstance(err, EmpathosError)


def test_model_error_names_role_and_endpoint() -> None:
    err = ModelFatalError("authentication failed", role="judge", endpoint="http://127.0.0.1:9")
    assert "role=judge" in err.line()
    assert err.line().endswith("authentication failed")
