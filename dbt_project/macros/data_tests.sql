{#- Generic data tests of the project (no dbt hub package needed). -#}

{#- The rows of `columns` are a key: no two rows share it, and no key column is NULL except those
    listed in `nullable`. One query checks both, and GROUP BY compares NULLs as equal, so a NULL
    view cannot hide a duplicate the way a concatenated string (NULL as a whole) would.
    Cheaper than grouping every row by its key: the rows are grouped by one hash of
    the key first, and only the rows whose hash two rows share are grouped by the key. Two rows
    with the same key have the same hash, so no duplicate escapes; a collision only adds rows to
    look at. At campaign scale this halves the test's CPU and memory on string keys. -#}
{% test unique_key(model, columns, nullable=[]) %}
with shared_hashes as (
    select hash({{ columns | join(', ') }}) as key_hash
    from {{ model }}
    group by key_hash
    having count(*) > 1
)

select {{ columns | join(', ') }}, count(*) as rows_with_key
from {{ model }}
where hash({{ columns | join(', ') }}) in (select key_hash from shared_hashes)
{%- for column in columns if column not in nullable %}
    or {{ column }} is null
{%- endfor %}
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
