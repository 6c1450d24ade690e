"""A plain pure-Python reading of SPEC section 12's ensemble selection, for tests.

Inputs are the reference analysis trees and the output lemmas of each run, not the warehouse's
figures: DEA comes from tests/support/reference_scores.dea and BLEU from nltk's corpus_bleu. The readings
of docs/definitions.md ("Ensemble selection and training data") are followed: the overall DEA used
as fallback and first tie-break is learned like the per-relation DEA (leaving the sentence out, or
on the tuning corpus); the expected DEA is summed in relation order with plain float additions;
a run that did not realize a sentence counts as an empty output in the best-single figures.
"""

from dataclasses import dataclass, field

from nltk.translate.bleu_score import SmoothingFunction, corpus_bleu

from tests.support.reference_scores import dea


@dataclass
class Run:
    submission_id: str
    team: str
    run: str
    campaign: str
    outputs: dict  # sent_idx -> output lemmas (lower-cased, punctuation removed); realized sentences only
    scores: dict = field(default_factory=dict)  # sent_idx -> (matched, edges, {relation: [edges, matched]})


def score_runs(trees, runs):
    """Fill each run's per-sentence DEA; trees: sent_idx -> AnalysisTree of the run's corpus."""
    for run in runs:
        for idx, out in run.outputs.items():
            tree = trees[idx]
            run.scores[idx] = dea([lemma.lower() for lemma in tree.lemmas], tree.heads, tree.deprels, out)


def _totals(run):
    relations, matched, edges = {}, 0, 0
    for m, e, by_relation in run.scores.values():
        matched += m
        edges += e
        for r, (re, rm) in by_relation.items():
            total = relations.setdefault(r, [0, 0])
            total[0] += re
            total[1] += rm
    return matched, edges, relations


def _teacher(run, tuning_runs):
    same = [t for t in tuning_runs if t.team == run.team and t.run == run.run and t.outputs]
    same.sort(key=lambda t: (t.campaign != run.campaign, t.submission_id))
    return same[0] if same else None


def _bleu(trees, pairs):
    refs = [[[lemma.lower() for lemma in trees[idx].lemmas]] for idx, _ in pairs]
    return corpus_bleu(refs, [out for _, out in pairs], smoothing_function=SmoothingFunction().method2)


def select(trees, runs, tuning_runs=None, excluded=()):
    """(selection row, {submission_id: choices row}, {sent_idx: (chosen id, {id: expected DEA})}).

    runs: the target corpus's runs (scored); tuning_runs: the tuning corpus's runs (scored), or
    None to learn on the target leaving each sentence out.
    """
    leave_out = tuning_runs is None
    candidates = [r for r in runs if r.outputs and r.submission_id not in excluded]
    teachers = {r.submission_id: (r if leave_out else _teacher(r, tuning_runs)) for r in candidates}
    totals = {sid: (_totals(t) if t else None) for sid, t in teachers.items()}

    choices = {}
    for idx in sorted({i for r in candidates for i in r.outputs}):
        ranked, expected_of = [], {}
        for run in (r for r in candidates if idx in r.outputs):
            m_x, e_x, rel_x = run.scores[idx]
            expected = learned = None
            if totals[run.submission_id]:
                matched, edges, relations = totals[run.submission_id]
                own = 1 if leave_out else 0
                if edges - own * e_x > 0:
                    learned = (matched - own * m_x) / (edges - own * e_x)
                if not rel_x:
                    expected = learned
                else:
                    terms = []
                    for r in sorted(rel_x):
                        weight, own_matched = rel_x[r]
                        total_edges, total_matched = relations.get(r, [0, 0])
                        left = total_edges - own * weight
                        terms.append((weight, (total_matched - own * own_matched) / left if left > 0 else learned))
                    if all(value is not None for _, value in terms):
                        s = 0.0
                        for weight, value in terms:
                            s += weight * value
                        expected = s / sum(weight for weight, _ in terms)
            expected_of[run.submission_id] = expected
            ranked.append((expected is None, -(expected or 0.0), learned is None, -(learned or 0.0), run.submission_id))
        choices[idx] = (min(ranked)[-1], expected_of)

    by_id = {r.submission_id: r for r in candidates}
    edges = sum(by_id[sid].scores[idx][1] for idx, (sid, _) in choices.items())
    chosen_matched = sum(by_id[sid].scores[idx][0] for idx, (sid, _) in choices.items())
    oracle = sum(max(r.scores[idx][0] for r in candidates if idx in r.outputs) for idx in choices)

    per_run = {}
    for run in candidates:
        matched = sum(run.scores[idx][0] for idx in choices if idx in run.outputs)
        per_run[run.submission_id] = {
            "team": run.team,
            "run": run.run,
            "learned_from": teachers[run.submission_id].submission_id if teachers[run.submission_id] else None,
            "ensemble_sentences": len(choices),
            "realized": sum(1 for idx in choices if idx in run.outputs),
            "chosen": sum(1 for sid, _ in choices.values() if sid == run.submission_id),
            "edges": edges,
            "matched": matched,
            "dea": matched / edges if edges else None,
            "corpus_bleu": _bleu(trees, [(idx, run.outputs.get(idx, [])) for idx in choices]),
        }
    best = min(per_run, key=lambda sid: (per_run[sid]["dea"] is None, -(per_run[sid]["dea"] or 0.0), sid))
    for sid, row in per_run.items():
        row["chosen_share"] = row["chosen"] / len(choices)
        row["is_best_single"] = sid == best

    selection = {
        "learned_on": "leave_one_out" if leave_out else "tuning_corpus",
        "runs": len(candidates),
        "runs_learned": sum(1 for t in teachers.values() if t),
        "runs_chosen": len({sid for sid, _ in choices.values()}),
        "sentences": len(choices),
        "edges": edges,
        "ensemble_matched": chosen_matched,
        "ensemble_dea": chosen_matched / edges if edges else None,
        "ensemble_bleu": _bleu(trees, [(idx, by_id[sid].outputs[idx]) for idx, (sid, _) in choices.items()]),
        "best_single_submission": best,
        "best_single_matched": per_run[best]["matched"],
        "best_single_dea": per_run[best]["dea"],
        "best_single_bleu": per_run[best]["corpus_bleu"],
        "oracle_matched": oracle,
        "oracle_dea": oracle / edges if edges else None,
    }
    return selection, per_run, choices
