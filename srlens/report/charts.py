"""The overview page's charts: matplotlib Figure objects (no pyplot, so no global figure registry
to fill up or close), saved as SVG with text kept as text. Margins are fixed in inches: layout
engines (constrained, bbox_inches="tight") measure every label again and cost more than the
drawing itself."""

import io
import math
import re

import numpy as np

from srlens.report.queries import MAX_BARS, METRICS, SCORES

RC = {
    "svg.fonttype": "none",
    "svg.hashsalt": "srlens",
    "text.parse_math": False,
    "font.size": 8,
    "axes.titlesize": 9,
    "axes.titley": 1.0,
    "axes.spines.top": False,
    "axes.spines.right": False,
}


class Charts:
    """Numbers the charts: every SVG id (and reference to it) gets the chart's number as a prefix,
    as all charts share one HTML document and matplotlib restarts its ids in each figure."""

    def __init__(self):
        self.count = 0

    def svg(self, fig):
        self.count += 1
        buf = io.StringIO()
        fig.savefig(buf, format="svg", metadata={"Date": None})
        text = buf.getvalue()
        text = text[text.index("<svg") :]  # no XML declaration or DOCTYPE inside HTML
        text = re.sub(r'(\bid="|url\(#|href="#)', rf"\1s{self.count}-", text)
        return f'<div class="chart">{text}</div>'


def new_figure(figsize):
    """A matplotlib Figure (figsize in inches). Imported here, by the process that draws: with the
    overview written by a worker (overview.Worker), the report's own process never imports matplotlib."""
    from matplotlib.figure import Figure

    return Figure(figsize=figsize)


def figure(width, height, left=0.6, right=0.2, top=0.35, bottom=0.45):
    """A figure of width x height inches, its axes inside the given margins (inches)."""
    fig = new_figure((width, height))
    fig.subplots_adjust(left=left / width, right=1 - right / width, bottom=bottom / height, top=1 - top / height)
    return fig


def label_width(labels, size=7):
    """Inches a column of tick labels needs (about 0.6 em a character)."""
    return 0.15 + 0.6 * size / 72 * max((len(str(x)) for x in labels), default=0)


def cells_mesh(ax, grid, **style):
    """grid[i, j] drawn as cell (row i from the top, column j), NaN cells left blank. A mesh of
    vector cells rather than imshow, which would embed a bitmap that browsers blur."""
    rows, cols = grid.shape
    mesh = ax.pcolormesh(np.arange(cols + 1) - 0.5, np.arange(rows + 1) - 0.5, np.ma.masked_invalid(grid), **style)
    ax.set_xlim(-0.5, cols - 0.5)
    ax.set_ylim(rows - 0.5, -0.5)
    return mesh


def heatmap_chart(charts, frame, title):
    """Lower triangle of median rho between every pair of variables (framework paper, Fig. 2)."""
    names = sorted(set(frame.metric_a) | set(frame.metric_b), key=metric_order)
    index = {m: i for i, m in enumerate(names)}
    grid = np.full((len(names), len(names)), np.nan)
    for a, b, rho in zip(frame.metric_a, frame.metric_b, frame.rho_median):
        i, j = sorted((index[a], index[b]), reverse=True)  # row below column: lower triangle
        grid[i, j] = rho
    grid = grid[1:, :-1]  # the first row and the last column of a strict lower triangle are empty
    labels = [METRICS.get(m, m) for m in names]
    cells = 0.36 * len(grid)
    fig = figure(cells + 2.2, cells + 1.2, left=0.9, right=1.3, top=0.4, bottom=0.8)
    ax = fig.add_subplot()
    image = cells_mesh(ax, grid, cmap="RdBu_r", vmin=-1, vmax=1)
    ax.set_xticks(range(len(grid)), labels[:-1], rotation=60, ha="right")
    ax.set_yticks(range(len(grid)), labels[1:])
    for (i, j), value in np.ndenumerate(grid):
        if not math.isnan(value):
            ax.text(
                j,
                i,
                f"{value:.2f}".replace("0.", ".", 1),
                ha="center",
                va="center",
                fontsize=6.5,
                color="white" if abs(value) > 0.6 else "black",
            )
    ax.set_title(title)
    ax.spines[:].set_visible(False)
    bar = fig.add_axes((1 - 1.0 / fig.get_figwidth(), 0.3, 0.12 / fig.get_figwidth(), 0.5))
    fig.colorbar(image, cax=bar, label="median Spearman rho", ticks=[-1, -0.5, 0, 0.5, 1])
    return charts.svg(fig)


