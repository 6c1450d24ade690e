{{ incremental_by_submission() }}
-- Sentence BLEU and its sufficient statistics, set-based: exactly udfs/bleu.py bleu_stats (nltk's
-- clipped n-gram matches m1..m4 and totals t1..t4 = max(1, hyp_len - n + 1)) for every scored
-- output. The reference n-grams are counted once per corpus sentence, not once per run.
-- A lemma is identified within its reference sentence by the position of its first occurrence
-- there; an output lemma the reference lacks has no id, so no n-gram through it can match (the
-- totals come from the length alone). Each n-gram is packed into one integer key (macro
-- packed_ngrams), and an output's or a reference sentence's n-grams are grouped by integer ids
-- (output_id, reference_id): grouping by the names costs several times more.
-- (no BLEU without a reference, issue 17)
with {{ numbered_outputs(['len(out_lemmas) as hyp_len', 'len(ref_lemmas) as ref_len'], where='has_reference') }},

-- a 15-bit slot of an n-gram key holds a lemma's id
{{ reference_words(15) }},

reference_lemmas as (
    select distinct reference_id, lemma_lower, token_id from reference_words
),

output_words as (
    select o.output_id, o.reference_id, w.pos, r.token_id
    from {{ ref('int_output_lemmas') }} w
    join outputs o using (submission_id, sent_idx)
    left join reference_lemmas r
        on r.reference_id = o.reference_id and r.lemma_lower is not distinct from w.lemma_lower
    where {{ changed_submission('w.submission_id') }}
),

-- The n-grams starting at each word: NULL where the sentence ends first or a word has no id.
output_starts as (
    select
        output_id, reference_id,
        {{ packed_ngrams() }}
    from output_words
    window w as (partition by output_id order by pos)
),

reference_starts as (
    select
        reference_id,
        {{ packed_ngrams() }}
    from reference_words
    window w as (partition by reference_id order by pos)
),

reference_ngrams as (
    select reference_id, ngram, count(*) as reference_count
    from (unpivot reference_starts on g1, g2, g3, g4 into name n value ngram)
    group by all
),

-- Only the output n-grams the reference has are counted: joined first, then grouped (unpivot drops
-- the NULL keys).
output_matches as (
    select o.output_id, o.ngram, count(*) as output_count, any_value(r.reference_count) as reference_count
    from (unpivot output_starts on g1, g2, g3, g4 into name n value ngram) o
    join reference_ngrams r using (reference_id, ngram)
    group by o.output_id, o.ngram
),

matches as (
    -- clipped counts: an n-gram matches as often as it occurs on the side where it is rarer;
    -- its order n is the number of its non-zero 15-bit slots
    select
        output_id,
        sum(least(output_count, reference_count)) filter (where ngram < 32768) as m1,
        sum(least(output_count, reference_count)) filter (where ngram between 32768 and 1073741823) as m2,
        sum(least(output_count, reference_count)) filter (where ngram between 1073741824 and 35184372088831) as m3,
        sum(least(output_count, reference_count)) filter (where ngram >= 35184372088832) as m4
    from output_matches
    group by output_id
),

stats as (
    select
        o.submission_id,
        o.sent_idx,
        o.hyp_len,
        o.ref_len,
        coalesce(m.m1, 0)::bigint as m1,
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
