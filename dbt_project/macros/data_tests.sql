{#- Generic data tests of the project (no dbt hub package needed). -#}

{#- The rows of `columns` are a key: no two rows share it, and no key column is NULL except those
    listed in `nullable`. One query checks both, and GROUP BY compares NULLs as equal, so a NULL
    view cannot hide a duplicate the way a concatenated string (NULL as a whole) would. -#}
{% test unique_key(model, columns, nullable=[]) %}
select {{ columns | join(', ') }}, count(*) as rows_with_key
from {{ model }}
group by {{ columns | join(', ') }}
having count(*) > 1
{%- for column in columns if column not in nullable %}
    or bool_or({{ column }} is null)
{%- endfor %}
{% endtest %}

{#- Every row satisfies `expression`; a row where it is NULL passes (write `x is not null and ...`
    where NULL is a failure). Fails with the rows where it is false. -#}
{% test expression_is_true(model, expression) %}
select *
from {{ model }}
where not ({{ expression }})
{% endtest %}
