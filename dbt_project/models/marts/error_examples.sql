{{ incremental_by_submission() }}
-- The sentences that show where a run fails: the k worst (var examples_per_key, default 5) per
--   kind 'relation', key = base relation: sentences with at least one missed edge of the relation,
--     worst first = most missed edges of that relation, then the lower share of its edges matched,
--     then the lower sentence BLEU;
--   kind 'subtree', key = a subtree suspicious in the run (suspicious_subtrees, its view in `view`;
--     per run and view the examples_max_subtrees most suspicious ones, highest suspicion first,
--     then subtree order, as there can be thousands): FAIL sentences of the run's error mining that contain the subtree, worst first = lower
--     mining score (var mining_metric), then more missed edges.
-- Ties end in treebank order (sent_idx), so the ranks are deterministic. missed_edges lists every
-- missed reference edge of the sentence (all relations), in reference order.
{%- set k = number_var('examples_per_key') %}
{%- set max_subtrees = number_var('examples_max_subtrees') %}
{%- if not modules.re.fullmatch('[0-9]+', k | string) or k | int < 1 %}
    {{ exceptions.raise_compiler_error("examples_per_key must be a whole number >= 1, got '" ~ k ~ "'") }}
{%- endif %}
{%- if not modules.re.fullmatch('[0-9]+', max_subtrees | string) %}
    {{ exceptions.raise_compiler_error("examples_max_subtrees must be a whole number, got '" ~ max_subtrees ~ "'") }}
{%- endif %}

-- The ranking reads integer columns only (int_dea_edges, whose edges all have both words); the
-- forms and the missed-edge lists are looked up for the ranked sentences alone, a small share.
-- Runs are numbered (run_no) so that the millions of edge and candidate rows are grouped, joined and
-- partitioned by an integer, not by the 30-character submission ids.
with runs as (
    select submission_id, row_number() over (order by submission_id)::integer as run_no
    from {{ ref('stg_submissions') }}
    where {{ changed_submission() }}
),

relation_counts as (
    select
        r.run_no, e.sent_idx, e.base_deprel as key,
        count(*) filter (where not e.matched) as key_missed,
        count(*) as key_edges
    from {{ ref('int_dea_edges') }} e
    join runs r using (submission_id)
    group by all
),

sentence_counts as (
    select run_no, sent_idx, sum(key_edges)::bigint as edges, sum(key_missed)::bigint as missed
    from relation_counts
    group by all
),

relation_candidates as (
    select * from relation_counts
    where key_missed > 0
),

run_scores as (
    select r.run_no, s.sent_idx, s.bleu
    from {{ ref('sentence_scores') }} s
    join runs r using (submission_id)
),

relation_ranked as (
    select
        c.run_no, 'relation' as kind, null::varchar as view, c.key, c.sent_idx,
        c.key_missed, c.key_edges, null::double as mining_score, null::bigint[] as packed_positions,
        row_number() over (
            partition by c.run_no, c.key
            order by c.key_missed desc, c.key_missed / c.key_edges desc, s.bleu asc nulls last, c.sent_idx
        ) as rank
    from relation_candidates c
    join run_scores s using (run_no, sent_idx)
    qualify rank <= {{ k }}
),

-- Each run and view's max_subtrees-th highest suspicion: only the subtrees at or above it can be
-- among the most suspicious, so the window below sorts those few. (With max_subtrees 0 the index
-- is 0, the cutoff NULL and no subtree is kept, as the window would keep none.)
suspicion_cutoffs as (
    select
        submission_id,
        view,
        list_sort(list(suspicion), 'DESC')[least({{ max_subtrees }}, count(*))] as cutoff
    from {{ ref('suspicious_subtrees') }}
    where is_suspicious and {{ changed_submission() }}
    group by submission_id, view
),

most_suspicious as (
    select r.run_no, s.corpus, s.view, s.subtree
    from {{ ref('suspicious_subtrees') }} s
    join suspicion_cutoffs c using (submission_id, view)
    join runs r using (submission_id)
    where s.is_suspicious and s.suspicion >= c.cutoff
    qualify
        row_number() over (partition by s.submission_id, s.view order by s.suspicion desc, s.subtree)
        <= {{ max_subtrees }}
),

run_sentences as (
    select r.run_no, m.corpus, m.sent_idx, m.score, m.is_fail
    from {{ ref('int_mining_sentences') }} m
    join runs r using (submission_id)
),

