"""Baseline realizers: the linearization model of Hall and Nemec (2007) on UD trees.

A realizer gets a reference tree without its word order (every word's lemma
or form, UPOS, relation and head) and must put the words in order. This one
orders each head's dependents bottom-up, as in Hall and Nemec's Algorithm 1,
so the output is always projective with respect to the input tree.

Model (`train`)
---------------
Two distributions, both counted set-based in SQL from the raw token table of a
loaded treebank (so they work right after `load-treebank`, no build needed):

* precedence: P(a before b | a, b, head) for two dependents a, b of the same
  head (paper, Eq. 7). Counted by a self-join of sibling pairs: every ordered
  pair (a, b) of siblings adds 1 to `before` of key (a, b) when a precedes b
  in the reference, else to `after`. Both orders of a pair are stored, so
  P(b before a) = 1 - P(a before b) falls out of the counts.
* head side: P(c before head | c, head), the position of the head among its
  dependents (the paper's second step; Eq. 8 models it as the triple "left
  child < governor < right child"). We count, for every dependent, whether it
  precedes its head: the same pairwise framework with the head as one more
  element, counted by one set-based pass, and defined whatever the predicted
  neighbours of the head are (the triple event depends on which children end
  up adjacent, which changes with the predicted order).

Conditioning variables (paper: functor and tag of both children and of the
governor). For UD: the full relation (`nmod:poss` is not `nmod`) and the UPOS
of each dependent, and the head's UPOS and relation ('<root>' for dependents of
the virtual root). Punctuation takes part in linearization, or the output
text could not contain it; its UPOS feature is `PUNCT:` plus the mark itself,
because UPOS lumps opening and closing brackets, commas and full stops, whose
order is lexically fixed. The scores of SPEC 3-7 ignore punctuation, so this
only shapes the text (and, through the joint search, the order of the words
around it).

Back-off and interpolation. The paper smooths with linear interpolation of
lower-order distributions obtained by deleting the rightmost conditioning
variable. We delete, in this order: the head's relation, the head's UPOS, the
UPOS of the dependents, the relations of the dependents (the pair's two
values of a variable are always dropped together, keeping the model
symmetric), and end with the uniform 0.5. The relation is kept longest: UD
relations are surface-syntactic, so they carry most of the order (nsubj and
obj are both NOUN). Level 0 is the most specific context. The paper sets the
interpolation weights by EM on held-out data; we use the parameter-free
Witten-Bell rule instead:

    P_l = (before_l + u_l * P_{l+1}) / (n_l + u_l),   P_L = 0.5

where n_l is the context's count and u_l the number of distinct outcomes seen
in it (1 or 2); an unseen context (n_l = 0) passes P_{l+1} through. A context
seen 20 times, always "before", over a lower level at 0.5 gives 20.5/21 = 0.976.

Ablations (`features`): any non-empty subset of ("head", "child_pos",
"child_rel"); "head" is the head's UPOS and relation together. The back-off
chain is the full chain without the dropped variables, so the model without
child relations backs off from (child UPOS, head) to child UPOS to 0.5.

Search (`generate`)
-------------------
For a head with k dependents, the dependents are ordered by the permutation
that maximizes the product of P(a before b) over all pairs a before b (the
paper's Eq. 7 scores adjacent children c_i, c_i+1; over all pairs, every
training pair's evidence counts and the score is a proper linear-ordering
objective). The exact maximum over all k! permutations is found by dynamic
programming over subsets, O(2^k k), for k <= EXACT_MAX (12; in en_ewt train
only 7 of 83,960 heads, the virtual root included, have more dependents).
Above that: sort by the sum of P(a before b) over b, then swap adjacent
dependents while a swap raises the score. Then, as in the paper's greedy
second step, the head goes into the gap that maximizes
prod P(c before head) over the dependents left of it times
prod P(head before c) over those right of it.

Determinism without leaking the reference order: word ids are the reference
positions, so they never break ties. Each word gets a rank from a seeded hash
of (seed, sent_id, word id); dependents enter the search in rank order, and
among permutations of equal score the search keeps the first one found in
that order. Equal-score gaps for the head go to the leftmost one.

`random` (reserved model name): the paper's baseline "sorts subtrees of each
node randomly": each head's domain (the head and its dependents) is shuffled
uniformly with a generator seeded by (seed, sent_id, head id); the output is
still projective.

Output: an sr-format file (`# sent_id = ...` / `# text = ...`) of syntactic
words (a multiword token such as "don't" comes out as its words "do n't", as
the reference's words are what the scores compare), written to
`<warehouse dir>/baselines/<campaign>+<corpus>+<team>+<run>.<hash>.sr` (the names
percent-encoded, plus a short hash of them: `loaders.names.file_in`) and loaded
with `loaders.load.load_outputs(..., fmt='sr')`. Names are checked first
(`loaders.names.check_name`), like those of load-outputs.
"""

