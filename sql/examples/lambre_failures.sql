-- Where runs break the morphosyntactic rules (L'AMBRE, SPEC 9). For each enabled rule, every run
-- in which it failed, worst score first, with the rule's first failure there in context: the
-- word and its head with their values of the feature ('-' when a word lacks it) and the
-- sentence as output. Rules that no run broke (or that only met runs without a parse) follow,
-- once each, with empty run columns.
select
    l.rule_id, r.corpus, r.team, r.run, r.failures, r.matches, round(r.score, 3) as score,
    f.sent_id,
    f.form || ' (' || coalesce(f.dep_value, '-') || ')' as word,
    f.head_form || ' (' || coalesce(f.head_value, '-') || ')' as head,
    l.allowed_values,
    f.output_text
from lambre_rules l
left join lambre_rule_scores r on r.rule_id = l.rule_id and r.failures > 0
left join lambre_failures f on f.submission_id = r.submission_id and f.rule_id = r.rule_id
where l.enabled
qualify row_number() over (partition by l.rule_id, r.submission_id order by f.sent_idx, f.word_idx) = 1
order by r.run is null, r.corpus, r.team, r.run, r.score, l.rule_id
