{# Buckets of SPEC section 12 from the bucket_* vars (declared in srlens/build_vars.py): each var lists the lower
   bounds, ascending; bucket k is [bound k, bound k+1), the last one open. Labels follow SPEC:
     count        0-5, 6-10, ..., 41+   (whole numbers: lower - (upper - 1); one value: '1')
     count_below  <100, 100-999, ...    (as count, but the first bucket is '<upper')
     measure      <2, 2-3, 3-4, 4+      (real numbers: '<upper', 'lower-upper', 'lower+')
   Numbers of four or more digits get thousands separators (1,000). #}

{% macro bucket_number(x) -%}
    {%- if x == x | int -%}{{ "{:,}".format(x | int) }}{%- else -%}{{ x }}{%- endif -%}
{%- endmacro %}

{% macro bucket_label(style, lower, upper, first) -%}
    {%- if upper is none -%}{{ bucket_number(lower) }}+
    {%- elif first and style in ('count_below', 'measure') -%}<{{ bucket_number(upper) }}
    {%- elif style == 'measure' -%}{{ bucket_number(lower) }}-{{ bucket_number(upper) }}
    {%- elif upper - 1 == lower -%}{{ bucket_number(lower) }}
    {%- else -%}{{ bucket_number(lower) }}-{{ bucket_number(upper - 1) }}
    {%- endif -%}
{%- endmacro %}

{# A VALUES list of (dimension, bucket_no, lower_bound, upper_bound, bucket) for the dimension. #}
{% macro bucket_rows(dimension, style, bounds) %}
    {%- if bounds is string or bounds is mapping or bounds is not iterable or bounds | length == 0 %}
        {{ exceptions.raise_compiler_error("bucket_" ~ dimension ~ " must be a list of numbers, got '" ~ bounds ~ "'") }}
    {%- endif %}
    {%- for x in bounds %}
        {%- if x is not number or (not loop.first and x <= bounds[loop.index0 - 1]) %}
            {{ exceptions.raise_compiler_error("bucket_" ~ dimension ~ " must list numbers in ascending order, got "
                                               ~ bounds) }}
        {%- endif %}
    {%- endfor %}
    {%- for lower in bounds %}
        {%- set upper = bounds[loop.index] if not loop.last else none %}
        ('{{ dimension }}', {{ loop.index }}, {{ lower }}::double, {{ 'null' if upper is none else upper }}::double,
         '{{ bucket_label(style, lower, upper, loop.first) }}'){{ ',' if not loop.last }}
    {%- endfor %}
{% endmacro %}

{# bucket_scores' joins of an item to its frequency bucket: the item's count in the language's
   largest loaded treebank (0 if it has none there), then the bucket `b` of `dimension` it falls in. #}
{% macro frequency_bucket_joins(dimension, kind, language, item) -%}
    left join {{ ref('int_language_frequencies') }} f
        on f.language = {{ language }} and f.kind = '{{ kind }}' and f.item = {{ item }}
    join buckets b
        on
            b.dimension = '{{ dimension }}'
            and coalesce(f.frequency, 0) >= b.lower_bound
            and (b.upper_bound is null or coalesce(f.frequency, 0) < b.upper_bound)
{%- endmacro %}
