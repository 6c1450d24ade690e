{# The labels of int_subtrees, shared with int_subtree_support, which writes the subtree strings
   from int_subtrees' form_id (the packed label numbers of the form). #}

{# A word's label in a mining view (SPEC section 8): w is the word's relation alias. #}
{% macro subtree_label(view, w) -%}
    case {{ view }}
        when 'dep' then coalesce({{ w }}.base_deprel, '_')
        when 'pos' then coalesce({{ w }}.upos, '_')
        when 'pos_dep' then coalesce({{ w }}.upos, '_') || '~' || coalesce({{ w }}.base_deprel, '_')
        when 'lemma' then coalesce({{ w }}.lemma_lower, '_')
    end
{%- endmacro %}

{# The distinct (view, label) of `labelled`, numbered in view, then string order: comparing two
   numbers compares the labels, and a number fixes its view. #}
{% macro numbered_labels(labelled) -%}
    select view, label, row_number() over (order by view, label)::integer as label_id
    from (select distinct view, label from {{ labelled }})
{%- endmacro %}
