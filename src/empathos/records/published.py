"""Importer for the published EMPA result format (EPM_SPEC section 7).

Real-world quirks handled: points without ``mdep_analysis`` (the run applied a zero
increment), partial ratings, extra keys, levels as ints or numeric strings, a free-text
termination reason in Chinese or English. The stored ``v_t`` stays the truth for the
dynamics; missing ratings are flagged on the evaluation. A level off its scale (out of range,
NaN, infinite, a bool, text such as "L1"), judge or IEDR, makes the file an error naming the
field: a made-up level must never be scored.
A file written by ``empathos run --protocol empa-release`` also holds an ``empathos`` object
(protocol, release version, scenario hash, the model calls with their tokens and costs), read
into the record.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeGuard

from empathos.epm import EPMConfig, EPMPoint, Termination, TerminationKind
from empathos.errors import InputError, RecordError
from empathos.records.model import (
    DialogueRecord,
    DirectorAction,
    Evaluation,
    IndicatorRating,
    InitialDeficit,
    ModelCallRecord,
    Turn,
)
from empathos.rubric import EMPATHY_RUBRIC, parse_level

__all__ = ["import_published", "is_published", "termination_kind_from_text"]

_MDEP_KEYS = [i.key for i in EMPATHY_RUBRIC.mdep]  # "C.Prog", "C.Neg", ...
_IEDR_KEYS = [i.key for i in EMPATHY_RUBRIC.iedr]

# Order matters: a reason naming collapse and regression together is a collapse.
_REASON_PATTERNS: tuple[tuple[str, TerminationKind], ...] = (
    (r"oscillat|振荡|震荡|来回|摇摆", TerminationKind.FAILURE_OSCILLATION),
    (r"collapse|崩溃|崩塌|连续.*负", TerminationKind.FAILURE_COLLAPSE),
    (r"stagnat|regress|停滞|倒退|退步|回退", TerminationKind.FAILURE_STAGNATION_REGRESSION),
    (r"geometric|几何", TerminationKind.SUCCESS_GEOMETRIC),
    (r"positional|位置|穿越", TerminationKind.SUCCESS_POSITIONAL),
    (r"companion|陪伴", TerminationKind.SUCCESS_COMPANIONSHIP),
    (r"director|导演|编剧", TerminationKind.DIRECTOR_STOP),
    (r"max(imum)?[ _]turns|timeout|time out|超时|最大轮", TerminationKind.TIMEOUT),
    (r"error|exception|错误|异常", TerminationKind.ERROR),
)


def is_published(data: object) -> bool:
    """True when a parsed JSON document looks like a published EMPA result file."""
    return isinstance(data, dict) and "epj" in data and "script_id" in data


def termination_kind_from_text(text: str) -> TerminationKind | None:
    """Map a free-text termination reason (Chinese or English) to a kind; None if unknown."""
    low = text.lower()
    for pattern, kind in _REASON_PATTERNS:
        if re.search(pattern, low):
            return kind
    return None


def _need(obj: Any, key: str, file: Path, where: str) -> Any:
    if not isinstance(obj, dict) or key not in obj or obj[key] is None:
        raise RecordError("required field is missing", file=file, field=f"{where}{key}")
    return obj[key]


def _finite(x: object) -> TypeGuard[int | float]:
    return isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x)


def _vector(value: Any, file: Path, field: str, dim: int = 3) -> tuple[float, ...]:
    ok = isinstance(value, list) and len(value) == dim
    if ok and all(_finite(x) for x in value):
        return tuple(float(x) for x in value)
    raise RecordError(
        f"expected a list of {dim} finite numbers, got {value!r:.60}", file=file, field=field
    )


def _number(obj: dict[str, Any], key: str, file: Path, field: str) -> float:
    value = obj.get(key)
    if _finite(value):
        return float(value)
    raise RecordError(f"expected a finite number, got {value!r:.40}", file=file, field=field)


def _ratings(
    raw: dict[str, Any],
    keys: list[str],
    sep_key: Callable[[str], str],
    file: Path,
    where: Callable[[str], str],
) -> dict[str, IndicatorRating]:
    """Ratings of ``keys`` found in ``raw``; a level off its indicator's scale (a number out of
    range, NaN, infinite, a bool or a non-numeric string such as "L1") is a RecordError
    naming ``where(key)``, the field it was read from."""
    out: dict[str, IndicatorRating] = {}
    for key in keys:
        base = sep_key(key)
        if f"{base}_level" not in raw:
            continue
        value = raw[f"{base}_level"]
        scale = list(EMPATHY_RUBRIC.indicator(key).scores)
        try:
            level = parse_level(value, field=key)
        except InputError:
            level = None
        if level is None or level not in scale:
            raise RecordError(
                f"level {value!r:.40} is not on the scale of {key} (allowed: {scale})",
                file=file,
                field=where(key),
            )
        out[key] = IndicatorRating(
            level=level,
            evidence=str(raw.get(f"{base}_evidence", "")),
            reasoning=str(raw.get(f"{base}_reasoning", "")),
        )
    return out


def _mdep_field(prefix: str) -> Callable[[str], str]:
    """Where the level of an MDEP indicator sits in a trajectory point."""
    return lambda key: f"{prefix}mdep_analysis.{key.replace('.', '_')}_level"


def _point(p: dict[str, Any], file: Path, field: str, prev_E: float) -> EPMPoint:
    if not isinstance(p, dict):
        raise RecordError(
            "a trajectory point must be an object", file=file, field=field.rstrip(".")
        )
    epm = p.get("epm") or {}
    if not isinstance(epm, dict):
        raise RecordError("must be an object", file=file, field=f"{field}epm")
    P = _vector(_need(p, "P_t", file, field), file, f"{field}P_t")
    v = _vector(_need(p, "v_t", file, field), file, f"{field}v_t")
    turn = _need(p, "turn", file, field)
    if not isinstance(turn, int) or isinstance(turn, bool) or turn < 0:
        raise RecordError(
            f"expected a turn number >= 0, got {turn!r:.40}", file=file, field=f"{field}turn"
        )
    E_total = _number(epm, "E_total", file, f"{field}epm.E_total")
    delta = epm.get("delta_E")
    align = epm.get("alignment", 0.0)
    if not _finite(align):
        align = _number(epm, "alignment", file, f"{field}epm.alignment")
    return EPMPoint(
        turn=turn,
        P=P,
        v=v,
        delta_E=float(delta) if _finite(delta) else E_total - prev_E,
        E_total=E_total,
        alignment=float(align),
        projection=_number(epm, "projection", file, f"{field}epm.projection"),
        p_norm=_number(epm, "P_norm", file, f"{field}epm.P_norm"),
        distance=_number(p, "distance", file, f"{field}distance"),
        in_zone=bool(p.get("in_zone", False)),
    )


def _evaluations(traj: list[Any], file: Path) -> tuple[EPMPoint, list[Evaluation]]:
    if not isinstance(traj, list) or not traj:
        raise RecordError("trajectory is empty or not a list", file=file, field="epj.trajectory")
    first = _point(traj[0], file, "epj.trajectory[0].", 0.0)
    if first.turn != 0:
        raise RecordError("the first point must be turn 0", file=file, field="epj.trajectory[0]")
    initial = first.model_copy(update={"delta_E": 0.0, "alignment": 0.0, "v": (0.0, 0.0, 0.0)})
    evals: list[Evaluation] = []
    prev_E = initial.E_total
    for i, p in enumerate(traj[1:], start=1):
        field = f"epj.trajectory[{i}]."
        state = _point(p, file, field, prev_E)
        prev_E = state.E_total
        flags: list[str] = []
        mdep = p.get("mdep_analysis")
        if not isinstance(mdep, dict):
            flags.append("ratings_missing")
            ratings: dict[str, IndicatorRating] = {}
        else:
            ratings = _ratings(
                mdep,
                _MDEP_KEYS,
                lambda k: k.replace(".", "_"),
                file,
                _mdep_field(field),
            )
            if len(ratings) < len(_MDEP_KEYS):
                flags.append("ratings_partial")
        evals.append(
            Evaluation(turn=state.turn, scored=True, ratings=ratings, state=state, flags=flags)
        )
    return initial, evals


def _object(obj: dict[str, Any], key: str, file: Path, field: str) -> dict[str, Any]:
    """``obj[key]`` when it is an object, {} when absent or empty; anything else is an error."""
    value = obj.get(key) or {}
    if not isinstance(value, dict):
        raise RecordError(f"expected an object, got {value!r:.40}", file=file, field=field)
    return value


def _iedr(epj: dict[str, Any], P0: tuple[float, ...], file: Path) -> InitialDeficit:
    details = _object(epj, "iedr_details", file, "epj.iedr_details")
    filled = _object(details, "filled_iedr", file, "epj.iedr_details.filled_iedr")
    detailed = _object(filled, "_detailed", file, "epj.iedr_details.filled_iedr._detailed")
    source = {**{f"{k}_level": v for k, v in filled.items() if k in _IEDR_KEYS}, **detailed}

    def where(key: str) -> str:
        if f"{key}_level" in detailed:
            return f"epj.iedr_details.filled_iedr._detailed.{key}_level"
        return f"epj.iedr_details.filled_iedr.{key}"

    ratings = _ratings(source, _IEDR_KEYS, lambda k: k, file, where)
    return InitialDeficit(ratings=ratings, P0=P0)


def _turns(history: Any, file: Path) -> tuple[list[Turn], list[DirectorAction]]:
    if not isinstance(history, list):
        raise RecordError("history must be a list", file=file, field="history")
    turns: list[Turn] = []
    director: list[DirectorAction] = []
    for item in history:
        if not isinstance(item, dict):
            continue
        role, content = item.get("role"), str(item.get("content", ""))
        if role == "actor":
            turns.append(Turn(index=len(turns) + 1, user=content))
        elif role == "test_model" and turns:
            turns[-1] = turns[-1].model_copy(update={"assistant": content})
            guidance = item.get("director_guidance")
            if guidance:
                director.append(
                    DirectorAction(turn=len(turns), action="guidance", detail=str(guidance))
                )
    return turns, director


def _victory_success(epj: dict[str, Any]) -> bool:
    va = epj.get("epm_victory_analysis")
    if not isinstance(va, dict):
        return False
    cond = va.get("conditions") or {}
    spatial = any((cond.get(k) or {}).get("achieved") for k in ("geometric", "positional"))
    return bool(spatial and (cond.get("energetic") or {}).get("achieved"))


def _success_kind(epj: dict[str, Any]) -> TerminationKind:
    """The success kind named by the victory analysis (positional when it names none)."""
    va = epj.get("epm_victory_analysis")
    primary = va.get("primary_victory_type") if isinstance(va, dict) else None
    if primary == "geometric":
        return TerminationKind.SUCCESS_GEOMETRIC
    return TerminationKind.SUCCESS_POSITIONAL


def _termination(
    data: dict[str, Any], epj: dict[str, Any], mark: dict[str, Any], total_turns: int
) -> tuple[Termination, bool, list[str]]:
    """How the dialogue ended (from its free-text reason), its success (from the victory
    analysis) and the import notes; a dialogue empathos recorded as an error stays one."""
    reason = str(data.get("termination_reason") or "")
    kind = termination_kind_from_text(reason)
    success = _victory_success(epj)
    notes: list[str] = []
    if kind is None:
        kind = _success_kind(epj) if success else TerminationKind.ERROR
        notes.append(f"termination reason not recognised: {reason[:80]!r}")
    if mark.get("error"):  # a dialogue empathos recorded as an error (never scored)
        kind, reason = TerminationKind.ERROR, str(mark["error"])
    return Termination(kind=kind, turn=total_turns, reason=reason), success, notes


def _epm_config(epj: dict[str, Any], params: dict[str, Any], file: Path) -> EPMConfig:
    """The settings the dialogue ran under: the reference preset, its alpha and K."""
    alpha = params.get("alpha", 0.1)
    if not _finite(alpha) or alpha <= 0:
        raise RecordError(
            f"expected a number > 0, got {alpha!r:.40}", file=file, field="epj.epm_params.alpha"
        )
    K = epj.get("K", 1)
    if not isinstance(K, int) or isinstance(K, bool) or K < 1:
        raise RecordError(f"expected a whole number >= 1, got {K!r:.40}", file=file, field="epj.K")
    return EPMConfig.preset("reference", alpha=float(alpha), eval_every=K)


def import_published(data: dict[str, Any], *, file: Path) -> DialogueRecord:
    """Convert one parsed published result file; errors name the file and field."""
    epj = _need(data, "epj", file, "")
    if not isinstance(epj, dict):
        raise RecordError(f"expected an object, got {epj!r:.40}", file=file, field="epj")
    scenario_id = str(_need(data, "script_id", file, ""))
    P0 = _vector(_need(epj, "P_0_initial_deficit", file, "epj."), file, "epj.P_0_initial_deficit")
    initial, evals = _evaluations(_need(epj, "trajectory", file, "epj."), file)
    if initial.P != P0:
        raise RecordError("P_t of turn 0 differs from P_0", file=file, field="epj.trajectory[0]")
    total_turns = data.get("total_turns", evals[-1].turn if evals else 0)
    if not isinstance(total_turns, int) or isinstance(total_turns, bool) or total_turns < 0:
        raise RecordError(f"bad value {total_turns!r}", file=file, field="total_turns")
    mark = _object(data, "empathos", file, "empathos")
    termination, success, notes = _termination(data, epj, mark, total_turns)
    turns, director = _turns(data.get("history", []), file)
    params = _object(epj, "epm_params", file, "epj.epm_params")
    calls = mark.get("model_calls") or []
    if not isinstance(calls, list):
        raise RecordError("expected a list", file=file, field="empathos.model_calls")
    extra = {k: v for k, v in mark.items() if k not in ("model_calls", "scenario_hash")}
    return DialogueRecord(
        source="empa-published",
        scenario_hash=str(mark["scenario_hash"]) if mark.get("scenario_hash") else None,
        model_calls=[ModelCallRecord.model_validate(c) for c in calls],
        scenario_id=scenario_id,
        model=str(data["test_model_name"]) if data.get("test_model_name") else None,
        roles={
            r: str(data[k])
            for r, k in (
                ("user", "actor_model"),
                ("judge", "judger_model"),
                ("director", "director_model"),
            )
            if data.get(k)
        },
        epm_config=_epm_config(epj, params, file),
        iedr=_iedr(epj, P0, file),
        initial_state=initial,
        turns=turns,
        evaluations=evals,
        director=director,
        total_turns=total_turns,
        termination=termination,
        success=success,
        created_at=str(data["timestamp"]) if data.get("timestamp") else None,
        metadata={
            "epm_params": params,
            "status": data.get("status"),
            "import_notes": notes,
            **extra,
        },
    )
