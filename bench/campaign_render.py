"""The campaign benchmark's figures (bench/campaign.py) as the Markdown of docs/benchmarks.md."""

from __future__ import annotations

import os
import platform
import re
from collections import defaultdict


def group_table(nodes, wall_started=None):
    """Rows (group, nodes, summed execution s, wall span s) in dbt order of first start."""
    groups = defaultdict(list)
    for node in nodes:
        groups[node["group"]].append(node)
    rows = []
    for group, items in groups.items():
        starts = [n["start"] for n in items if n["start"] is not None]
        ends = [n["end"] for n in items if n["end"] is not None]
        span = (max(ends) - min(starts)) if starts and ends else 0.0
        rows.append((group, len(items), sum(n["seconds"] for n in items), span, min(starts, default=0)))
    rows.sort(key=lambda row: row[4])
    return rows


def dbt_span(nodes):
    starts = [n["start"] for n in nodes if n["start"] is not None]
    ends = [n["end"] for n in nodes if n["end"] is not None]
    return (min(starts), max(ends)) if starts and ends else (None, None)


def stanza_figure_from_doc():
    """(seconds per 1,000 sentences, the line it came from) from the 'Stanza parsing' section, if any."""
    from benchmarks_doc import BENCHMARKS_MD

    if not BENCHMARKS_MD.exists():
        return None
    text = BENCHMARKS_MD.read_text()
    n = re.search(r"^(\d+) sentences of ", text, re.M)
    total = re.search(r"process_pending in all: ([\d.]+) s", text)
    if not (n and total):
        return None
    return float(total.group(1)) * 1000 / int(n.group(1)), total.group(0)


def fmt_s(seconds):
    return f"{seconds:,.1f}"


def fmt_mb(mb):
    return f"{mb:,.0f}"


def machine_line():
    cpus = len(os.sched_getaffinity(0))
    with open("/proc/meminfo") as handle:
        mem_kb = int(next(line for line in handle if line.startswith("MemTotal")).split()[1])
    from importlib import metadata

    import duckdb

    return (
        f"{platform.machine()}, {cpus} CPUs, {mem_kb / 2**20:.0f} GiB RAM, Python {platform.python_version()}, "
        f"DuckDB {duckdb.__version__}, dbt-core {metadata.version('dbt-core')}, "
        f"dbt-duckdb {metadata.version('dbt-duckdb')}"
    )


def section_title(args):
    """One docs/benchmarks.md section per campaign shape, so that variants do not overwrite the main one."""
    get = args.get if isinstance(args, dict) else lambda name, default=None: getattr(args, name, default)
    variants = [
        name for name, flag in (("mixed sizes", "mixed_sizes"), ("double length", "double_length")) if get(flag, False)
    ]
    return "Campaign" + (f" ({', '.join(variants)})" if variants else "")