from __future__ import annotations

import hashlib
import math
import os
import random
import tempfile
import time
from pathlib import Path

from srlens.loaders.load import load_outputs
from srlens.loaders.names import check_name, file_in, submission_id
from srlens.loaders.store import open_for_write, transaction, utc_now

FEATURES = ("head", "child_pos", "child_rel")
# Deletion order of the back-off chain (first = deleted first).
BACKOFF_ORDER = ("head_rel", "head_pos", "child_pos", "child_rel")
FEATURE_VARIABLES = {"head": ("head_rel", "head_pos"), "child_pos": ("child_pos",), "child_rel": ("child_rel",)}
RANDOM_MODEL = "random"
INPUTS = ("lemma", "form")
EXACT_MAX = 12
ANY = "*"  # key value of a variable the level does not condition on
SMOOTHING = "witten-bell interpolation, uniform 0.5 floor"

# Columns each variable occupies in the two count tables (keys in BACKOFF_ORDER).
PAIR_COLUMNS = {
    "head_rel": ("head_rel",),
    "head_pos": ("head_pos",),
    "child_pos": ("a_pos", "b_pos"),
    "child_rel": ("a_rel", "b_rel"),
}
SIDE_COLUMNS = {"head_rel": ("head_rel",), "head_pos": ("head_pos",), "child_pos": ("c_pos",), "child_rel": ("c_rel",)}

SCHEMA_SQL = """
create schema if not exists baseline;

-- One row per trained model.
create table if not exists baseline.models (
    model      varchar not null,
    treebank   varchar not null,    -- the corpus it was counted from
    features   varchar[] not null,  -- subset of head, child_pos, child_rel
    variables  varchar[] not null,  -- back-off chain, deleted first to last
    sentences  integer not null,
    words      integer not null,
    pairs      bigint not null,     -- ordered sibling pairs counted
    smoothing  varchar not null,
    trained_at timestamp not null
);

-- P(a before b | context): siblings a, b under one head; '*' = not conditioned on.
create table if not exists baseline.precedence_counts (
    model    varchar not null,
    level    integer not null,      -- 0 = most specific context
    head_pos varchar not null,
    head_rel varchar not null,
    a_pos    varchar not null,
    a_rel    varchar not null,
    b_pos    varchar not null,
    b_rel    varchar not null,
    before   integer not null,      -- a preceded b
    after    integer not null       -- b preceded a
);

-- P(c before head | context): where the head goes among its dependents.
create table if not exists baseline.head_counts (
    model    varchar not null,
    level    integer not null,
    head_pos varchar not null,
    head_rel varchar not null,
    c_pos    varchar not null,
    c_rel    varchar not null,
    before   integer not null,      -- the dependent preceded its head
    after    integer not null
);

-- One row per generated run: which model and settings produced a submission.
create table if not exists baseline.runs (
    submission_id  varchar not null,
    model          varchar not null,
    input          varchar not null,
    seed           integer not null,
    path           varchar not null,
    sentences      integer not null,
    words          integer not null,
    exact_heads    integer not null,  -- heads ordered by the exact search
    fallback_heads integer not null,  -- heads above EXACT_MAX, ordered greedily
    seconds        double not null,
    generated_at   timestamp not null
);
"""

