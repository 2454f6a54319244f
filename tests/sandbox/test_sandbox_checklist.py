"""The director's victory checklist says what the termination rule will decide (issue 11,
part 8): the same rounding, the same strict or non-strict comparisons, the active preset."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from empathos.epm import EPMConfig, EPMState, init_state, step, victory
from empathos.rubric import EMPATHY_RUBRIC, action_vectors
from empathos.sandbox import DialogueState
from empathos.sandbox.state import StatePacket, state_packet
from empathos.scenarios import load_builtin

SCENARIO = load_builtin().scenarios[0]
REF = EPMConfig.preset("reference", min_turns=0)
PAPER = EPMConfig.preset("paper", min_turns=0)
mdep_rows = st.tuples(*[st.sampled_from(i.levels) for i in EMPATHY_RUBRIC.mdep])


def _packet(epm: EPMState, cfg: EPMConfig) -> StatePacket:
    state = DialogueState(scenario=SCENARIO, language="en", epm_config=cfg, turn=epm.turn, epm=epm)
    return state_packet(state)


def _says_victory(p: StatePacket) -> bool:
    spatial = p.energy_ok and (p.near_origin or p.direction_ok)
    return p.min_turns_reached and (spatial or p.in_zone)


def test_energy_is_compared_rounded_as_the_rule_compares_it() -> None:
    # r0 = 5, eps_energy = 5.00; E_total = 0.8 * 6.245 = 4.996 rounds to 5.00: a victory.
    epm = step(init_state([-3.0, -4.0, 0.0], REF), [0.0, 6.245, 0.0], REF)
    assert epm.last.E_total < 5.0
    assert victory(epm, REF) is not None
    packet = _packet(epm, REF)
    assert packet.energy_ok and _says_victory(packet)


def test_paper_checklist_uses_the_paper_rule() -> None:
    # Under paper the energy must exceed r0 strictly and the second condition is alignment.
    cfg = PAPER.model_copy(update={"in_zone_success": False})
    epm = step(init_state([-3.0, -4.0, 0.0], cfg), [3.0, 4.0, 0.0], cfg)  # straight home
    assert epm.last.E_total == 5.0 and victory(epm, cfg) is None  # 5 is not > 5
    packet = _packet(epm, cfg)
    assert not packet.energy_ok and not _says_victory(packet)
    assert packet.success_rule == "paper" and "mean alignment" in packet.render()


@settings(max_examples=80, deadline=None)
@given(
    st.lists(mdep_rows, min_size=1, max_size=20),
    st.sampled_from([REF, PAPER, PAPER.model_copy(update={"tau_align": 0.3})]),
    st.sampled_from([(-3.0, -4.0, 0.0), (-2.0, -1.0, -2.0), (-6.0, -2.0, -3.0)]),
)
def test_checklist_agrees_with_the_termination_rule(
    rows: list[tuple[int, ...]], cfg: EPMConfig, p0: tuple[float, ...]
) -> None:
    epm = init_state(list(p0), cfg)
    for v in action_vectors(np.asarray(rows), EMPATHY_RUBRIC):
        epm = step(epm, v.tolist(), cfg)
        assert _says_victory(_packet(epm, cfg)) == (victory(epm, cfg) is not None)


def test_one_state_asked_under_two_presets_gets_each_presets_answer() -> None:
    # The checks are remembered per state *and* config: asking under reference first must
    # not answer a later question under paper (E_total 4.996 rounds to 5.00: >= 5, not > 5).
    epm = step(init_state([-3.0, -4.0, 0.0], REF), [0.0, 6.245, 0.0], REF)
    paper = PAPER.model_copy(update={"in_zone_success": False})
    for _ in range(2):
        assert victory(epm, REF) is not None and _packet(epm, REF).energy_ok
        assert victory(epm, paper) is None and not _packet(epm, paper).energy_ok
    assert epm == replace(epm) and "derived" not in repr(epm)


def test_the_packet_names_every_quantity_once_in_numbers() -> None:
    epm = step(init_state([-3.0, -4.0, 0.0], REF), [0.0, 1.5, 0.0], REF)
    packet = _packet(epm, REF)
    text = packet.render()
    assert text.count("\n") == 4  # five lines
    assert f"P_0 {','.join(_n(x, 1) for x in packet.P0)};" in text  # -3,-4,0: no "+", no ".0"
    assert f"P_t {','.join(_n(x, 1) for x in packet.P)};" in text
    numbers = {
        "||P_t||": packet.p_norm,
        "eps_dist": packet.eps_dist,
        "half-space distance": packet.distance,
        "projection": packet.projection,
        "E_total": packet.E_total,
        "eps_energy": packet.eps_energy,
    }
    for name, value in numbers.items():
        assert f"{name} {_n(value, 2)}" in text, name
    assert f"needs >= {_n(-packet.eps_dir, 2)}" in text
    assert "negative steps in a row" in text and "unscored" in text
    unscored = packet.model_copy(update={"v": None, "delta_E": None, "alignment": None}).render()
    assert "v_t unscored" in unscored and "delta_E unscored, alignment unscored" in unscored


def _n(x: float, digits: int) -> str:
    """An independent reading of the packet's numbers: rounded, trailing zeros left out."""
    value = round(x, digits)
    return "0" if value == 0 else f"{value:g}" if abs(value) < 1e6 else str(value)
