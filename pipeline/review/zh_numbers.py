"""Numbers written in Chinese characters: "一万五千", "三千二", "十五", "两百五" (claims and fact values read them).

Pure. Said colloquially, a digit after a unit counts in the next smaller unit ("一万五" is 15,000).
"""

from __future__ import annotations

import re

_ZH_NUM = dict(zip("零一二两三四五六七八九", (0, 1, 2, 2, 3, 4, 5, 6, 7, 8, 9), strict=True))
_ZH_SMALL_UNIT = {"十": 10, "百": 100, "千": 1000}
_ZH_BIG_UNIT = {"万": 10_000, "亿": 100_000_000}
_ZH_ALL = "零一二两三四五六七八九十百千万亿"
# A number written in characters: a whole run ("一万五千", "一百二十") before a counter or unit ("三个",
# "一万五千块", "三点"), or a run that holds a magnitude ("一万五", "三千二", "二十", "十五") on its own. Read
# digit by digit with a unit, "一万五千" was 5,000 and "一万五" nothing. A run starts with a digit or 十, so
# "千万" (by all means), "万一" (in case) and "十分" (very) are no numbers.
ZH_NUMBER = re.compile(
    rf"(?<![{_ZH_ALL}])(?:(?P<run>[一二两三四五六七八九十][{_ZH_ALL}]*)\s?"
    r"(?P<unit>个|天|次|人|点|号|块|元|岁|年|月|周|小时|分钟)"
    rf"|(?P<bare>[一二两三四五六七八九十][零一二两三四五六七八九]*[十百千万亿][{_ZH_ALL}]*|十[一二三四五六七八九]))"
)


def zh_number(text: str) -> float | None:
    """A number written in characters, or None when `text` is not one ("一二": two digits in a row). A
    digit after a unit with nothing between counts in the next smaller unit, as people say it: "一万五" is
    15,000, "三千二" 3,200, "两百五" 250; after 零 it counts as itself ("一万零五" is 10,005)."""
    total, section, digit = 0, 0, None
    unit, zero = 1, False  # the last unit read, and whether a 零 followed it
    for ch in text:
        if ch in _ZH_NUM:
            if ch == "零":
                zero = True
                continue
            if digit is not None:
                return None
            digit = _ZH_NUM[ch]
        elif ch in _ZH_SMALL_UNIT:
            unit, zero = _ZH_SMALL_UNIT[ch], False
            section += (1 if digit is None else digit) * unit
            digit = None
        elif ch in _ZH_BIG_UNIT:
            unit, zero = _ZH_BIG_UNIT[ch], False
            total += (section + (digit or 0)) * unit
            section, digit = 0, None
        else:
            return None
    if digit is not None:
        section += digit * (unit // 10 if unit >= 100 and not zero else 1)
    return float(total + section)
