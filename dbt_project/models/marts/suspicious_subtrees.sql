{{ incremental_by_submission() }}
-- SPEC section 8: suspicion of every reference subtree in every submission (Narayan and Gardent
-- 2012). Rows: the subtrees with C(f) >= mining_min_support, the only ones that can be
-- suspicious (at campaign scale the rarer ones, mostly lemma subtrees seen once, would be ~7
-- times as many rows).
--   C(f)     sentences (taking part, see int_mining_sentences) containing f
--   C(f|F)   FAIL sentences containing f
--   C(!f)    sentences without f;  C(!f|P)  PASS sentences without f
--   S(f) = 1/2 * (C(f|F)/C(f) * ln C(f) + C(!f|P)/C(!f) * ln C(!f)), a term with a zero
--   denominator being 0.
-- Suspicious: C(f) >= min_support and C(f|F)/C(f) > |FAIL|/|sentences|, compared exactly in
-- integers (C(f|F) * |sentences| > |FAIL| * C(f)).
--
-- How it is counted (fast at campaign scale): C(f) is the treebank's count minus the sentences
-- the submission leaves out (missing, or NULL score), and only FAIL sentences are joined with the
-- subtrees, by integer keys (int_subtrees' form_id). PASS counts follow: C(!f|P) = |PASS| -
-- (C(f) - C(f|F)). The rows carry integers (submission_no, form_id) through the joins; the
-- names are joined at the end.
{%- set min_support = number_var('mining_min_support') %}

with

mining as (
    select * from {{ ref('int_mining_sentences') }}
    where {{ changed_submission() }}
),

submissions as (
    select
        m.submission_id,
        row_number() over (order by m.submission_id)::integer as submission_no,
        any_value(m.corpus) as corpus,
        count(*) as sentences,
        count(*) filter (where m.is_fail) as failures,
        any_value(m.threshold) as threshold
    from mining m
    group by m.submission_id
),

support as (
    select corpus, form_id, view, subtree, sentences as treebank_sentences
    from {{ ref('int_subtree_support') }}
    where
        sentences >= greatest({{ min_support }}, 1)
        and corpus in (select corpus from submissions)  -- an incremental build: the changed runs' corpora
),

-- The subtrees that can reach min_support, as one list per sentence: the sentences below meet
-- one row per sentence, not one per (sentence, subtree). Filtered by form_id alone (an integer
-- join; on (corpus, form_id) it was the slowest operator of the model): a form supported only in
-- another corpus is counted too, and dropped by the join with support below.
sentence_forms as (
    select t.corpus, t.sent_idx, list(t.form_id) as form_ids
    from {{ ref('int_subtrees') }} t
    semi join (select distinct form_id from support) p using (form_id)
    where t.corpus in (select corpus from submissions)
    group by t.corpus, t.sent_idx
),

-- The sentences whose subtrees are counted: each submission's FAIL sentences, and the sentences
-- of its corpus it does not take part with (usually none).
counted_sentences as (
    select s.submission_no, m.corpus, m.sent_idx, true as is_fail
    from mining m
    join submissions s using (submission_id)
    where m.is_fail
    union all
    select s.submission_no, r.corpus, r.sent_idx, false
    from submissions s
    join {{ ref('stg_sentences') }} r on r.corpus = s.corpus
    anti join mining m on m.submission_id = s.submission_id and m.sent_idx = r.sent_idx
),

form_counts as (
    select
        submission_no,
        form_id,
        count(*) filter (where is_fail) as c_f_fail,
        count(*) filter (where not is_fail) as c_f_left_out
    from (
        select c.submission_no, c.is_fail, unnest(f.form_ids) as form_id
        from counted_sentences c
        join sentence_forms f using (corpus, sent_idx)
    )
    group by submission_no, form_id
),

counts as (
    select
        s.submission_no,
        p.form_id,
        s.sentences,
        s.failures,
        s.threshold,
        p.treebank_sentences - coalesce(f.c_f_left_out, 0) as c_f,
        coalesce(f.c_f_fail, 0) as c_f_fail
    from submissions s
    join support p on p.corpus = s.corpus
    left join form_counts f on f.submission_no = s.submission_no and f.form_id = p.form_id
),

scored as (
    select
        *,
        sentences - c_f as c_not_f,
        (sentences - failures) - (c_f - c_f_fail) as c_not_f_pass
    from counts
    where c_f >= greatest({{ min_support }}, 1)
),

-- The names of each form and submission, joined to the rows by integers.
forms as (
    select form_id, any_value(view) as view, any_value(subtree) as subtree
    from support
    group by form_id
),

named as (
    select s.submission_no, sub.submission_id, sub.corpus, sub.team, sub.run, sub.campaign
    from submissions s
    join {{ ref('stg_submissions') }} sub using (submission_id)
)

select
    sub.submission_id,
    f.view,
    f.subtree,
    sub.corpus,
    sub.team,
    sub.run,
    sub.campaign,
    c.c_f,
    c.c_f_fail,
    c.c_not_f,
    c.c_not_f_pass,
    c.c_f_fail / c.c_f as subtree_failure_rate,
    c.sentences,
    c.failures,
    c.failures / c.sentences as failure_rate,
    c.threshold,
    {{ string_literal(var("mining_metric")) }} as metric,
    {{ number_var("mining_quantile") }}::double as quantile,
    0.5 * (
        c.c_f_fail / c.c_f * ln(c.c_f)
        + case when c.c_not_f > 0 then c.c_not_f_pass / c.c_not_f * ln(c.c_not_f) else 0 end
    ) as suspicion,
    c.c_f >= {{ min_support }} and c.c_f_fail * c.sentences > c.failures * c.c_f as is_suspicious
from scored c
join named sub using (submission_no)
join forms f using (form_id)
