"""Campaign dates (`srlens campaign NAME --date YYYY[-MM-DD]`): the time axis of the
trends marts (rule_trends, campaign_trends) and of the report's diachronic views."""

import re
from datetime import date

from srlens.loaders.names import check_name
from srlens.loaders.store import open_for_write, transaction, utc_now

_DATE = re.compile(r"([0-9]{4})(?:-([0-9]{2}))?(?:-([0-9]{2}))?")  # ASCII digits: \d takes any script's


def parse_campaign_date(text):
    """'2019' -> 2019-01-01, '2019-06' -> 2019-06-01, '2019-06-14' -> itself; ValueError otherwise."""
    match = _DATE.fullmatch(text.strip())
    if not match or (match.group(3) and not match.group(2)):
        raise ValueError(f"campaign date {text!r}: expected YYYY, YYYY-MM or YYYY-MM-DD")
    year, month, day = (int(part) if part else 1 for part in match.groups())
    try:
        return date(year, month, day)
    except ValueError as err:
        raise ValueError(f"campaign date {text!r}: {err}") from None


def set_campaign_date(warehouse, campaign, text):
    """Record (or replace) the date of a campaign; returns the date as given. The campaign need not
    have runs yet, so dates can be set before or after loading."""
    campaign = check_name(campaign, "campaign")
    text = text.strip()
    day = parse_campaign_date(text)
    with open_for_write(warehouse) as con, transaction(con):
        con.execute("delete from raw.campaign_dates where campaign = ?", [campaign])
        con.execute("insert into raw.campaign_dates values (?, ?, ?, ?)", [campaign, text, day, utc_now()])
    return text
