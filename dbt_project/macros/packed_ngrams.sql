{# int_sentence_bleu_stats: the keys g1..g4 of the 1- to 4-grams starting at each word, from the
   words' token_id and a window `w` over the sentence in word order. Key of ids i1..in:
   i1 + i2 * 2^31 + i3 * 2^62 + i4 * 2^93 (ids are positive INTEGERs, so no two n-grams of any
   orders share a key). NULL where the sentence ends first or a word of the n-gram has no id. #}
{% macro packed_ngrams() -%}
    {%- set ids = ['cast(token_id as hugeint)'] -%}
    {%- for k in range(1, 4) -%}
        {%- do ids.append('cast(lead(token_id, ' ~ k ~ ') over w as hugeint) * ' ~ (2 ** (31 * k))) -%}
    {%- endfor -%}
    {%- for n in range(1, 5) -%}
    {{ ids[:n] | join(' + ') }} as g{{ n }}{{ ',\n           ' if not loop.last }}
    {%- endfor -%}
{%- endmacro %}
