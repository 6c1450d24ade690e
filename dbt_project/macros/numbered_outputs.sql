{# The CTEs `scored`, `reference_sentences` and `outputs` of int_dea_edges (issue 18): the scored
   outputs this build computes (int_scored_outputs, the changed submissions), each with integer ids
   of its reference sentence (reference_id, per corpus and sent_idx) and of itself (output_id), so
   that the words join and group on integers, not on the (corpus, submission_id) names (DuckDB
   matched words joined on (corpus, sent_idx) by sent_idx alone, 30 times the words, before it
   compared the corpus). The ids hold within one query. #}
{% macro numbered_outputs() -%}
scored as (
    select submission_id, corpus, sent_idx
    from {{ ref('int_scored_outputs') }}
    where {{ changed_submission() }}
),

reference_sentences as (
    select corpus, sent_idx, row_number() over (order by corpus, sent_idx) as reference_id
    from (select distinct corpus, sent_idx from scored)
),

outputs as (
    select s.*, r.reference_id, row_number() over (order by s.submission_id, s.sent_idx) as output_id
    from scored s
    join reference_sentences r using (corpus, sent_idx)
)
{%- endmacro %}

{# The CTE `reference_words` that follows numbered_outputs: every analysis word of the reference
   sentences with its lemma's integer id, its first position in the sentence. The id is packed
   into `id_bits` bits of an integer key, so a longer sentence stops the build (error()) rather
   than letting two keys collide. Materialized: int_dea_edges reads it three times. #}
{% macro reference_words(id_bits) -%}
reference_words as materialized (
    select
        s.reference_id, w.pos, w.lemma_lower,
        case
            when w.pos < {{ 2 ** id_bits }} then min(w.pos) over (partition by s.reference_id, w.lemma_lower)
            else error('{{ this.identifier }}: a reference sentence of {{ "{:,}".format(2 ** id_bits) }} words or more')
        end as token_id
    from {{ ref('int_analysis_words') }} w
    join reference_sentences s using (corpus, sent_idx)
)
{%- endmacro %}