# Syntactic words of one corpus with their own and their head's features.
# Punctuation's POS feature is the mark itself (see the module docstring).
NODES_SQL = """
words as (
    select sent_idx, id::integer as word_id, coalesce(try_cast(head as integer), 0) as head,
           deprel as rel,
           case when upos = 'PUNCT' then 'PUNCT:' || form else upos end as pos
    from raw.tokens
    where corpus = $corpus and regexp_full_match(id, '[0-9]+')
),
nodes as (
    select w.sent_idx, w.word_id, w.head, w.rel, w.pos,
           coalesce(h.pos, '<root>') as head_pos, coalesce(h.rel, '<root>') as head_rel
    from words w
    left join words h on h.sent_idx = w.sent_idx and h.word_id = w.head
)
"""


class BaselineError(Exception):
    """A problem the user must fix (unknown corpus or model, bad argument)."""


def ensure_schema(con):
    con.execute(SCHEMA_SQL)


def model_variables(features):
    """The back-off chain of a feature set, most specific context first."""
    features = tuple(features)
    unknown = sorted(set(features) - set(FEATURES))
    if unknown or not features:
        raise BaselineError(f"features must be a non-empty subset of {', '.join(FEATURES)} (got {features!r})")
    included = {v for f in features for v in FEATURE_VARIABLES[f]}
    return [v for v in BACKOFF_ORDER if v in included]


def default_model_name(treebank_corpus, features=FEATURES):
    dropped = [f for f in FEATURES if f not in features]
    return treebank_corpus + "".join(f"-no_{f}" for f in dropped)


# ---------------------------------------------------------------------------
# Training


def _count_sql(table, table_columns, variables, source):
    """INSERT ... SELECT counting every back-off level in one grouping-sets pass."""
    # Level l conditions on the variables left after deleting the first l of the chain.
    sets = []
    for level in range(len(variables)):
        cols = [c for v in variables[level:] for c in table_columns[v]]
        sets.append("(" + ", ".join(cols) + ")")
    all_cols = [c for cols in table_columns.values() for c in cols]
    used = {c for v in variables for c in table_columns[v]}
    # The level is the number of chain variables grouped away (their first column tells).
    level = " + ".join(f"grouping({table_columns[v][0]})" for v in variables)
    select_cols = ", ".join(f"coalesce({c}, '{ANY}')" if c in used else f"'{ANY}'" for c in all_cols)
    return f"""
        insert into baseline.{table} (model, level, {", ".join(all_cols)}, before, after)
        select $model, {level}, {select_cols},
               count(*) filter (where before)::integer, count(*) filter (where not before)::integer
        from {source}
        group by grouping sets ({", ".join(sets)})"""


def train(warehouse, treebank_corpus, model_name=None, features=FEATURES):
    """Count the model's statistics from a loaded treebank; returns the model name.

    Replaces a previous model of the same name in one transaction.
    """
    variables = model_variables(features)
    features = [f for f in FEATURES if f in features]
    treebank_corpus = check_name(treebank_corpus, "--treebank")
    if model_name is None:
        model_name = default_model_name(treebank_corpus, features)
    model_name = check_name(model_name, "--model")
    if model_name == RANDOM_MODEL:
        raise BaselineError(f"{RANDOM_MODEL!r} is reserved for the random-order baseline")
    params = {"corpus": treebank_corpus, "model": model_name}
    pairs_source = f"""(
        with {NODES_SQL}
        select a.head_pos, a.head_rel, a.pos as a_pos, a.rel as a_rel, b.pos as b_pos, b.rel as b_rel,
               a.word_id < b.word_id as before
        from nodes a
        join nodes b on b.sent_idx = a.sent_idx and b.head = a.head and b.word_id <> a.word_id
    )"""
    side_source = f"""(
        with {NODES_SQL}
        select head_pos, head_rel, pos as c_pos, rel as c_rel, word_id < head as before
        from nodes where head <> 0
    )"""
    with open_for_write(warehouse) as con:
        ensure_schema(con)
        sentences, words = con.execute(
            "select count(distinct sent_idx), count(*) from raw.tokens "
            "where corpus = $corpus and regexp_full_match(id, '[0-9]+')",
            {"corpus": treebank_corpus},
        ).fetchone()
        if not sentences:
            raise BaselineError(f"no treebank is loaded for corpus {treebank_corpus!r} (load-treebank first)")
        with transaction(con):
            for table in ("models", "precedence_counts", "head_counts"):
                con.execute(f"delete from baseline.{table} where model = $model", {"model": model_name})
            con.execute(_count_sql("precedence_counts", PAIR_COLUMNS, variables, pairs_source), params)
            con.execute(_count_sql("head_counts", SIDE_COLUMNS, variables, side_source), params)
            pairs = con.execute(
                "select coalesce(sum(before + after), 0) from baseline.precedence_counts "
                "where model = $model and level = 0",
                {"model": model_name},
            ).fetchone()[0]
            con.execute(
                "insert into baseline.models values ($model, $corpus, $features, $variables, "
                "$sentences, $words, $pairs, $smoothing, $now)",
                {
                    **params,
                    "features": features,
                    "variables": variables,
                    "sentences": sentences,
                    "words": words,
                    "pairs": pairs,
                    "smoothing": SMOOTHING,
                    "now": utc_now(),
                },
            )
    return model_name


