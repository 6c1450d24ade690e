-- The corpora an incremental build recomputes (macros/incremental_by_corpus.sql): those with a
-- changed submission (int_changed_submissions), the corpus it has now or had at the last build.
select s.corpus
from {{ ref('stg_submissions') }} s
semi join {{ ref('int_changed_submissions') }} c using (submission_id)
union
select b.corpus
from {{ ref('stg_built_submissions') }} b
semi join {{ ref('int_changed_submissions') }} c using (submission_id)
