{# int_sentence_bleu_stats: the keys g1..g4 of the 1- to 4-grams starting at each word, from the
   words' token_id (1..32767) and a window `w` over the sentence in word order. Key of ids i1..in:
   i1 + i2 * 2^15 + i3 * 2^30 + i4 * 2^45, a BIGINT (ids are positive, so no two n-grams of any
   orders share a key). NULL where the sentence ends first or a word of the n-gram has no id. #}
{% macro packed_ngrams() -%}
    {%- set ids = ['token_id::bigint'] -%}
    {%- for k in range(1, 4) -%}
        {%- do ids.append('(lead(token_id, ' ~ k ~ ') over w)::bigint * ' ~ (2 ** (15 * k))) -%}
    {%- endfor -%}
    {%- for n in range(1, 5) -%}
    {{ ids[:n] | join(' + ') }} as g{{ n }}{{ ',\n           ' if not loop.last }}
    {%- endfor -%}
{%- endmacro %}