def _read_only(warehouse):
    """A read-only connection; duckdb is imported here, not at the top, so that the command line's
    parser reads FEATURES without it."""
    import duckdb  # noqa: PLC0415

    return duckdb.connect(str(warehouse), read_only=True)


def list_models(warehouse):
    """(model, treebank, features) of every trained model; [] when there is none."""
    if not Path(warehouse).exists():
        return []
    con = _read_only(warehouse)
    try:
        if not _has_schema(con):
            return []
        return [
            tuple(r)
            for r in con.execute("select model, treebank, features from baseline.models order by model").fetchall()
        ]
    finally:
        con.close()


# ---------------------------------------------------------------------------
# Probabilities of a corpus's pairs (set-based), for the search


def _interpolated(levels):
    """SELECT items p0 = P(before) and q0 = P(after), interpolated from counts x_l/y_l of each level.

    Both directions are computed by the same recursion rather than q = 1 - p: where every level
    agrees, p comes within 1e-15 of 1 and 1 - p would lose all its digits. DuckDB lets a select
    item use an alias defined to its left, so p_l refers to p_{l+1}.
    """
    items = [f"0.5::double as p{levels}", f"0.5::double as q{levels}"]
    for level in reversed(range(levels)):
        x, y = f"coalesce(x{level}, 0)", f"coalesce(y{level}, 0)"
        u = f"(({x} > 0)::integer + ({y} > 0)::integer)"
        for out, count in (("p", x), ("q", y)):
            nxt = f"{out}{level + 1}"
            items.append(
                f"case when {x} + {y} > 0 then ({count} + {u} * {nxt}) / ({x} + {y} + {u}) "
                f"else {nxt} end as {out}{level}"
            )
    return ", ".join(items)


def _probability_sql(table, table_columns, variables, source):
    """Every row of `source` (named like the table's key columns) with its counts at each level."""
    joins, counts = [], []
    for level in range(len(variables)):
        kept = set(variables[level:])
        cond = [f"c{level}.model = $model", f"c{level}.level = {level}"]
        for v, cols in table_columns.items():
            for col in cols:
                cond.append(f"c{level}.{col} = " + (f"s.{col}" if v in kept else f"'{ANY}'"))
        joins.append(f"left join baseline.{table} c{level} on " + " and ".join(cond))
        counts.append(f"c{level}.before as x{level}, c{level}.after as y{level}")
    return f"""
        select *, {_interpolated(len(variables))}
        from (select s.*, {", ".join(counts)} from {source} s {" ".join(joins)})"""


def precedence_probabilities(warehouse, corpus, model_name):
    """Interpolated probabilities for the trees of `corpus` under a trained model.

    Returns (pairs, sides): pairs[(sent_idx, a, b)] = (P(a before b), P(b before a)) for every two
    siblings a < b (word ids); sides[(sent_idx, c)] = (P(c before its head), P(c after it)).
    """
    con = _read_only(warehouse)
    try:
        model = _model(con, model_name)
        return _probabilities(con, corpus, model["variables"], model["model"])
    finally:
        con.close()


