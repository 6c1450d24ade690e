"""The campaign benchmark's stages (bench/campaign.py): each one timed in a fresh interpreter.

`run_stage` starts `campaign.py --stage NAME` in a new process and samples its process tree's
memory (campaign_memory.TreeSampler); in that process `run_stage_here` runs the stage function
and writes its result as JSON. The researcher stage also checks that the per-sentence script
(bench/campaign_researcher.py) gives the warehouse's figures.
"""

from __future__ import annotations

import csv
import json
import os
import resource
import shutil
import subprocess
import sys
import time
from collections import defaultdict
from datetime import datetime
from pathlib import Path

from campaign_data import REPO, SHARED, log
from campaign_memory import TreeSampler

CAMPAIGN_SCRIPT = Path(__file__).resolve().parent / "campaign.py"


def _paths(work):
    work = Path(work)
    return work, json.loads((work / "manifest.json").read_text())


def _fresh_warehouse(warehouse):
    warehouse = Path(warehouse)
    for leftover in (
        warehouse,
        Path(f"{warehouse}.wal"),
        Path(f"{warehouse}.lock"),
    ):
        leftover.unlink(missing_ok=True)
    # dbt's work folder, a killed build's copy with it (dbt's parse stays in the user's cache: srlens/parse_cache.py)
    shutil.rmtree(warehouse.parent / f".{warehouse.name}.dbt", ignore_errors=True)


def stage_load(work, warehouse):
    """As a campaign's organizers would load it: the treebanks in one load-treebank (one transaction), then
    the runs with one load-campaign and a CSV manifest per campaign (one connection, a transaction per run)."""
    from srlens.loaders.campaign import load_campaign
    from srlens.loaders.load import load_treebanks

    work, manifest = _paths(work)
    _fresh_warehouse(warehouse)
    started = time.perf_counter()
    load_treebanks(warehouse, [(work / c["path"], c["name"], c["language"]) for c in manifest["corpora"]])
    log(f"load: {len(manifest['corpora'])} treebanks")
    treebanks_s = time.perf_counter() - started
    for campaign in sorted({run["campaign"] for run in manifest["runs"]}):
        runs = [run for run in manifest["runs"] if run["campaign"] == campaign]
        csv_path = Path(warehouse).parent / f".{campaign}.manifest.csv"
        with open(csv_path, "w", newline="") as out:
            rows = csv.writer(out)
            rows.writerow(["file", "corpus", "team", "run", "format"])
            rows.writerows([work / r["path"], r["corpus"], r["team"], r["run"], "text"] for r in runs)
        failed = [o for o in load_campaign(warehouse, csv_path, campaign) if o.error is not None]
        if failed:
            raise RuntimeError(f"load-campaign {campaign}: {failed[0].error}")
        log(f"load: {len(runs)} runs of {campaign}")
    return {
        "seconds": time.perf_counter() - started,
        "treebanks_seconds": treebanks_s,
        "runs_seconds": time.perf_counter() - started - treebanks_s,
        "warehouse_mb": Path(warehouse).stat().st_size / 2**20,
    }


def node_layer(model):
    """The dbt layer of a model, by the project's naming rule (srlens build writes no manifest.json)."""
    return "staging" if model.startswith("stg_") else "intermediate" if model.startswith("int_") else "marts"


def dbt_node_times(warehouse):
    """Per dbt node: group (staging/intermediate/marts/tests), execution time, start and end (epoch s)."""
    target = Path(warehouse).parent / f".{Path(warehouse).name}.dbt" / "target"
    results = json.loads((target / "run_results.json").read_text())["results"]
    out = []
    for r in results:
        uid = r["unique_id"]
        kind = uid.split(".")[0]
        group = "tests" if kind == "test" else node_layer(uid.split(".")[-1]) if kind == "model" else kind
        spans = [
            (t["started_at"], t["completed_at"])
            for t in r.get("timing", [])
            if t.get("started_at") and t.get("completed_at")
        ]
        start = min((_epoch(s) for s, _ in spans), default=None)
        end = max((_epoch(e) for _, e in spans), default=None)
        out.append(
            {
                "node": uid.split(".")[2] if kind == "test" else uid.split(".")[-1],
                "kind": kind,
                "group": group,
                "status": r.get("status"),
                "seconds": r.get("execution_time") or 0.0,
                "start": start,
                "end": end,
            }
        )
    return out


def _epoch(stamp):
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


def stage_build(work, warehouse, echo=False):
    from srlens.build import build

    wall_started = time.time()
    started = time.perf_counter()
    build(warehouse, echo=echo, processor="aligned")
    seconds = time.perf_counter() - started
    return {
        "seconds": seconds,
        "wall_started": wall_started,
        "wall_ended": time.time(),
        "nodes": dbt_node_times(warehouse),
        "warehouse_mb": Path(warehouse).stat().st_size / 2**20,
        "copy_seconds": time_copy(warehouse),
    }


def time_copy(warehouse):
    """Seconds to copy the warehouse file once (what every build does first), page cache as it is."""
    copy = Path(warehouse).parent / ".copy_timing.duckdb"
    started = time.perf_counter()
    shutil.copyfile(warehouse, copy)
    seconds = time.perf_counter() - started
    copy.unlink()
    return seconds


