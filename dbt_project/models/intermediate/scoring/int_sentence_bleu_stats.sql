{{ incremental_by_submission() }}
-- Sentence BLEU and its sufficient statistics, set-based: exactly udfs/bleu.py bleu_stats (nltk's
-- clipped n-gram matches m1..m4 and totals t1..t4 = max(1, hyp_len - n + 1)) for every scored
-- output. The reference n-grams are counted once per corpus sentence, not once per run.
-- A lemma is identified within its reference sentence by the position of its first occurrence
-- in ref_lemmas; an output lemma the reference lacks has no id, so no n-gram through it can match
-- (the totals come from the length alone). The ids are computed on int_scored_outputs' lemma lists,
-- row by row (joining the 5 million output words with their references' lemmas cost more), and
-- each n-gram is packed into one integer key (macros/packed_ngrams.sql). An output's or a reference
-- sentence's n-grams are grouped by integer ids (output_id, reference_id), not by the names.
-- (no BLEU without a reference)
with scored as (
    select
        submission_id, corpus, sent_idx, len(out_lemmas) as hyp_len, len(ref_lemmas) as ref_len, ref_lemmas,
        row_number() over () as output_id,
        list_transform(out_lemmas, lambda x: list_position(ref_lemmas, x)) as ids
    from {{ ref('int_scored_outputs') }}
    where has_reference and {{ changed_submission() }}
),

-- a 15-bit slot of an n-gram key holds a lemma's id
{{ reference_sentences(15) }},

-- `repeats`: the ids an output has more than once (one entry for each occurrence after the first).
-- `m1_single`: the unigram matches of its other words (each occurs once, and its id says the
-- reference has it).
outputs as materialized (
    select
        s.submission_id, s.sent_idx, s.hyp_len, s.ref_len, s.output_id, r.reference_id, s.ids, s.repeats,
        len(list_filter(s.ids, lambda x: x is not null and not list_contains(s.repeats, x))) as m1_single
    from (
        select
            *,
            list_transform(
                list_filter(range(1, len(ids) + 1), lambda i: list_position(ids, ids[i]) != i), lambda i: ids[i]
            ) as repeats
        from scored
    ) s
    join reference_sentences r using (corpus, sent_idx)
),

-- Clipping (an n-gram matches as often as it occurs on the side where it is rarer) needs an n-gram's
-- count in the output only where it can occur twice there, i.e. where its first word's id repeats.
-- Any other n-gram occurs once and matches once if the reference has it: it is counted as it is
-- joined, without the group-by of (output, n-gram), and its unigram is in m1_single, not joined.
output_starts as (
    select output_id, reference_id, repeated, {{ packed_ngrams(g1='case when repeated then t0::bigint end') }}
    from (
        select *, list_contains(repeats, t0) as repeated
        from (select output_id, reference_id, repeats, {{ word_starts('ids') }} from outputs)
    )
),

reference_starts as (
    select reference_id, {{ packed_ngrams() }}
    from (select reference_id, {{ word_starts('ids') }} from reference_sentences)
),

reference_ngrams as (
    select reference_id, ngram, count(*) as reference_count
    from (unpivot reference_starts on g1, g2, g3, g4 into name n value ngram)
    group by all
),

-- the output n-grams the reference has (unpivot drops the NULL keys)
output_matches as materialized (
    select o.output_id, o.ngram, o.repeated, r.reference_count
    from (unpivot output_starts on g1, g2, g3, g4 into name n value ngram) o
    join reference_ngrams r using (reference_id, ngram)
),

clipped as (
    select output_id, ngram, 1 as matched
    from output_matches
    where not repeated
    union all
    select output_id, ngram, least(count(*), any_value(reference_count)) as matched
    from output_matches
    where repeated
    group by output_id, ngram
),

matches as (
    -- an n-gram's order n is the number of its non-zero 15-bit slots
    select
        output_id,
        sum(matched) filter (where ngram < 32768) as m1,
        sum(matched) filter (where ngram between 32768 and 1073741823) as m2,
        sum(matched) filter (where ngram between 1073741824 and 35184372088831) as m3,
        sum(matched) filter (where ngram >= 35184372088832) as m4
    from clipped
    group by output_id
),

stats as (
    select
        o.submission_id,
        o.sent_idx,
        o.hyp_len,
        o.ref_len,
        (o.m1_single + coalesce(m.m1, 0))::bigint as m1,
        coalesce(m.m2, 0)::bigint as m2,
        coalesce(m.m3, 0)::bigint as m3,
        coalesce(m.m4, 0)::bigint as m4,
        greatest(1, o.hyp_len) as t1,
        greatest(1, o.hyp_len - 1) as t2,
        greatest(1, o.hyp_len - 2) as t3,
        greatest(1, o.hyp_len - 3) as t4
    from outputs o
    left join matches m using (output_id)
)

-- BLEU itself: nltk's arithmetic (udfs/bleu.py) over the batch of statistics; a cheap numpy UDF, kept
-- here so that the accuracies' UDF (int_sentence_accuracies) need not wait for these statistics.
select
    *,
    srlens_bleu_from_stats(hyp_len, ref_len, m1, m2, m3, m4, t1, t2, t3, t4) as bleu
from stats