def _probabilities(con, corpus, variables, model_name):
    params = {"corpus": corpus, "model": model_name}
    pair_source = f"""(
        with {NODES_SQL}
        select a.sent_idx, a.word_id as a_id, b.word_id as b_id, a.head_pos, a.head_rel,
               a.pos as a_pos, a.rel as a_rel, b.pos as b_pos, b.rel as b_rel
        from nodes a
        join nodes b on b.sent_idx = a.sent_idx and b.head = a.head and b.word_id > a.word_id
    )"""  # a < b only enumerates each unordered pair once; the search never sees which is first
    side_source = f"""(
        with {NODES_SQL}
        select sent_idx, word_id, head_pos, head_rel, pos as c_pos, rel as c_rel from nodes where head <> 0
    )"""
    pair_sql = _probability_sql("precedence_counts", PAIR_COLUMNS, variables, pair_source)
    side_sql = _probability_sql("head_counts", SIDE_COLUMNS, variables, side_source)
    pairs = {
        (s, a, b): (p, q)
        for s, a, b, p, q in con.execute(f"select sent_idx, a_id, b_id, p0, q0 from ({pair_sql})", params).fetchall()
    }
    sides = {
        (s, c): (p, q)
        for s, c, p, q in con.execute(f"select sent_idx, word_id, p0, q0 from ({side_sql})", params).fetchall()
    }
    return pairs, sides


# ---------------------------------------------------------------------------
# Search


def _rank(seed, sent_id, word_id):
    """A pseudo-random, seeded rank of a word: the tie-breaker that knows nothing of word order."""
    digest = hashlib.blake2b(f"{seed}\x1f{sent_id}\x1f{word_id}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big")


def best_order(logp):
    """Indices 0..k-1 in the order maximizing sum of logp[i][j] over i placed before j.

    Exact (dynamic programming over subsets) up to EXACT_MAX items; a greedy sort with
    adjacent-swap improvement above. Among equal scores the first found wins, items being
    tried in index order. Returns (order, exact).
    """
    k = len(logp)
    if k <= 1:
        return list(range(k)), True
    if k > EXACT_MAX:
        return _greedy_order(logp), False
    size = 1 << k
    # into[x][S] = sum of logp[y][x] for y in S: the gain of placing x right after the set S.
    into = []
    for x in range(k):
        col = [0.0] * size
        row = [logp[y][x] for y in range(k)]
        for s in range(1, size):
            low = s & -s
            col[s] = col[s ^ low] + row[low.bit_length() - 1]
        into.append(col)
    best = [-math.inf] * size
    last = [0] * size
    best[0] = 0.0
    for s in range(1, size):
        top, arg = -math.inf, -1
        rest = s
        while rest:
            low = rest & -rest
            x = low.bit_length() - 1
            rest ^= low
            score = best[s ^ low] + into[x][s ^ low]
            if score > top:
                top, arg = score, x
        best[s], last[s] = top, arg
    order, s = [], size - 1
    while s:
        x = last[s]
        order.append(x)
        s ^= 1 << x
    order.reverse()
    return order, True


def _greedy_order(logp):
    k = len(logp)
    # Sort by the total probability of preceding the others, then fix adjacent inversions.
    strength = [sum(math.exp(logp[i][j]) for j in range(k) if j != i) for i in range(k)]
    order = sorted(range(k), key=lambda i: (-strength[i], i))
    changed = True
    while changed:
        changed = False
        for i in range(k - 1):
            a, b = order[i], order[i + 1]
            if logp[b][a] > logp[a][b]:
                order[i], order[i + 1] = b, a
                changed = True
    return order


def _head_gap(side_probs):
    """Number of ordered dependents to put left of the head (leftmost of equal-score gaps).

    side_probs: per ordered dependent, (P(before the head), P(after it)).
    """
    logs_before = [math.log(p) for p, _ in side_probs]
    logs_after = [math.log(q) for _, q in side_probs]
    score = sum(logs_after)  # gap 0: every dependent after the head
    best, arg = score, 0
    for g, (lb, la) in enumerate(zip(logs_before, logs_after), start=1):
        score += lb - la
        if score > best:
            best, arg = score, g
    return arg


