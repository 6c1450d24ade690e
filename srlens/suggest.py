"""Training-data selection (the framework paper, section 6, "Data augmentation").

`srlens suggest-training` picks the sentences of a loaded treebank that hold the most instances of
what one run does worst, and writes their original CoNLL-U blocks. Definitions (docs/definitions.md,
"Ensemble selection and training data"):

* targets: the run's weakest relations, its `relations` base relations with at least `min_edges`
  edges and a DEA below its micro DEA, lowest DEA first (then more edges, then the name); and its
  most suspicious subtrees, its `subtrees` subtrees of one view with is_suspicious, highest
  suspicion first (then larger C(f), then the subtree);
* richness of a treebank sentence: its edges of a target relation plus its occurrences of a
  target subtree (analysis trees, punctuation removed), each instance counting 1;
* the richest sentences: richness descending, then fewer analysis words (denser), then treebank
  order; only sentences with richness > 0. The file lists them in that order.

Everything is read through the read-only sandbox (srlens/sandbox.py), names as bound parameters.
"""

import difflib
import os
import secrets
from dataclasses import dataclass
from pathlib import Path

import duckdb

from srlens import sandbox
from srlens.definitions import MINING_VIEWS
from srlens.loaders.store import is_warehouse_file


class SuggestError(ValueError):
    """Arguments that cannot be used: one line saying which and why."""


@dataclass(frozen=True)
class Target:
    kind: str  # 'relation' or 'subtree'
    key: str  # base relation, or subtree as written in suspicious_subtrees
    score: float  # the run's DEA of the relation, or the subtree's suspicion S(f)
    support: int  # the relation's edges, or C(f), in the run's corpus
    in_treebank: int = 0  # instances in the treebank
    in_selection: int = 0  # instances in the chosen sentences


@dataclass(frozen=True)
class Suggestion:
    submission_id: str
    run_dea: float
    treebank: str
    view: str
    requested: int  # --sentences
    targets: tuple  # Target, relations first
    sent_ids: tuple  # chosen, richest first
    richness: tuple  # of each chosen sentence
    candidates: int  # treebank sentences with richness > 0
    same_corpus: bool  # the treebank is the corpus the run was scored on
    languages: tuple = ()  # (the run's corpus's language, the treebank's)


def weakest_relations(con, submission_id, count, min_edges):
    rows = con.execute(
        """
        select d.relation, d.dea, d.edges
        from dea_by_relation d
        join submission_scores s using (submission_id)
        where d.submission_id = $id and d.edges >= $min_edges and d.dea < s.dea
        order by d.dea, d.edges desc, d.relation
        limit $count""",
        {"id": submission_id, "min_edges": min_edges, "count": count},
    ).fetchall()
    return [Target("relation", relation, dea, edges) for relation, dea, edges in rows]


def suspicious_subtrees(con, submission_id, count, view):
    rows = con.execute(
        """
        select subtree, suspicion, c_f
        from suspicious_subtrees
        where submission_id = $id and view = $view and is_suspicious
        order by suspicion desc, c_f desc, subtree
        limit $count""",
        {"id": submission_id, "view": view, "count": count},
    ).fetchall()
    return [Target("subtree", subtree, suspicion, c_f) for subtree, suspicion, c_f in rows]


# Instances of the targets in each sentence of the treebank: (sent_idx, kind, key, n).
HITS_SQL = """
with hits as (
    select sent_idx, 'relation' as kind, base_deprel as key, count(*) as n
    from intermediate.int_analysis_edges
    where corpus = $corpus and list_contains($relations, base_deprel)
    group by all
    union all
    select t.sent_idx, 'subtree', s.subtree, t.occurrences
    from intermediate.int_subtree_support s
    join intermediate.int_subtrees t using (corpus, form_id)
    where s.corpus = $corpus and s.view = $view and list_contains($subtrees, s.subtree)
)
"""

RICHEST_SQL = (
    HITS_SQL
    + """,
richness as (select sent_idx, sum(n) as richness from hits group by sent_idx)
select r.sent_idx, r.richness, count(w.pos) as words
from richness r
left join intermediate.int_analysis_words w on w.corpus = $corpus and w.sent_idx = r.sent_idx
group by all
order by r.richness desc, words, r.sent_idx
"""
)

COUNTS_SQL = (
    HITS_SQL
    + """
select kind, key, sum(n) as in_treebank, sum(n) filter (where list_contains($chosen, sent_idx)) as in_selection
from hits
group by all
"""
)