def stage_report(work, warehouse):
    try:
        from srlens.report import write_report
    except ImportError as e:
        return {"skipped": f"srlens.report.write_report is not importable ({e})"}
    out_dir = Path(work) / "report"
    shutil.rmtree(out_dir, ignore_errors=True)
    started = time.perf_counter()
    write_report(warehouse, out_dir)
    seconds = time.perf_counter() - started
    size = sum(p.stat().st_size for p in out_dir.rglob("*") if p.is_file()) if out_dir.exists() else 0
    return {"seconds": seconds, "report_mb": size / 2**20}


def stage_add_run(work, warehouse, echo=False):
    from srlens.build import build
    from srlens.loaders.load import load_outputs

    work, manifest = _paths(work)
    run = manifest["extra_runs"][0]
    started = time.perf_counter()
    load_outputs(
        warehouse, work / run["path"], run["corpus"], run["team"], run["run"], campaign=run["campaign"], fmt="text"
    )
    load_s = time.perf_counter() - started
    log(f"add one run: loaded {run['submission_id']} in {load_s:.1f} s; building")
    wall_started = time.time()
    started = time.perf_counter()
    build(warehouse, echo=echo, processor="aligned")
    build_s = time.perf_counter() - started
    return {
        "seconds": load_s + build_s,
        "load_seconds": load_s,
        "build_seconds": build_s,
        "wall_started": wall_started,
        "wall_ended": time.time(),
        "submission_id": run["submission_id"],
        "sentences": run["sentences"],
        "nodes": dbt_node_times(warehouse),
        "warehouse_mb": Path(warehouse).stat().st_size / 2**20,
        "copy_seconds": time_copy(warehouse),
    }


def researcher_sample(manifest, fraction):
    """Per language, evenly spaced corpora (a `fraction` of them, at least one); all their runs go with them."""
    by_language = defaultdict(list)
    for corpus in manifest["corpora"]:
        by_language[corpus["language"]].append(corpus["name"])
    names = []
    for corpora in by_language.values():
        m = max(1, min(len(corpora), round(len(corpora) * fraction)))
        names += [corpora[i] for i in sorted({round(i * len(corpora) / m) for i in range(m)})]
    return names


def stage_researcher(work, warehouse, corpora_names):
    import duckdb
    from campaign_researcher import score_campaign

    work, manifest = _paths(work)
    corpora = [{**c, "path": work / c["path"]} for c in manifest["corpora"] if c["name"] in corpora_names]
    runs = [{**r, "path": work / r["path"]} for r in manifest["runs"] if r["corpus"] in corpora_names]
    started = time.perf_counter()
    results, seconds, counts = score_campaign(corpora, runs, progress=log)
    total = time.perf_counter() - started
    # Same figures as the warehouse? (not timed)
    check = {"sentences": 0, "bleu_equal": 0, "dea_equal": 0, "runs": 0, "corpus_bleu_equal": 0}
    if Path(warehouse).exists():
        con = duckdb.connect(str(warehouse), read_only=True)
        try:
            for sub_id, rows in results["sentences"].items():
                got = dict(
                    (r[0], (r[1], r[2]))
                    for r in con.execute(
                        "select sent_id, bleu, dea from sentence_scores where submission_id = ?", [sub_id]
                    ).fetchall()
                )
                for row in rows:
                    bleu, dea = got.get(row["sent_id"], (None, None))
                    check["sentences"] += 1
                    check["bleu_equal"] += bleu is not None and abs(bleu - row["bleu"]) <= 1e-12
                    check["dea_equal"] += (dea is None and row["dea"] is None) or (
                        dea is not None and row["dea"] is not None and abs(dea - row["dea"]) <= 1e-12
                    )
                corpus_bleu = con.execute(
                    "select corpus_bleu from submission_scores where submission_id = ?", [sub_id]
                ).fetchone()
                check["runs"] += 1
                check["corpus_bleu_equal"] += (
                    bool(corpus_bleu)
                    and corpus_bleu[0] is not None
                    and abs(corpus_bleu[0] - results["runs"][sub_id]["corpus_bleu"]) <= 1e-12
                )
        except duckdb.Error as e:
            check["error"] = str(e).splitlines()[0]
        finally:
            con.close()
    # Per language: seconds and sentences, for a linear extrapolation language by language.
    by_language = defaultdict(
        lambda: {"tree_seconds": 0.0, "reference_sentences": 0, "score_seconds": 0.0, "output_sentences": 0}
    )
    language = {c["name"]: c["language"] for c in corpora}
    for c in corpora:
        stats = by_language[c["language"]]
        stats["tree_seconds"] += results["seconds"]["corpora"][c["name"]]
        stats["reference_sentences"] += c["sentences"]
    for r in runs:
        stats = by_language[language[r["corpus"]]]
        stats["score_seconds"] += results["seconds"]["runs"][r["submission_id"]]
        stats["output_sentences"] += r["sentences"]
    return {
        "seconds": total,
        "parts": seconds,
        **counts,
        "corpora": len(corpora),
        "runs": len(runs),
        "by_language": dict(by_language),
        "check": check,
    }


