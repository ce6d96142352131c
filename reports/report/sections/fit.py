"""The report's "Model fit" section: the latency-bandwidth fit of every line
(reports/report/fit.py, distbench.stats.fit), alpha and beta with their intervals, the sizes each
came from as asked for (`1K-16K`, never the 1,020 bytes an all_gather at 3 ranks measures of 1K),
and how the fit is made. sections/collectives.py lays the cells out as its table."""

# ruff: noqa: RUF001  (Greek letters and en dashes on purpose)

from __future__ import annotations

import pandas as pd

from distbench.parse import format_size
from distbench.reports.render import FigureOut, Section, TableOut, format_number
from distbench.reports.report.fit import MAX_REL_RMS
from distbench.reports.report.uncertainty import with_interval
from distbench.stats.fit import INTERVAL_SIZES

NO_FIT = "no fit (noise)"  # instead of the numbers of a fit below fit.MAX_REL_RMS


def fit_cells(fits: pd.DataFrame) -> pd.DataFrame:
    """The fit table's alpha and beta cells with their intervals; NO_FIT below the bar."""
    noise = fits["noise"].astype(bool)
    alpha = with_interval(fits["alpha_us"], fits["alpha_low"], fits["alpha_high"])
    beta = with_interval(fits["beta_GBps"], fits["beta_low"], fits["beta_high"])
    busbw = fits["busbw_beta_GBps"].map(format_number)
    cells = {"alpha_us": alpha, "beta_GBps": beta, "busbw_beta_GBps": busbw}
    percent = {  # as the prose and MAX_REL_RMS name them: 23.3 %, not 0.2327
        column: fits[column].map(lambda v: f"{v:.1%}" if pd.notna(v) else "")
        for column in ("rel_rms", "rel_max")
    }
    shown = fits.assign(**{name: text.where(~noise, NO_FIT) for name, text in cells.items()})
    shown = shown.assign(**percent)
    return shown.assign(alpha_from=size_range(fits, "alpha"), beta_from=size_range(fits, "beta"))


def size_range(fits: pd.DataFrame, which: str) -> pd.Series:
    """'1K-16K' (with an en dash): the sizes behind a fit's alpha or beta; when the fit was not
    split, 'all (intercept)' for alpha and 'all (slope)' for beta: one fit over every size."""
    low, high = fits[f"{which}_from_bytes"], fits[f"{which}_to_bytes"]
    text = [f"{format_size(int(a))}–{format_size(int(b))}" for a, b in zip(low, high, strict=True)]
    whole = "all (intercept)" if which == "alpha" else "all (slope)"
    return pd.Series(text, index=fits.index, dtype=object).where(fits["split"], whole)


def fit_section(figures: list[FigureOut], fit: TableOut) -> Section:
    """The latency-bandwidth fit's figure and table (titled: "Latency-bandwidth fit"), with how
    the fit is made."""
    return Section(
        "Model fit: t = α + size / β",
        "As Hockney and LogP: α (latency) is the intercept of a fit on the smallest third of "
        "a line's sizes, β (bandwidth) the slope of a fit on the largest third (sizes as in "
        "nccl-tests); with fewer than four sizes one fit over all, and α is its intercept. "
        "Least squares on relative error, α ≥ 0, β > 0. The quality is in relative error "
        "too, of the two numbers at every size: rel. RMS the typical miss, rel. max the "
        "worst (large where protocols switch between the two ends). A line whose rel. RMS "
        f"is above {MAX_REL_RMS:.0%} shows '{NO_FIT}': its times are noise to this model, "
        "and it is left out of the figure. A line of two sizes passes through both unless "
        "α ≥ 0 or β > 0 holds it off them (a larger size timed faster): it describes those two "
        "sizes, and tests nothing. [low, high]: 95 % intervals of weighted least squares, "
        "each end's from its own fit's residuals and t quantile; none below "
        f"{INTERVAL_SIZES} sizes, where an end's fit leaves no residual to estimate its "
        "scatter.",
        figures=figures,
        tables=[fit],
    )