BLOCKS_SQL = """
select s.sent_idx, s.sent_id, s.comments,
       list(concat_ws(chr(9), t.id, t.form, t.lemma, t.upos, t.xpos, t.feats, t.head, t.deprel, t.deps, t.misc)
            order by t.line_no) as lines
from raw.sentences s
join raw.tokens t using (corpus, sent_idx)
where s.corpus = $corpus and list_contains($chosen, s.sent_idx)
group by all
"""


def _check_arguments(
    con, warehouse, submission_id, treebank, sentences, out, relations, subtrees, view, min_edges, force
):
    for name, value, low in (
        ("--sentences", sentences, 1),
        ("--relations", relations, 0),
        ("--subtrees", subtrees, 0),
        ("--min-edges", min_edges, 1),
    ):
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise SuggestError(f"{name} takes a whole number, {low} or more, got {value!r}")
    _check_out(Path(out), warehouse, force)
    if view not in MINING_VIEWS:
        raise SuggestError(f"--view takes one of {', '.join(MINING_VIEWS)}, got {view!r}")
    if not relations and not subtrees:
        raise SuggestError("--relations 0 and --subtrees 0: nothing to target")
    if con.execute("select count(*) from raw.sentences where corpus = $c", {"c": treebank}).fetchone()[0] == 0:
        if treebank in _reference_free(con):
            raise SuggestError(
                f"--treebank {treebank}: a corpus without a treebank (its runs were loaded with --no-reference): "
                "no treebank sentence to pick; name a loaded treebank"
            )
        raise SuggestError(f"--treebank {treebank}: no such corpus is loaded (srlens load-treebank FILE --corpus NAME)")
    marts = {
        r[0]
        for r in con.execute("select table_name from information_schema.tables where table_schema = 'main'").fetchall()
    }
    if not {"submission_scores", "dea_by_relation", "suspicious_subtrees"} <= marts:
        raise SuggestError("the warehouse is not built yet: run srlens build")
    row = con.execute("select dea from submission_scores where submission_id = $id", {"id": submission_id}).fetchone()
    if row is None:
        runs = [r[0] for r in con.execute("select submission_id from submission_scores order by 1").fetchall()]
        close = difflib.get_close_matches(submission_id, runs, n=1)
        hint = f"did you mean {close[0]}? " if close else ""
        raise SuggestError(
            f"--submission {submission_id}: no such run in the built warehouse; {hint}"
            "the runs are the submission_id column of submission_scores"
        )
    if row[0] is None:
        raise SuggestError(f"--submission {submission_id}: the run has no DEA (no reference edge): nothing to target")
    if (
        con.execute(
            "select count(*) from intermediate.int_analysis_words where corpus = $c", {"c": treebank}
        ).fetchone()[0]
        == 0
    ):
        raise SuggestError(f"--treebank {treebank}: loaded but not built yet (run srlens build), or it has no word")
    return row[0]


def _reference_free(con):
    """The corpora without a treebank (none in a warehouse loaded before srlens had them)."""
    try:
        return {r[0] for r in con.execute("select corpus from raw.reference_free_corpora").fetchall()}
    except duckdb.CatalogException:
        return set()


def _check_out(out, warehouse, force):
    """--out must be a new file (or, with --force, any file but the warehouse's, whatever its name)."""
    if out.is_dir():
        raise SuggestError(f"--out {out}: is a folder; name the .conllu file to write")
    if is_warehouse_file(out, warehouse):
        raise SuggestError(f"--out {out}: is the warehouse {warehouse} (or another name of it); name another file")
    if out.exists() and not force:  # it may be the treebank itself
        raise SuggestError(f"--out {out}: exists; name a new file, or give --force to replace it")
    if not out.parent.is_dir():
        raise SuggestError(f"--out {out}: no folder {out.parent}")


