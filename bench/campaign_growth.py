"""Cost growth of a campaign with its size (issue 18): 1x, 2x, 5x, 10x the runs of the campaign bench.

Each size is a run of `bench/campaign.py` into its own work folder, for example

    python bench/campaign.py --runs 340  --skip add_run --skip report --skip researcher \
        --skip scaling --skip stanza --no-doc --work /tmp/growth/2x

This script reads their results.json and writes the table: seconds and peak memory of the load and
of the build from scratch, the time per output sentence and the ratios to the smallest size. Near-
linear growth means time per output sentence that stays flat as the campaign grows.

    python bench/campaign_growth.py /tmp/growth/1x /tmp/growth/2x /tmp/growth/5x /tmp/growth/10x
"""

import argparse
import json
from pathlib import Path

from benchmarks_doc import write_section

SECTION = "Campaign growth, 1x to 10x (issue 18)"


def read(work):
    results = json.loads((Path(work) / "results.json").read_text())
    outputs, sentences, words = results["totals"]
    load, build = results["results"]["load"], results["results"]["build"]
    nodes = build.get("nodes", [])
    return {
        "runs": results["manifest"]["params"]["runs"] if "manifest" in results else None,
        "outputs": outputs,
        "reference_sentences": sentences,
        "load": load["seconds"],
        "build": build["seconds"],
        "node_seconds": sum(n.get("seconds", 0) for n in nodes),
        "nodes": {n["node"]: n.get("seconds") or 0.0 for n in nodes},
        "peak_mb": max(load["peak_tree_mb"], build["peak_tree_mb"]),
        "warehouse_mb": build["warehouse_mb"],
        "load_average": (load["load_before"], build["load_after"]),
    }


def table(rows):
    base = rows[0]
    lines = [
        "| campaign | runs | output sentences | load s | build s | load + build s | x of smallest "
        "| µs per output | summed dbt node s | peak MB (process tree) | warehouse MB | load average |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for row in rows:
        total = row["load"] + row["build"]
        scale = row["outputs"] / base["outputs"]
        lines.append(
            f"| {scale:g}x | {row['runs']:,} | {row['outputs']:,} | {row['load']:.1f} | {row['build']:.1f} "
            f"| {total:.1f} | {total / (base['load'] + base['build']):.2f} | {total / row['outputs'] * 1e6:.0f} "
            f"| {row['node_seconds']:.1f} | {row['peak_mb']:,.0f} | {row['warehouse_mb']:,.0f} "
            f"| {row['load_average'][0]:.1f} to {row['load_average'][1]:.1f} |"
        )
    return "\n".join(lines)


def slowest_nodes(rows, most=12):
    """The dbt nodes that take longest in the largest campaign, their seconds at every size, and how
    their time grew against the output sentences (1.00 = linear)."""
    base, last = rows[0], rows[-1]
    growth = last["outputs"] / base["outputs"]
    names = sorted(last["nodes"], key=lambda n: -last["nodes"][n])[:most]
    sizes = " | ".join(f"{r['outputs'] / base['outputs']:g}x s" for r in rows)
    lines = [
        f"| node | {sizes} | growth / outputs growth |",
        "|---|" + "---:|" * len(rows) + "---:|",
    ]
    for name in names:
        seconds = " | ".join(f"{r['nodes'].get(name, 0.0):.1f}" for r in rows)
        first = base["nodes"].get(name, 0.0)
        ratio = f"{last['nodes'][name] / first / growth:.2f}" if first > 0 else "-"
        lines.append(f"| `{name}` | {seconds} | {ratio} |")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("work", nargs="+", help="work folders of bench/campaign.py, smallest first")
    ap.add_argument("--note", default="", help="a paragraph to add under the table (machine, load, code)")
    ap.add_argument("--no-doc", action="store_true", help="print only")
    args = ap.parse_args()
    rows = sorted((read(w) for w in args.work), key=lambda r: r["outputs"])
    body = (
        "`python bench/campaign_growth.py WORK...`: the campaign of `bench/campaign.py` (30 corpora of "
        "2,000 sentences, processor `aligned`) with more runs of the same corpora, each size loaded and "
        "built from scratch in its own work folder (stages in fresh processes; peak memory sampled over "
        "the process tree, dbt included).\n\n" + table(rows) + "\n\n"
        "The dbt nodes that take longest in the largest campaign (node seconds; dbt runs two at a time):\n\n"
        + slowest_nodes(rows)
        + "\n"
    )
    if args.note:
        body += "\n" + args.note.strip() + "\n"
    print(body)
    if not args.no_doc:
        write_section(SECTION, body)


if __name__ == "__main__":
    main()
