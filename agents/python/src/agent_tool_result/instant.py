"""``retryAt``: an RFC 3339 instant in UTC, read as the contracts read it (``Z`` or a zero
offset, a fraction of any length, no leap second, years 0000 to 9999) and written back in
one form: ``YYYY-MM-DDTHH:MM:SS[.fff]Z``, the fraction to nanoseconds, trailing zeros gone."""

from __future__ import annotations

import re
from datetime import datetime, timezone

_FORM = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})"
    r"(?:\.([0-9]+))?(?:Z|[+-]00:00)"
)


def _days_in_month(year: int, month: int) -> int:
    if month == 2:
        leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
        return 29 if leap else 28
    return 30 if month in (4, 6, 9, 11) else 31


def normalize(text: str) -> str | None:
    """``text`` in the one form, or ``None`` when it is not such an instant."""
    match = _FORM.fullmatch(text)
    if match is None:
        return None
    year, month, day, hour, minute, second = (int(match.group(i)) for i in range(1, 7))
    if not 1 <= month <= 12 or not 1 <= day <= _days_in_month(year, month):
        return None
    if hour > 23 or minute > 59 or second > 59:
        return None
    fraction = (match.group(7) or "")[:9].ljust(9, "0").rstrip("0")
    return text[:19] + (f".{fraction}" if fraction else "") + "Z"


def of_datetime(moment: datetime) -> str:
    """An aware ``datetime`` in the one form (to the microsecond)."""
    utc = moment.astimezone(timezone.utc)
    fraction = f"{utc.microsecond:06d}".rstrip("0")
    return utc.strftime("%Y-%m-%dT%H:%M:%S") + (f".{fraction}" if fraction else "") + "Z"
