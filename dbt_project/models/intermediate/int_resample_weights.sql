-- SPEC section 12: the resampling draws as weights on list positions, once per distinct list
-- length n (the draws depend only on n, the sample count and the seed; udfs/resample.py):
--   observed   sample 0, weight 1 on every position: the list itself;
--   bootstrap  sample s = 0..B-1, weight = times position p is in numpy's idx[s];
--   ar         sample r = 0..R-1, weight 1 where mask[r, p] is true (the sentence swaps sides).
-- Every sum of the *_resample_sums models is sum(weight * statistic) over one list's positions.
{%- set samples = number_var('bootstrap_samples') %}
{%- set trials = number_var('ar_samples') %}
{%- set seed = number_var('bootstrap_seed') %}
{%- for name, value in [('bootstrap_samples', samples), ('ar_samples', trials), ('bootstrap_seed', seed)] %}
    {%- if not modules.re.fullmatch('[0-9]+', value | string) or (name != 'bootstrap_seed' and value | int < 1) %}
        {{ exceptions.raise_compiler_error(name ~ " must be a whole number" ~ (" >= 1" if name != 'bootstrap_seed' else "")
                                           ~ ", got '" ~ value ~ "'") }}
    {%- endif %}
{%- endfor %}

with lengths as (
    select distinct n from {{ ref('int_significance_sentences') }}
    union
    select n from {{ ref('int_significance_pairs') }} where restricted_a <> '' or restricted_b <> ''
),

draws as materialized (
    select n,
           srlens_bootstrap_counts(n, {{ samples }}, {{ seed }}) as bootstrap,
           srlens_ar_swaps(n, {{ trials }}, {{ seed }}) as ar
    from lengths
    where n > 0
)

select n, 'observed' as kind, 0 as sample, p::integer as position, 1 as weight
from lengths, range(n) r(p)
union all
select n, 'bootstrap', unnest(bootstrap.sample), unnest(bootstrap.position), unnest(bootstrap.count)
from draws
union all
select n, 'ar', unnest(ar.trial), unnest(ar.position), 1
from draws