def ranking_chart(charts, submissions, scores, rank, value):
    """Submissions (rows, in table order) x scores: colour = rank on that score, text = value."""
    submissions = submissions[:MAX_BARS]
    grid = np.full((len(submissions), len(scores)), np.nan)
    for i, sub in enumerate(submissions):
        for j, score in enumerate(scores):
            if (sub, score) in rank:  # colour: 0 = first, 1 = last of the runs with that score
                last = max(1, sum(1 for (_, s) in rank if s == score) - 1)
                grid[i, j] = (rank[sub, score] - 1) / last
    left = label_width(submissions)
    fig = figure(left + 0.75 * len(scores) + 0.3, 1.3 + 0.22 * len(submissions), left=left, top=0.35, bottom=0.95)
    ax = fig.add_subplot()
    cells_mesh(ax, grid, cmap="viridis", vmin=0, vmax=1)
    for i, sub in enumerate(submissions):
        for j, score in enumerate(scores):
            if (sub, score) in value:
                ax.text(
                    j,
                    i,
                    f"{value[sub, score]:.2f}",
                    ha="center",
                    va="center",
                    fontsize=6.5,
                    color="white" if grid[i, j] < 0.5 else "black",
                )
    ax.set_xticks(range(len(scores)), [SCORES.get(s, s) for s in scores], rotation=45, ha="right")
    ax.set_yticks(range(len(submissions)), submissions, fontsize=7)
    ax.spines[:].set_visible(False)
    ax.set_title("rank on each score (dark = first)")
    return charts.svg(fig)


def dea_chart(charts, frame):
    """A box per relation over the submissions (quartiles, min-max whiskers, mean), worst mean
    first. Drawn as a few collections rather than with Axes.bxp, which makes seven artists a box."""
    x = np.arange(len(frame))
    fig = figure(max(4.0, 0.3 * len(frame) + 0.9), 3.2, bottom=0.8)
    ax = fig.add_subplot()
    ax.vlines(x, frame.dea_min, frame.dea_max, color="#555", linewidth=0.8)
    ax.bar(
        x, frame.dea_q3 - frame.dea_q1, bottom=frame.dea_q1, width=0.6, color="#c6d7ea", edgecolor="#555", linewidth=0.8
    )
    ax.hlines(frame.dea_median, x - 0.3, x + 0.3, color="#dd8452", linewidth=1.2)
    ax.plot(x, frame.dea_mean, "D", color="#2a7a2a", markersize=3)
    ax.set_xticks(x, frame.relation, rotation=60, ha="right")
    ax.set_xlim(-0.6, len(frame) - 0.4)
    ax.set_ylim(-0.02, 1.02)
    ax.set_ylabel("DEA")
    ax.grid(axis="y", alpha=0.3)
    ax.set_title("box: quartiles over submissions, line: median, diamond: mean, whiskers: min-max", fontsize=8)
    return charts.svg(fig)


def projectivity_chart(charts, frame):
    """Per score, the medians of the projective and non-projective sentences of each submission."""
    scores = list(dict.fromkeys(frame.score))
    parts = [frame[frame.score == score].head(MAX_BARS) for score in scores]
    left = label_width(frame.submission) + 0.1
    rows = max(len(p) for p in parts)
    fig = new_figure(((left + 2.6) * len(scores), 1.1 + 0.22 * rows))
    fig.subplots_adjust(
        left=left / fig.get_figwidth(),
        right=0.97,
        bottom=0.4 / fig.get_figheight(),
        top=1 - 0.6 / fig.get_figheight(),
        wspace=left / 2.6,
    )
    for k, (score, part) in enumerate(zip(scores, parts)):
        y = np.arange(len(part))[::-1]
        ax = fig.add_subplot(1, len(scores), k + 1)
        ax.barh(y + 0.2, part.median_projective, height=0.4, color="#4c72b0", label="projective")
        ax.barh(y - 0.2, part.median_nonprojective, height=0.4, color="#dd8452", label="non-projective")
        labels = [
            s + (" *" if t and p < 0.05 else "")
            for s, t, p in zip(part.submission, part.tested, part.p_value.fillna(1.0))
        ]
        ax.set_yticks(y, labels, fontsize=7)
        ax.set_title(f"median {score}")
        ax.axvline(0, color="grey", linewidth=0.5)
    fig.legend(*ax.get_legend_handles_labels(), loc="upper left", ncols=2, fontsize=7, frameon=False)
    return charts.svg(fig)


