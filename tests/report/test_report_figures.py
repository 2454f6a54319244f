"""The static figures (matplotlib) stay readable at a full leaderboard: checked on the drawn
figure's geometry, not by eye."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import pytest
from matplotlib.transforms import Bbox
from report_fixtures import write_models

from empathos.epm import EPMConfig
from empathos.records import load_records
from empathos.report.data import build_report_data
from empathos.report.figures import radar_plot
from empathos.report.labels import GROUPINGS, load_labels


def _inside(box: Bbox, outer: Bbox) -> bool:
    return bool(
        box.x0 >= outer.x0 - 0.5
        and box.y0 >= outer.y0 - 0.5
        and box.x1 <= outer.x1 + 0.5
        and box.y1 <= outer.y1 + 0.5
    )


@pytest.mark.parametrize("grouping", GROUPINGS)
def test_the_static_radar_keeps_its_legend_beside_the_plot_at_16_models(
    tmp_path: Path, grouping: str
) -> None:
    names = write_models(tmp_path / "results", n_models=16, opaque=2)
    loaded, errors = load_records([tmp_path / "results"])
    assert errors == []
    labels, _ = load_labels(["builtin"], {x.record.scenario_id for x in loaded})
    fig = radar_plot(build_report_data(loaded, labels, EPMConfig()), grouping)
    try:
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
        ax = fig.axes[0]
        legends = [*fig.legends, *([ax.get_legend()] if ax.get_legend() else [])]
        assert len(legends) == 1
        legend = legends[0].get_window_extent(renderer)
        assert sorted(t.get_text() for t in legends[0].get_texts()) == sorted(names)
        assert _inside(legend, fig.bbox), "the legend is cut off by the figure's edge"
        assert not legend.overlaps(ax.get_window_extent(renderer)), "legend over the plot"
        colours = {line.get_color() for line in ax.get_lines()}
        assert len(colours) == 16, "two models share a colour"
        ticks = [t for t in ax.get_xticklabels() if t.get_text()]
        assert len(ticks) >= 4
        for tick in ticks:
            box = tick.get_window_extent(renderer)
            assert _inside(box, fig.bbox), f"axis label clipped: {tick.get_text()!r}"
            assert not box.overlaps(legend), f"legend over an axis label: {tick.get_text()!r}"
    finally:
        plt.close(fig)
