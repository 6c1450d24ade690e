-- Which loaded treebank the L'AMBRE rules of each language are extracted from (SPEC section 9):
-- by default the language's corpus with the most sentences (normally its train split; ties:
-- the first corpus name); the dbt var lambre_rule_corpora ({"en": "en_ewt_train"}) overrides
-- it per language. min_count is SPEC's agreement count threshold for the treebank's size.
{% set chosen = mapping_var('lambre_rule_corpora') %}

with largest as (
    select language, corpus
    from {{ ref('stg_treebank_files') }}
    qualify row_number() over (partition by language order by sentences desc, corpus) = 1
),

named as (
    {% if chosen %}
        select * from (
            values
            {% for language, corpus in chosen %}
        ({{ string_literal(language) }}, {{ string_literal(corpus) }}){{ ',' if not loop.last }}
        {% endfor %}
        ) as v (language, corpus)
    {% else %}
        select null::varchar as language, null::varchar as corpus
        where false
    {% endif %}
),

picked as (
    select language, corpus, 'var lambre_rule_corpora' as chosen_by from named
    union all
    select language, corpus, 'most sentences' as chosen_by
    from largest
    where language not in (select language from named)
)

select
    p.language,
    p.corpus,
    p.chosen_by,
    t.corpus is not null as corpus_loaded,  -- false: the var names a corpus that is not loaded
    t.sentences,
    case
        when t.sentences < 200 then 5
        when t.sentences < 1000 then 10
        when t.sentences < 5000 then 20
        else 50
    end as min_count
from picked p
left join {{ ref('stg_treebank_files') }} t on t.corpus = p.corpus