def stage_stanza(work, warehouse, sentences):
    import duckdb

    from srlens import processing
    from srlens.loaders.load import load_outputs, load_treebank

    work, manifest = _paths(work)
    run = next(r for r in manifest["runs"] if r["corpus"].startswith("en_"))
    corpus = next(c for c in manifest["corpora"] if c["name"] == run["corpus"])
    blocks = [b for b in (work / corpus["path"]).read_text(encoding="utf-8").split("\n\n") if b.strip()][:sentences]
    texts = (work / run["path"]).read_text(encoding="utf-8").split("\n")[: len(blocks)]
    tmp = Path(warehouse).parent
    tmp.mkdir(parents=True, exist_ok=True)
    (tmp / "stanza_ref.conllu").write_text("\n\n".join(blocks) + "\n\n", encoding="utf-8")
    (tmp / "stanza_run.txt").write_text("\n".join(texts) + "\n", encoding="utf-8")
    _fresh_warehouse(warehouse)
    load_treebank(warehouse, tmp / "stanza_ref.conllu", "en_stanza", language="en")
    load_outputs(warehouse, tmp / "stanza_run.txt", "en_stanza", run["team"], run["run"], fmt="text")
    models = Path(os.environ.get(processing.STANZA_DIR_ENV) or SHARED / "stanza")
    con = duckdb.connect(str(warehouse))
    try:
        started = time.perf_counter()
        counts = processing.process_pending(con, model_dir=models, progress=True)
        seconds = time.perf_counter() - started
    finally:
        con.close()
    en = counts["languages"]["en"]
    return {
        "seconds": seconds,
        "sentences": len(texts),
        "texts_parsed": en["texts_parsed"],
        "words": en["words_parsed"],
        "load_seconds": en["load_seconds"],
        "parse_seconds": en["parse_seconds"],
        "processor": en["processor"],
        "models": models.name,
    }


STAGES = {
    "load": stage_load,
    "build": stage_build,
    "report": stage_report,
    "add_run": stage_add_run,
    "researcher": stage_researcher,
    "stanza": stage_stanza,
}


def run_stage_here(name, kwargs, result_path):
    result = STAGES[name](**kwargs)
    result["self_maxrss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    result["children_maxrss_mb"] = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    Path(result_path).write_text(json.dumps(result))


def duckdb_memory_limit():
    """The memory_limit srlens build gives DuckDB (srlens/build.py memory_limit, via dbt_project/profiles.yml)."""
    from srlens.build import memory_limit

    return f"{memory_limit()} (srlens build: $SRLENS_MEMORY_LIMIT, else 3 GB or 80% of RAM if less)"


def run_stage(name, label=None, echo_dbt=False, **kwargs):
    """Run one stage in a fresh interpreter; returns its result plus wall time and memory figures."""
    label = label or name
    result_path = Path(kwargs["work"]) / f".stage_{name}.json"
    result_path.unlink(missing_ok=True)
    if name in ("build", "add_run"):
        kwargs["echo"] = echo_dbt
    cmd = [
        sys.executable,
        str(CAMPAIGN_SCRIPT),
        "--stage",
        name,
        "--stage-args",
        json.dumps({k: str(v) if isinstance(v, Path) else v for k, v in kwargs.items()}),
        "--stage-result",
        str(result_path),
    ]
    load_before = os.getloadavg()[0]
    log(f"{label}: starting (load average {load_before:.1f})")
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=REPO)
    sampler = TreeSampler(proc.pid, label)
    sampler.start()
    code = proc.wait()
    wall = time.perf_counter() - started
    sampler.stop.set()
    sampler.join()
    if code != 0 or not result_path.exists():
        raise SystemExit(f"stage {label} failed (exit code {code}); see the output above")
    result = json.loads(result_path.read_text())
    result_path.unlink()
    largest_kb, largest_cmd = sampler.largest()
    for node in result.get("nodes", []):  # memory of the process tree while each dbt node ran
        if node["start"] is not None and node["end"] is not None:
            inside = [kb for t, kb in sampler.samples if node["start"] <= t <= node["end"]]
            node["tree_mb"] = max(inside) / 1024 if inside else None
    if sampler.samples:
        result["peak_at"] = max(sampler.samples, key=lambda sample: sample[1])[0]
    result.update(
        {
            "stage": label,
            "wall": wall,
            "load_before": load_before,
            "load_after": os.getloadavg()[0],
            "peak_tree_mb": sampler.peak_tree_kb / 1024,
            "largest_mb": max(largest_kb / 1024, result.get("self_maxrss_mb", 0), result.get("children_maxrss_mb", 0)),
            "largest_cmd": largest_cmd,
        }
    )
    if "skipped" in result:
        log(f"{label}: skipped: {result['skipped']}")
    else:
        log(
            f"{label}: {result.get('seconds', wall):.1f} s (process {wall:.1f} s), peak "
            f"{result['peak_tree_mb']:,.0f} MB "
            f"(largest process {result['largest_mb']:,.0f} MB: {largest_cmd})"
        )
    return result
