{# One row per (word, feature) of a FEATS column (SPEC section 9). A multi-valued feature
   (PronType=Int,Rel) keeps its values as a sorted set: value_set is the list, value_key the
   same set as text ('Int,Rel'), so equal sets have equal keys. Layered features
   (Number[psor]) are features of their own. #}
{% macro exploded_features(relation, key_columns, condition="true") %}
with feature_items as (
    select {{ key_columns | join(', ') }}, unnest(string_split(feats, '|')) as item
    from {{ relation }}
    where feats is not null and {{ condition }}
),

parsed_features as (
    select {{ key_columns | join(', ') }},
           split_part(item, '=', 1) as feature,
           list_sort(string_split(substr(item, strpos(item, '=') + 1), ',')) as value_set
    from feature_items
    where strpos(item, '=') > 1 and strpos(item, '=') < length(item)
)

select *, array_to_string(value_set, ',') as value_key
from parsed_features
{% endmacro %}
