-- The failing sentences (FAIL split of error mining, SPEC section 8) that contain one subtree,
-- per submission: reference and output side by side, with the positions and words of every
-- occurrence of the subtree (analysis positions: punctuation removed, 1..n; each occurrence
-- lists its words in the order of the subtree string, top word first).
-- Edit the two literals below (view, subtree as written in suspicious_subtrees). Optionally
-- name one submission and change how many sentences to show per submission.
-- (srlens/mining.py subtree_examples() runs this file with its own values for these.)
with params as (
    select
        'dep' as view,                      -- dep | pos | pos_dep | lemma
        '(advcl (nsubj))' as subtree,       -- e.g. '(VERB (PRON))', '(VERB~conj (ADV~advmod))', '(see (dog))'
        null::varchar as submission_id,     -- one submission_id, or null for every submission
        20 as per_submission                -- at most this many sentences per submission
),

sentence_words as (
    select corpus, sent_idx, list(form order by pos) as forms
    from intermediate.int_analysis_words
    group by corpus, sent_idx
),

-- The subtree's rows of the treebanks, with each occurrence's positions unpacked (int_subtrees keeps
-- an occurrence in one BIGINT: top word << 42 | second word << 21 | third word, 0 = no third word).
subtree_rows as (
    select
        t.corpus,
        t.sent_idx,
        t.occurrences,
        list_transform(
            t.packed_positions,
            lambda p: [(p >> 42)::integer, ((p >> 21) & 2097151)::integer]
            || case when p & 2097151 > 0 then [(p & 2097151)::integer] else [] end
        ) as positions
    from params p
    join intermediate.int_subtree_support s on s.view = p.view and s.subtree = p.subtree
    join intermediate.int_subtrees t on t.corpus = s.corpus and t.form_id = s.form_id
),

examples as (
    select
        m.submission_id,
        m.corpus,
        r.sent_id,
        m.sent_idx,
        m.score,
        m.threshold,
        r.reference_text,
        o.output_text,
        t.occurrences,
        t.positions,
        list_transform(t.positions, lambda occurrence: list_transform(occurrence, lambda p: w.forms[p])) as subtree_words,
        row_number() over (partition by m.submission_id order by m.score, m.sent_idx) as example_no
    from subtree_rows t
    cross join params p
    join intermediate.int_mining_sentences m
        on m.corpus = t.corpus and m.sent_idx = t.sent_idx
        and m.is_fail and (p.submission_id is null or m.submission_id = p.submission_id)
    join staging.stg_sentences r on r.corpus = m.corpus and r.sent_idx = m.sent_idx
    join staging.stg_outputs o on o.submission_id = m.submission_id and o.sent_idx = m.sent_idx
    join sentence_words w on w.corpus = m.corpus and w.sent_idx = m.sent_idx
)

select
    e.submission_id,
    s.team,
    s.run,
    e.sent_id,
    e.score,
    e.threshold,
    e.reference_text,
    e.output_text,
    e.positions,
    e.subtree_words,
    x.suspicion,
    x.is_suspicious
from examples e
cross join params p
join staging.stg_submissions s on s.submission_id = e.submission_id
left join suspicious_subtrees x
    on x.submission_id = e.submission_id and x.view = p.view and x.subtree = p.subtree
where e.example_no <= p.per_submission
order by e.submission_id, e.example_no
