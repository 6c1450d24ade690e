{# The CTEs `scored`, `reference_sentences` and `outputs` of a scoring model (issue 18): the scored
   outputs this build computes (int_scored_outputs, `where` and the changed submissions), each with
   integer ids of its reference sentence (reference_id, per corpus and sent_idx) and of itself
   (output_id), so that the words join and group on integers, not on the (corpus, submission_id)
   names (int_sentence_bleu_stats joined its words to (corpus, sent_idx) and DuckDB matched them on
   sent_idx alone, 30 times the words, before it compared the corpus). `columns`: more expressions
   of int_scored_outputs to carry. The ids hold within one query. #}
{% macro numbered_outputs(columns=[], where='true') -%}
scored as (
    select submission_id, corpus, sent_idx{% for column in columns %}, {{ column }}{% endfor %}
    from {{ ref('int_scored_outputs') }}
    where {{ where }} and {{ changed_submission() }}
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