def linearize_sentence(sent_id, heads, seed=0, pair_prob=None, side_prob=None, stats=None):
    """Word ids of one tree in output order.

    heads: {word_id: head_id}. pair_prob(a, b) = P(a before b) for siblings, side_prob(c) =
    (P(c before its head), P(c after it)); without them the order is random (a seeded shuffle of
    each head's domain).
    """
    children = {0: []}
    for w in heads:
        children.setdefault(w, [])
    for w, h in heads.items():
        children.setdefault(h, []).append(w)
    rank = {w: _rank(seed, sent_id, w) for w in heads}
    for kids in children.values():
        kids.sort(key=rank.__getitem__)  # search order: seeded rank, never the word id
    domains = {}
    for h, kids in children.items():
        if not kids and h != 0:
            domains[h] = [h]
        elif pair_prob is None:
            items = kids + ([h] if h != 0 else [])
            random.Random(_rank(seed, sent_id, f"domain-{h}")).shuffle(items)
            domains[h] = items
        else:
            logp = [
                [0.0 if i == j else math.log(pair_prob(a, b)) for j, b in enumerate(kids)] for i, a in enumerate(kids)
            ]
            order, exact = best_order(logp)
            if stats is not None:
                stats["exact" if exact else "fallback"] += 1
            ordered = [kids[i] for i in order]
            if h != 0:
                gap = _head_gap([side_prob(c) for c in ordered])
                ordered = ordered[:gap] + [h] + ordered[gap:]
            domains[h] = ordered
    # Expand domains top-down without recursion: a dependent stands for its whole subtree.
    out, stack, seen = [], [(0, iter(domains[0]))], set()
    while stack:
        h, items = stack[-1]
        item = next(items, None)
        if item is None:
            stack.pop()
        elif item == h or item in seen:
            out.append(item)
        else:
            seen.add(item)
            stack.append((item, iter(domains[item])))
    if len(out) < len(heads):  # unreachable words (not a tree): keep them, in rank order
        placed = set(out)
        out += sorted((w for w in heads if w not in placed), key=rank.__getitem__)
    return out


# ---------------------------------------------------------------------------
# Generation


def _has_schema(con):
    return bool(
        con.execute(
            "select count(*) from information_schema.tables where table_schema = 'baseline' and table_name = 'models'"
        ).fetchone()[0]
    )


def _model(con, model_name):
    if not _has_schema(con):
        raise BaselineError("no baseline model is trained in this warehouse (srlens baseline train first)")
    if model_name is None:
        names = [r[0] for r in con.execute("select model from baseline.models order by model").fetchall()]
        if len(names) != 1:
            raise BaselineError("name the model: " + (", ".join(names) if names else "none is trained"))
        model_name = names[0]
    row = con.execute(
        "select model, treebank, features, variables from baseline.models where model = ?", [model_name]
    ).fetchone()
    if row is None:
        raise BaselineError(f"no baseline model named {model_name!r} (srlens baseline train first)")
    return dict(zip(("model", "treebank", "features", "variables"), row))


def run_path(warehouse, corpus, run, team="baseline", campaign="default"):
    """Where generate() writes a run: a file named after its identity in <warehouse folder>/baselines."""
    return file_in(Path(warehouse).resolve().parent / "baselines", (campaign, corpus, team, run), ".sr")


def linearize(warehouse, corpus, model_name, seed=0):
    """{sent_idx: (sent_id, [word ids in output order], {word_id: (form, lemma)})} for a corpus."""
    return _linearize(warehouse, corpus, model_name, seed, {"exact": 0, "fallback": 0})[1]


def _linearize(warehouse, corpus, model_name, seed, stats):
    """(resolved model name, realized sentences as in linearize)."""
    con = _read_only(warehouse)
    try:
        rows = con.execute(
            "select t.sent_idx, s.sent_id, t.id::integer, coalesce(try_cast(t.head as integer), 0), "
            "t.form, t.lemma from raw.tokens t join raw.sentences s using (corpus, sent_idx) "
            "where t.corpus = ? and regexp_full_match(t.id, '[0-9]+') order by t.sent_idx",
            [corpus],
        ).fetchall()
        if not rows:
            raise BaselineError(f"no treebank is loaded for corpus {corpus!r} (load-treebank first)")
        if model_name == RANDOM_MODEL:
            pairs = sides = None
        else:
            model = _model(con, model_name)
            model_name = model["model"]
            pairs, sides = _probabilities(con, corpus, model["variables"], model_name)
    finally:
        con.close()
    sentences = {}
    for sent_idx, sent_id, word_id, head, form, lemma in rows:
        entry = sentences.setdefault(sent_idx, (sent_id, {}, {}))
        entry[1][word_id] = head
        entry[2][word_id] = (form, lemma)
    result = {}
    for sent_idx, (sent_id, heads, words) in sentences.items():
        if pairs is None:
            order = linearize_sentence(sent_id, heads, seed)
        else:

            def pair_prob(a, b, s=sent_idx):
                return pairs[(s, a, b)][0] if a < b else pairs[(s, b, a)][1]

            order = linearize_sentence(sent_id, heads, seed, pair_prob, lambda c, s=sent_idx: sides[(s, c)], stats)
        result[sent_idx] = (sent_id, order, words)
    return model_name, result


