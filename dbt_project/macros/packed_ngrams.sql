{# int_sentence_bleu_stats: one row per word of a list of lemma ids in word order, with the ids t0..t3
   of the word and the three after it (the list and its shifts unnested side by side: DuckDB pads the
   shorter ones with NULL, so t1..t3 are NULL past the end; no window over the words needed). #}
{% macro word_starts(ids) -%}
    unnest({{ ids }}) as t0, unnest({{ ids }}[2:]) as t1, unnest({{ ids }}[3:]) as t2, unnest({{ ids }}[4:]) as t3
{%- endmacro %}

{# The keys g1..g4 of the 1- to 4-grams starting at a word of word_starts, from its ids t0..t3
   (1..32767). Key of ids i1..in: i1 + i2 * 2^15 + i3 * 2^30 + i4 * 2^45, a BIGINT (ids are positive,
   so no two n-grams of any orders share a key). NULL where the sentence ends first or a word of the
   n-gram has no id. `g1`: the unigram key's expression, when a model wants another one. #}
{% macro packed_ngrams(g1='t0::bigint') -%}
    {%- set ids = ['t0::bigint'] -%}
    {%- for k in range(1, 4) -%}
        {%- do ids.append('t' ~ k ~ '::bigint * ' ~ (2 ** (15 * k))) -%}
    {%- endfor -%}
    {{ g1 }} as g1,
    {%- for n in range(2, 5) %}
           {{ ids[:n] | join(' + ') }} as g{{ n }}{{ ',' if not loop.last }}
    {%- endfor -%}
{%- endmacro %}
