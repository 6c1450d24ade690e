{# int_subtrees' packed_positions (a BIGINT per occurrence: top word << 42 | second << 21 | third,
   0 = no third word) as the position lists of SPEC section 8, e.g. [[2, 4, 3], [2, 4, 8]]. #}
{% macro unpack_positions(packed) -%}
    list_transform(
        {{ packed }},
        lambda p: [(p >> 42)::integer, ((p >> 21) & 2097151)::integer]
        || case when p & 2097151 > 0 then [(p & 2097151)::integer] else [] end
    )
{%- endmacro %}
