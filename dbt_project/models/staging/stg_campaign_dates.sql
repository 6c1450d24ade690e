-- Campaign dates (srlens campaign NAME --date, issue 17).
select campaign, date_text, campaign_date, set_at
from {{ source('raw', 'campaign_dates') }}