def render(args, manifest, results, scaling, out_sentences, ref_sentences, out_words):
    corpora, runs = manifest["corpora"], manifest["runs"]
    memory_limit = results.get("memory_limit")
    results = {k: v for k, v in results.items() if isinstance(v, dict)}  # the stages
    by_language = defaultdict(int)
    for c in corpora:
        by_language[c["language"]] += 1
    sizes = sorted({c["sentences"] for c in corpora})
    load, build = results["load"], results["build"]
    lines = [
        f"`python bench/campaign.py{' --scale ' + str(args.scale) if args.scale != 1 else ''}"
        f"{' --mixed-sizes' if args.mixed_sizes else ''}{' --double-length' if args.double_length else ''}` "
        f"on {machine_line()}. The machine is shared: 1-minute load average "
        f"{min(r['load_before'] for r in results.values()):.1f} to "
        f"{max(r['load_after'] for r in results.values()):.1f} during the stages (2 = both cores busy).",
        "",
        f"Campaign (generated, seed {args.seed}): {len(corpora)} corpora "
        f"({', '.join(f'{n} {lang}' for lang, n in sorted(by_language.items()))}; "
        f"{'/'.join(f'{s:,}' for s in sizes)} sentences each, {ref_sentences:,} in all) and {len(runs)} runs "
        f"of campaigns sr18 and sr19 ({len({r['team'] for r in runs})} teams): {out_sentences:,} output sentences "
        f"realizing {out_words:,} reference words. Outputs are plain text made by perturbing the reference "
        f"words; processor `aligned` (model-free). Each stage runs in a fresh process; peak memory is the "
        f"largest summed resident memory of its process tree (dbt included), sampled every 0.2 s, and the "
        f"largest single process (its VmHWM).",
        "",
        "| stage | seconds | sentences/s | peak memory, process tree (MB) | largest process (MB) |",
        "|---|---:|---:|---:|---:|",
    ]

    def row(name, seconds, result, sentences=None):
        rate = f"{sentences / seconds:,.0f}" if sentences and seconds else ""
        lines.append(
            f"| {name} | {fmt_s(seconds)} | {rate} | {fmt_mb(result['peak_tree_mb'])} | "
            f"{fmt_mb(result['largest_mb'])} "
            f"({result['largest_cmd'].split(' ')[0].replace('campaign.py', 'Python') or '?'}) |"
        )

    row(
        f"load ({len(corpora)} treebanks {fmt_s(load['treebanks_seconds'])} s, {len(runs)} runs "
        f"{fmt_s(load['runs_seconds'])} s)",
        load["seconds"],
        load,
        out_sentences,
    )
    row("build from scratch (`srlens build --processor aligned`)", build["seconds"], build, out_sentences)
    total = load["seconds"] + build["seconds"]
    report = results.get("report")
    report_note = ""
    if report and "skipped" not in report:
        row("report (`srlens.report.write_report`)", report["seconds"], report)
        total += report["seconds"]
    elif report:
        report_note = f"Report stage skipped: {report['skipped']}."
    lines.append(
        f"| **whole campaign: load + build{' + report' if report and 'skipped' not in report else ''}** "
        f"| **{fmt_s(total)}** | **{out_sentences / total:,.0f}** | "
        f"{fmt_mb(max(r['peak_tree_mb'] for k, r in results.items() if k in ('load', 'build', 'report')))} | |"
    )
    add = results.get("add_run")
    if add:
        row(
            f"add one run ({add['sentences']:,} sentences): load {fmt_s(add['load_seconds'])} s + build "
            f"{fmt_s(add['build_seconds'])} s",
            add["seconds"],
            add,
        )
    lines.append("")
    if report_note:
        lines += [report_note, ""]
    lines.append(
        f"Warehouse file: {fmt_mb(load['warehouse_mb'])} MB after loading, "
        f"{fmt_mb(build['warehouse_mb'])} MB after the build."
    )
    lines.append("")

    # Targets
    peak = max(r["peak_tree_mb"] for k, r in results.items() if k in ("load", "build", "report"))
    lines += [
        "| target (issue 8) | reached | met |",
        "|---|---:|:---:|",
        f"| whole campaign from scratch < 10 min | {total / 60:.1f} min | {'yes' if total < 600 else 'no'} |",
        f"| within 8 GiB of memory | {peak / 1024:.2f} GiB | {'yes' if peak < 8192 else 'no'} |",
    ]
    if add:
        lines.append(
            f"| add one run and rebuild < 30 s | {fmt_s(add['seconds'])} s | {'yes' if add['seconds'] < 30 else 'no'} |"
        )
    if len(runs) != 170 or any(c["sentences"] != 2000 for c in corpora):
        lines.append("")
        lines.append(
            f"(The targets are for 170 runs x 2,000 sentences; this run had {len(runs)} runs, "
            f"{out_sentences:,} output sentences.)"
        )
    lines.append("")

    # dbt groups
    for title, result in (("build from scratch", build), ("rebuild after adding one run", add)):
        if not result:
            continue
        nodes = result["nodes"]
        first, last = dbt_span(nodes)
        dbt_wall = (last - first) if first else 0.0
        lines += [
            f"dbt nodes of the {title} ({len(nodes)} nodes, dbt threads run two at a time; "
            f"span = first start to last end of the group's nodes, groups overlap):",
            "",
            "| group | nodes | summed node seconds | span seconds |",
            "|---|---:|---:|---:|",
        ]
        for group, count, summed, span, _ in group_table(nodes):
            lines.append(f"| {group} | {count} | {fmt_s(summed)} | {fmt_s(span)} |")
        lines.append(
            f"| all nodes, first start to last end | {len(nodes)} | "
            f"{fmt_s(sum(n['seconds'] for n in nodes))} | {fmt_s(dbt_wall)} |"
        )
        before = (first - result["wall_started"]) if first else 0.0
        after = (result["wall_ended"] - last) if last else 0.0
        lines.append(
            f"| outside the nodes: before the first node (copy of the {fmt_mb(result['warehouse_mb'])} MB "
            f"warehouse, processing step, dbt start-up and project parsing) | | | {fmt_s(before)} |"
        )
        lines.append(
            f"| outside the nodes: after the last node (dbt wrap-up, meta.builds, swap) | | | {fmt_s(after)} |"
        )
        lines.append("")
        lines.append(
            f"Copying the warehouse file alone (timed apart, after the build): {fmt_s(result['copy_seconds'])} s."
        )
        lines.append("")
        slowest = sorted((n for n in nodes if n["kind"] == "model"), key=lambda n: -n["seconds"])[:10]
        lines.append("Slowest models: " + ", ".join(f"`{n['node']}` {fmt_s(n['seconds'])} s" for n in slowest) + ".")
        tests = sorted((n for n in nodes if n["kind"] == "test"), key=lambda n: -n["seconds"])[:3]
        if tests:
            lines.append(
                "Slowest data tests: " + ", ".join(f"`{n['node']}` {fmt_s(n['seconds'])} s" for n in tests) + "."
            )
        by_memory = sorted(
            (n for n in nodes if n["kind"] == "model" and n.get("tree_mb")), key=lambda n: -n["tree_mb"]
        )[:5]
        if by_memory:
            at = result.get("peak_at")
            running = [n["node"] for n in nodes if at and n["start"] is not None and n["start"] <= at <= n["end"]]
            lines.append(
                "Memory: highest process-tree memory while a model ran (two run at a time): "
                + ", ".join(f"`{n['node']}` {fmt_mb(n['tree_mb'])} MB" for n in by_memory)
                + "; at the stage's peak "
                + (("running: " + ", ".join(f"`{r}`" for r in running)) if running else "no dbt node was running")
                + "."
            )
        statuses = defaultdict(int)
        for n in nodes:
            statuses[n["status"]] += 1
        lines.append("Node statuses: " + ", ".join(f"{k} {v}" for k, v in sorted(statuses.items(), key=str)) + ".")
        lines.append("")

    # Scaling
    if scaling:
        base_manifest, base_load, base_build = scaling["base"]
        base_total = base_load["seconds"] + base_build["seconds"]
        base_nodes = sum(n["seconds"] for n in base_build["nodes"])
        lines += [
            f"Scaling (a smaller campaign: {len(base_manifest['corpora'])} corpora, load + build from scratch; "
            f"summed dbt node seconds leave out the fixed costs of dbt start-up and parsing):",
            "",
            "| campaign | runs | output sentences | words/sentence | load s | build s | load + build s "
            "| ratio to base | summed dbt node s | ratio to base | peak MB |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for key, (m, ld, bd) in scaling.items():
            n_out = sum(r["sentences"] for r in m["runs"])
            words = sum(c["words"] for c in m["corpora"]) / sum(c["sentences"] for c in m["corpora"])
            t = ld["seconds"] + bd["seconds"]
            node_s = sum(n["seconds"] for n in bd["nodes"])
            lines.append(
                f"| {key} | {len(m['runs'])} | {n_out:,} | {words:.1f} | {fmt_s(ld['seconds'])} | "
                f"{fmt_s(bd['seconds'])} | {fmt_s(t)} | {t / base_total:.2f} | {fmt_s(node_s)} | "
                f"{node_s / base_nodes:.2f} | {fmt_mb(max(ld['peak_tree_mb'], bd['peak_tree_mb']))} |"
            )
        lines.append("")
        lines.append(
            "Length x2: each reference sentence is two consecutive sampled trees joined into one (the "
            "second root becomes a `parataxis` dependent of the first), so the words double at equal "
            "sentence count."
        )
        lines.append("")

    # Researcher
    res = results.get("researcher")
    if res:
        n_ref, n_out = res["reference_sentences"], res["output_sentences"]
        parts = res["parts"]
        tree_s = parts.get("read treebanks", 0) + parts.get("tree metrics and entropy", 0)
        score_s = parts.get("score outputs", 0)
        exact = n_out == out_sentences
        how = (
            ""
            if exact
            else (
                f" (extrapolated linearly, language by language, from {res['corpora']} of "
                f"{len(corpora)} corpora and their {res['runs']} runs)"
            )
        )
        extrapolated = 0.0
        language = {c["name"]: c["language"] for c in corpora}
        for lang, stats in res["by_language"].items():
            lang_ref = sum(c["sentences"] for c in corpora if c["language"] == lang)
            lang_out = sum(r["sentences"] for r in runs if language[r["corpus"]] == lang)
            extrapolated += stats["tree_seconds"] * lang_ref / stats["reference_sentences"]
            extrapolated += stats["score_seconds"] * lang_out / stats["output_sentences"]
        warehouse_total = total
        check = res["check"]
        lines += [
            "Researcher baseline (`bench/campaign_researcher.py`: one Python process reading the CoNLL-U with "
            "`conllu` and the runs as text, per sentence the tree metrics of `tests/reference_metrics.py`, the "
            "aligned lemmas and DEA of `tests/reference_scores.py`, nltk `sentence_bleu` method 2, "
            "`udfs.accuracy.sentence_accuracies`; per run nltk `corpus_bleu`, micro DEA and means; per corpus "
            "the tree statistics and relation entropy; no mining, rules, correlations or data tests):",
            "",
            "| part | sentences | seconds | sentences/s |",
            "|---|---:|---:|---:|",
            f"| read treebanks, tree metrics, entropy | {n_ref:,} reference | {fmt_s(tree_s)} | "
            f"{n_ref / tree_s:,.0f} |",
            f"| read and score outputs | {n_out:,} output | {fmt_s(score_s)} | {n_out / score_s:,.0f} |",
            f"| whole campaign{how} | {out_sentences:,} output | {fmt_s(extrapolated)} | "
            f"{out_sentences / extrapolated:,.0f} |",
            "",
            # issue 18's ratio: how many times faster the warehouse is than the script (> 1: faster)
            f"Speed-up, researcher script / warehouse (load + build"
            f"{' + report' if report and 'skipped' not in report else ''}): {fmt_s(extrapolated)} s / "
            f"{fmt_s(warehouse_total)} s = **{extrapolated / warehouse_total:.2f}** (issue 18's target: >= 10). "
            f"Peak memory of the script: {fmt_mb(res['peak_tree_mb'])} MB on its sample.",
            f"Same figures: sentence BLEU equal (within 1e-12) on {check['bleu_equal']:,} of {check['sentences']:,} "
            f"sentences, DEA on {check['dea_equal']:,}, corpus BLEU on {check['corpus_bleu_equal']} of "
            f"{check['runs']} runs{'; ' + check['error'] if check.get('error') else ''}.",
            "",
        ]

    # Stanza
    st = results.get("stanza")
    if st:
        per_1000 = st["seconds"] * 1000 / st["sentences"]
        lines.append(
            f"Stanza parsing (processor `stanza`, models `{st['models']}/`, not part of the figures above): "
            f"{st['sentences']:,} output sentences of an English run ({st['texts_parsed']} distinct texts, "
            f"{st['words']:,} words) in {fmt_s(st['seconds'])} s, pipeline load {fmt_s(st['load_seconds'])} s "
            f"included: **{fmt_s(per_1000)} s per 1,000 sentences**; peak memory {fmt_mb(st['peak_tree_mb'])} MB. "
            f"At that rate the campaign's {out_sentences:,} outputs would take "
            f"{per_1000 * out_sentences / 1000 / 3600:.1f} h to parse once (then cached)."
        )
    else:
        doc = stanza_figure_from_doc()
        if doc:
            lines.append(
                f"Stanza parsing (from the 'Stanza parsing' section, `{doc[1]}`): "
                f"**{fmt_s(doc[0])} s per 1,000 sentences**, i.e. {doc[0] * out_sentences / 1000 / 3600:.1f} h "
                f"for this campaign's outputs."
            )
    lines.append("")

    # What bounds it
    nodes = build["nodes"]
    models = sorted((n for n in nodes if n["kind"] == "model"), key=lambda n: -n["seconds"])
    summed = sum(n["seconds"] for n in nodes)
    if models and summed:
        top = models[:3]
        lines.append(
            "Largest shares of the from-scratch build's summed node time: "
            + ", ".join(f"`{n['node']}` {100 * n['seconds'] / summed:.0f}%" for n in top)
            + f" (of {fmt_s(summed)} s)."
        )
    lines.append(
        f"Largest process of the build: {build['largest_cmd'] or '?'} at {fmt_mb(build['largest_mb'])} MB; "
        f"DuckDB memory_limit of the build: {memory_limit or 'not recorded'}."
    )
    return "\n".join(lines) + "\n"
