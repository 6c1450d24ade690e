{# The CTE `reference_sentences` of int_dea_edges and int_sentence_bleu_stats: one row per reference
   sentence of the CTE `scored` (rows of int_scored_outputs), with an integer id (reference_id, which
   holds within one query), its lemma list and each lemma's id, its first position in that list
   (ref_lemmas is the analysis words in pos order). An id takes `id_bits` bits of the model's integer
   keys: a longer sentence stops the build (error()) rather than letting two keys collide. #}
{% macro reference_sentences(id_bits) -%}
reference_sentences as materialized (
    select
        row_number() over () as reference_id,
        corpus,
        sent_idx,
        ref_lemmas,
        case
            when len(ref_lemmas) < {{ 2 ** id_bits }} then list_transform(ref_lemmas, lambda x: list_position(ref_lemmas, x))
            else error('{{ this.identifier }}: a reference sentence of {{ "{:,}".format(2 ** id_bits) }} words or more')
        end as ids
    from (
        select corpus, sent_idx, any_value(ref_lemmas) as ref_lemmas
        from scored
        group by corpus, sent_idx
    )
)
{%- endmacro %}