-- With int_subtrees' form_id, the FAIL sentences that contain them are found and ranked by integers.
subtree_candidates as (
    select x.run_no, x.view, x.subtree as key, p.form_id, m.sent_idx, m.score, t.packed_positions
    from most_suspicious x
    join {{ ref('int_subtree_support') }} p using (corpus, view, subtree)
    -- the corpus in both conditions: a subtree's sentences are looked up in its run's corpus only
    join {{ ref('int_subtrees') }} t on t.corpus = p.corpus and t.form_id = p.form_id
    join run_sentences m on m.run_no = x.run_no and m.corpus = t.corpus and m.sent_idx = t.sent_idx and m.is_fail
),

subtree_ranked as (
    select
        c.run_no, 'subtree' as kind, c.view, c.key, c.sent_idx,
        null::bigint as key_missed, null::bigint as key_edges, c.score as mining_score, c.packed_positions,
        row_number() over (
            partition by c.run_no, c.form_id
            order by c.score asc, coalesce(e.missed, 0) desc, c.sent_idx
        ) as rank
    from subtree_candidates c
    left join sentence_counts e using (run_no, sent_idx)
    qualify rank <= {{ k }}
),

ranked as (
    select r.submission_id, x.*
    from (
        select * from relation_ranked
        union all
        select * from subtree_ranked
    ) x
    join runs r using (run_no)
),

-- The ranked sentences' missed edges, and the words of those sentences alone: with two joins of the
-- whole word table, the planner joined the words of every sentence with themselves first (21 million
-- rows to add one run to a campaign); keyed by run_no here, it did that again
-- (at campaign scale), so these stay keyed by submission_id.
missed as (
    select e.submission_id, e.corpus, e.sent_idx, e.head_pos, e.dep_pos, e.deprel, e.distance
    from {{ ref('int_dea_edges') }} e
    semi join (select distinct submission_id, sent_idx from ranked) r using (submission_id, sent_idx)
    where not e.matched
),

missed_words as (
    select w.corpus, w.sent_idx, w.pos, w.form
    from {{ ref('int_analysis_words') }} w
    semi join (select distinct corpus, sent_idx from missed) m using (corpus, sent_idx)
),

missed_edges as (
    select
        e.submission_id, e.sent_idx,
        list(
            {
                'head_pos': e.head_pos, 'head': h.form, 'dep_pos': e.dep_pos, 'dependent': d.form,
                'relation': e.deprel, 'distance': e.distance
            } order by e.dep_pos
        ) as missed_edges
    from missed e
    join missed_words h on h.corpus = e.corpus and h.sent_idx = e.sent_idx and h.pos = e.head_pos
    join missed_words d on d.corpus = e.corpus and d.sent_idx = e.sent_idx and d.pos = e.dep_pos
    group by all
),

-- The texts of the ranked sentences, looked up by the full key of each (materialized: otherwise the
-- planner, from o.sent_idx = r.sent_idx = ref.sent_idx, joined every output to the reference sentence
-- of that number in every corpus first, the outputs x corpora rows spilling > 28 GB at 10x).
ranked_outputs as materialized (
    select r.*, sub.corpus, sub.team, sub.run, o.output_text
    from ranked r
    join {{ ref('stg_submissions') }} sub using (submission_id)
    join {{ ref('stg_outputs') }} o on o.submission_id = r.submission_id and o.sent_idx = r.sent_idx
)

select
    r.submission_id,
    r.corpus,
    r.team,
    r.run,
    r.kind,
    r.view,
    r.key,
    r.rank,
    ref.sent_id,
    r.sent_idx,
    ref.reference_text,
    r.output_text,
    coalesce(e.edges, 0) as edges,
    coalesce(e.missed, 0) as missed,
    r.key_edges,
    r.key_missed,
    r.mining_score,
    {{ unpack_positions('r.packed_positions') }} as subtree_positions,  -- of the ranked rows alone
    coalesce(me.missed_edges, []) as missed_edges
from ranked_outputs r
join {{ ref('stg_sentences') }} ref on ref.corpus = r.corpus and ref.sent_idx = r.sent_idx
left join sentence_counts e on e.run_no = r.run_no and e.sent_idx = r.sent_idx
left join missed_edges me on me.submission_id = r.submission_id and me.sent_idx = r.sent_idx