def rules_chart(charts, frame):
    """Mean rule score over the submissions, whiskers from the worst to the best run."""
    part = frame.iloc[::-1]
    y = np.arange(len(part))
    left = label_width(part.rule_id)
    fig = figure(left + 4.5, 0.9 + 0.2 * len(part), left=left)
    ax = fig.add_subplot()
    ax.barh(
        y,
        part.score_mean,
        color="#55a868",
        # clipped at 0: the mean of equal scores can differ from them in the last bit
        xerr=[(part.score_mean - part.score_min).clip(lower=0), (part.score_max - part.score_mean).clip(lower=0)],
        error_kw={"elinewidth": 0.8, "capsize": 2},
    )
    ax.set_yticks(y, part.rule_id, fontsize=7)
    ax.set_xlim(0, 1.02)
    ax.set_title("rule score: mean over submissions, whiskers min-max")
    return charts.svg(fig)


def metric_order(name):
    return (list(METRICS).index(name), name) if name in METRICS else (len(METRICS), name)


def bucket_chart(charts, frame):
    """One panel per bucket dimension: each run's micro DEA (lemma recall for word_frequency)
    across the buckets, in bucket order; the legend names the runs (at most MAX_BARS)."""
    dimensions = list(dict.fromkeys(frame.dimension))
    runs = list(dict.fromkeys(frame.submission))[:MAX_BARS]
    cols = min(4, len(dimensions))
    rows = math.ceil(len(dimensions) / cols)
    fig = new_figure((2.9 * cols + 1.9, 2.3 * rows + 0.3))
    fig.subplots_adjust(
        left=0.5 / fig.get_figwidth(),
        right=1 - 2.1 / fig.get_figwidth(),
        bottom=0.75 / fig.get_figheight(),
        top=1 - 0.35 / fig.get_figheight(),
        hspace=1.0,
        wspace=0.3,
    )
    colours = [f"C{i % 10}" for i in range(len(runs))]
    styles = ["-", "--", ":", "-."]
    # (bucket_no, bucket, value) of each dimension and run, in bucket order: grouped here once, as a
    # pandas filter and sort for every panel and run cost a tenth of the chart
    points = {}
    for row in zip(frame.dimension, frame.submission, frame.bucket_no, frame.bucket, frame.value):
        points.setdefault(row[:2], []).append(row[2:])
    points = {key: sorted(line, key=lambda p: p[0]) for key, line in points.items()}
    for k, dimension in enumerate(dimensions):
        ax = fig.add_subplot(rows, cols, k + 1)
        in_dimension = sorted(
            (p for (d, _), line in points.items() if d == dimension for p in line), key=lambda p: p[0]
        )
        labels = list(dict.fromkeys(bucket for _, bucket, _ in in_dimension))
        for i, run in enumerate(runs):
            line = points.get((dimension, run), [])
            x = [labels.index(b) for _, b, _ in line]
            ax.plot(
                x,
                [value for _, _, value in line],
                marker="o",
                markersize=2.5,
                linewidth=1,
                color=colours[i],
                linestyle=styles[(i // 10) % len(styles)],
                label=run,
            )
        # short labels (0-5, <2) stand upright; long ones (1,000-9,999, non-projective) slant
        slant = {"rotation": 30, "ha": "right"} if max(map(len, labels), default=0) > 5 else {}
        ax.set_xticks(range(len(labels)), labels, fontsize=7.5, **slant)
        ax.tick_params(axis="y", labelsize=7.5)
        ax.set_ylim(-0.02, 1.02)
        ax.set_title(
            dimension.replace("_", " ") + (" (lemma recall)" if dimension == "word_frequency" else ""), fontsize=9
        )
        ax.grid(axis="y", alpha=0.3)
    fig.legend(*ax.get_legend_handles_labels(), loc="upper right", fontsize=7.5, frameon=False)
    return charts.svg(fig)
