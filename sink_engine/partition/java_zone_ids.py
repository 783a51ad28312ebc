"""Java's `ZoneId.SHORT_IDS`: the three-letter zone ids Java accepts with that map (`ZoneId.of(id, SHORT_IDS)`),
which Confluent Cloud's `timezone` takes (`PST`, `EST`, ...). Exactly Java's mapping: EST, MST and HST are fixed
offsets (no daylight saving time), the others regions; case-sensitive, as in Java."""

from __future__ import annotations

SHORT_IDS: dict[str, str] = {
    "ACT": "Australia/Darwin",
    "AET": "Australia/Sydney",
    "AGT": "America/Argentina/Buenos_Aires",
    "ART": "Africa/Cairo",
    "AST": "America/Anchorage",
    "BET": "America/Sao_Paulo",
    "BST": "Asia/Dhaka",
    "CAT": "Africa/Harare",
    "CNT": "America/St_Johns",
    "CST": "America/Chicago",
    "CTT": "Asia/Shanghai",
    "EAT": "Africa/Addis_Ababa",
    "ECT": "Europe/Paris",
    "IET": "America/Indiana/Indianapolis",
    "IST": "Asia/Kolkata",
    "JST": "Asia/Tokyo",
    "MIT": "Pacific/Apia",
    "NET": "Asia/Yerevan",
    "NST": "Pacific/Auckland",
    "PLT": "Asia/Karachi",
    "PNT": "America/Phoenix",
    "PRT": "America/Puerto_Rico",
    "PST": "America/Los_Angeles",
    "SST": "Pacific/Guadalcanal",
    "VST": "Asia/Ho_Chi_Minh",
    "EST": "-05:00",
    "MST": "-07:00",
    "HST": "-10:00",
}
