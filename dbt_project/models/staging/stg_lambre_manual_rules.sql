-- Rules added, changed or disabled by hand (loaders/rules.py). When several loaded files name
-- the same rule, the most recently loaded row wins (file_rank = 1).
select
    rule_id, language, kind, deprel, dep_upos, head_upos, feature, side,
    allowed_values, enabled, comment, source_file, line_no, loaded_at,
    row_number() over (partition by rule_id order by loaded_at desc, source_file desc) as file_rank
from {{ source('raw', 'lambre_manual_rules') }}