def _token(form, lemma, input):
    if input == "lemma" and lemma not in ("", "_"):  # '_' = no lemma annotated: the form stands in
        return lemma
    return form


def generate(warehouse, corpus, run, model_name=None, input="lemma", team="baseline", campaign="default", seed=0):
    """Realize every tree of `corpus`, write the run as an sr file and load it; returns the file's path.

    model_name: a trained model, or 'random' for the seeded random-order baseline; None takes
    the only trained model. input: 'lemma' (the words' lemmas; the form where there is none)
    or 'form' (gold forms: a pure word-order baseline).
    """
    if input not in INPUTS:
        raise BaselineError(f"input must be one of {', '.join(INPUTS)} (got {input!r})")
    campaign, corpus, team, run = (
        check_name(name, argument)
        for name, argument in ((campaign, "--campaign"), (corpus, "--corpus"), (team, "--team"), (run, "--run"))
    )
    path = run_path(warehouse, corpus, run, team, campaign)  # refused names never reach the disk
    started = time.perf_counter()
    stats = {"exact": 0, "fallback": 0}
    model_name, realized = _linearize(warehouse, corpus, model_name, seed, stats)
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = []
    for sent_idx in sorted(realized):
        sent_id, order, words = realized[sent_idx]
        text = " ".join(_token(*words[w], input) for w in order)
        lines.append(f"# sent_id = {sent_id}\n# text = {text}\n\n")
    # A new temporary file (O_EXCL: never one planted there), renamed over the run's file.
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".generating-", suffix=".sr")
    try:
        umask = os.umask(0o022)
        os.umask(umask)
        os.fchmod(fd, 0o666 & ~umask)  # as an ordinary new file, not mkstemp's 0600
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write("".join(lines))
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    load_outputs(warehouse, path, corpus, team, run, campaign=campaign, fmt="sr")
    words = sum(len(order) for _, order, _ in realized.values())
    with open_for_write(warehouse) as con:
        ensure_schema(con)
        sub_id = submission_id(campaign, corpus, team, run)
        with transaction(con):
            con.execute("delete from baseline.runs where submission_id = ?", [sub_id])
            con.execute(
                "insert into baseline.runs values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    sub_id,
                    model_name,
                    input,
                    seed,
                    str(path),
                    len(realized),
                    words,
                    stats["exact"],
                    stats["fallback"],
                    time.perf_counter() - started,
                    utc_now(),
                ],
            )
    return path


# ---------------------------------------------------------------------------
# The demo


DEMO_CORPORA = ("en_ewt_demo", "fr_gsd_demo")
DEMO_RUNS = {"hall_nemec": None, "random_order": RANDOM_MODEL}  # run -> model (None: the corpus's own)


def demo_baselines(warehouse):
    """Train on each demo treebank and realize it (in-sample: the demo has no train split).

    Runs 'hall_nemec' (full model) and 'random_order' under team 'baseline', campaign 'demo',
    from gold forms so the text reads like the demo's other runs. Returns the submission ids.
    """
    ids = []
    for corpus in DEMO_CORPORA:
        model = train(warehouse, corpus)
        for run, run_model in DEMO_RUNS.items():
            generate(
                warehouse, corpus, run, model_name=run_model or model, input="form", team="baseline", campaign="demo"
            )
            ids.append(submission_id("demo", corpus, "baseline", run))
    return ids