def suggest(
    warehouse, submission_id, treebank, sentences, out, relations=5, subtrees=5, view="dep", min_edges=5, force=False
):
    """Choose the richest sentences and write them to `out` (CoNLL-U), replacing an existing file only
    with `force`; returns a Suggestion."""
    con = sandbox.connect(warehouse)
    try:
        run_dea = _check_arguments(
            con, warehouse, submission_id, treebank, sentences, out, relations, subtrees, view, min_edges, force
        )
        targets = weakest_relations(con, submission_id, relations, min_edges) + suspicious_subtrees(
            con, submission_id, subtrees, view
        )
        if not targets:
            raise SuggestError(
                f"--submission {submission_id}: no relation with {min_edges} or more edges below "
                f"its DEA and no suspicious {view} subtree: nothing to target"
            )
        params = {
            "corpus": treebank,
            "view": view,
            "relations": [t.key for t in targets if t.kind == "relation"] or [""],
            "subtrees": [t.key for t in targets if t.kind == "subtree"] or [""],
        }
        ranked = con.execute(RICHEST_SQL, params).fetchall()
        chosen = ranked[:sentences]
        chosen_idx = [idx for idx, _, _ in chosen]
        counts = {
            (kind, key): (in_treebank, in_selection or 0)
            for kind, key, in_treebank, in_selection in con.execute(
                COUNTS_SQL, {**params, "chosen": chosen_idx}
            ).fetchall()
        }
        blocks = {
            idx: (sent_id, comments, lines)
            for idx, sent_id, comments, lines in con.execute(
                BLOCKS_SQL, {"corpus": treebank, "chosen": chosen_idx}
            ).fetchall()
        }
        corpus = con.execute(
            "select corpus from submission_scores where submission_id = $id", {"id": submission_id}
        ).fetchone()[0]
        languages = tuple(
            dict(
                con.execute(
                    "select corpus, language from raw.treebank_files where corpus in ($run, $treebank)",
                    {"run": corpus, "treebank": treebank},
                ).fetchall()
            ).get(name)
            for name in (corpus, treebank)
        )
    finally:
        con.close()
    if not chosen:
        raise SuggestError(
            f"no sentence of {treebank} holds one of the {len(targets)} targets of {submission_id}: nothing written"
        )
    write_blocks(out, [blocks[idx][1:] for idx in chosen_idx])
    return Suggestion(
        submission_id,
        run_dea,
        treebank,
        view,
        sentences,
        tuple(Target(t.kind, t.key, t.score, t.support, *counts.get((t.kind, t.key), (0, 0))) for t in targets),
        tuple(blocks[idx][0] for idx in chosen_idx),
        tuple(r for _, r, _ in chosen),
        len(ranked),
        corpus == treebank,
        languages,
    )


def write_blocks(out, blocks):
    """The sentence blocks (comment lines, token lines), each followed by a blank line; written to a
    temporary file first, so a failed write leaves no half file. The temporary file is new (O_EXCL, a
    name of its own): nothing planted under its name (a link to the warehouse) is written through."""
    out = Path(out)
    text = "".join("\n".join([*comments, *lines]) + "\n\n" for comments, lines in blocks)
    partial = out.with_name(f".{out.name}.{secrets.token_hex(8)}.partial")
    handle = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            file.write(text)
        os.replace(partial, out)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise


def report(s, out):
    """What was targeted and written, as printed by the command: a list of lines."""
    relations = sum(t.kind == "relation" for t in s.targets)
    lines = [
        f"run {s.submission_id} (DEA {s.run_dea:.3f}): {relations} weakest relations, "
        f"{len(s.targets) - relations} most suspicious {s.view} subtrees"
    ]
    width = max(len(t.key) for t in s.targets)
    for t in s.targets:
        what = (
            f"DEA {t.score:.3f} on {t.support} edges"
            if t.kind == "relation"
            else f"suspicion {t.score:.3f} in {t.support} sentences"
        )
        lines.append(
            f"  {t.kind:<8} {t.key:<{width}}  {what}; instances chosen {t.in_selection} "
            f"of {t.in_treebank} in {s.treebank}"
        )
    short = f" (only {s.candidates} sentences hold a target)" if s.candidates < s.requested else ""
    lines.append(
        f"wrote {len(s.sent_ids)} sentences of {s.treebank} to {out}{short}: "
        f"{sum(s.richness)} target instances, {min(s.richness)} to {max(s.richness)} per sentence"
    )
    if s.same_corpus:
        lines.append(f"note: {s.treebank} is the corpus the run was scored on (its test sentences)")
    if len(set(s.languages)) > 1:  # allowed (a multilingual system), but rarely what was meant
        lines.append(
            f"note: {s.treebank} is in language {s.languages[1]}, the run's corpus in {s.languages[0]}: "
            "these sentences are of another language than the run's"
        )
    return lines
