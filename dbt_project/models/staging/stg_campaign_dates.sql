-- Campaign dates (srlens campaign NAME --date).
select campaign, date_text, campaign_date, set_at
from {{ source('raw', 'campaign_dates') }}
