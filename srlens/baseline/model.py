"""The statistical model of the Hall and Nemec (2007) baseline: counted in SQL, read back interpolated.

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

"""

from __future__ import annotations

from srlens.loaders.names import check_name
from srlens.loaders.store import open_for_write, transaction, utc_now

FEATURES = ("head", "child_pos", "child_rel")
# Deletion order of the back-off chain (first = deleted first).
BACKOFF_ORDER = ("head_rel", "head_pos", "child_pos", "child_rel")
FEATURE_VARIABLES = {"head": ("head_rel", "head_pos"), "child_pos": ("child_pos",), "child_rel": ("child_rel",)}
RANDOM_MODEL = "random"
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


def read_only(warehouse):
    """A read-only connection; duckdb is imported here, not at the top, so that the command line's
    parser reads FEATURES without it."""
    import duckdb  # noqa: PLC0415

    return duckdb.connect(str(warehouse), read_only=True)


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
    con = read_only(warehouse)
    try:
        model = find_model(con, model_name)
        return probabilities(con, corpus, model["variables"], model["model"])
    finally:
        con.close()


def probabilities(con, corpus, variables, model_name):
    """precedence_probabilities on an open connection, for a model's back-off chain `variables`."""
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
# A trained model, by name


def _has_schema(con):
    return bool(
        con.execute(
            "select count(*) from information_schema.tables where table_schema = 'baseline' and table_name = 'models'"
        ).fetchone()[0]
    )


def find_model(con, model_name):
    """The trained model named `model_name` (None: the only one) as a dict; BaselineError if none."""
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
