"""The reproducibility signature of a build, in the style of sacrebleu's:

    srlens:0.1.0|proc:aligned|bleu:nltk-3.10.4/m2|dea:lemma-clip|punct:upos|vars:default

Fields, each naming one thing that fixes the figures:

* srlens: the package version (the SQL models and the UDFs that define every figure ship with it);
* proc: how output sentences became words: `aligned`, `user conllu` (a run loaded as CoNLL-U) or the
  stanza processor id, `stanza-1.15.0/en/<hash of the model files>` (srlens/processing/models.py). The
  build's signature lists every language's stanza id joined by `+`; a run's signature
  (submission_scores.signature) names the processor of its own sentences;
* bleu: the nltk whose sentence_bleu the BLEU UDF reproduces, with smoothing method 2 (SPEC 4);
* dea: DEA on lower-cased lemmas with multiset clipping (SPEC 3); punct: punctuation is UPOS PUNCT
  in outputs (SPEC 6). These name the definitions in force; a change of definition changes them
  (or the version);
* vars: `default` when every build var that changes a figure has its default, else the first 8 hex
  digits of the sha256 of those that differ (`srlens status` lists them);
* ref (only in a build with text references, `srlens load-references`, SPEC 13): `parsed:` and the
  stanza processor ids that parsed them, joined by `+`: those corpora's trees are no gold trees.
  corpus_stats.reference_parser names the parser of each corpus.

`srlens build` stores the signature in meta.builds, passes it to dbt as the var `signature`, and
the mart submission_scores gives each run its own (dbt_project/macros/signature.sql).

The scores machine translation users know (SPEC 13) are sacrebleu's, with sacrebleu's own
signatures (sacrebleu_signatures, the var `sacrebleu_signatures`), in submission_scores beside the
scores: `nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0` for corpus BLEU (`eff:yes` for
sentence BLEU) and `nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:2.6.0` for chrF.
"""

import hashlib
import json
from importlib import metadata

from srlens import build_vars

DEFINITIONS = "dea:lemma-clip|punct:upos"


def _vars_field(dbt_vars):
    changed = {
        v.name: dbt_vars[v.name] for v in build_vars.user_vars() if v.name in dbt_vars and dbt_vars[v.name] != v.default
    }
    if not changed:
        return "default"
    return hashlib.sha256(json.dumps(changed, sort_keys=True).encode()).hexdigest()[:8]


def processor_field(dbt_vars):
    """aligned, or the stanza processor ids of the build's languages (sorted, joined by +)."""
    if dbt_vars["processor"] == "stanza" and dbt_vars.get("stanza_processors"):
        return "+".join(pid for _, pid in sorted(dbt_vars["stanza_processors"].items()))
    return dbt_vars["processor"]


def sacrebleu_signatures():
    """{'corpus_bleu', 'sentence_bleu', 'chrf': sacrebleu's signature string}, from the installed sacrebleu."""
    from srlens.udfs.mt_scores import signatures

    return signatures()


def signature(dbt_vars, version=None):
    """The signature of a build with these dbt vars (every var, as srlens build passes them)."""
    version = version or metadata.version("srlens")
    return (
        f"srlens:{version}|proc:{processor_field(dbt_vars)}|bleu:nltk-{dbt_vars['bleu_nltk_version']}/m2"
        f"|{DEFINITIONS}|vars:{_vars_field(dbt_vars)}{reference_field(dbt_vars)}"
    )


def reference_field(dbt_vars):
    """'' without text references, else '|ref:parsed:' and their parsers' ids."""
    parsers = dbt_vars.get("reference_parsers") or {}
    return "|ref:parsed:" + "+".join(pid for _, pid in sorted(parsers.items())) if parsers else ""
