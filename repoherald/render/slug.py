"""GitHub-compatible heading anchors ("slugs") for the Markdown reports we render.

Why this exists: a report links to its own sections (``[Summary](#-统计摘要)``), and
such a link only works if the fragment is exactly the ``id`` GitHub gives the
heading when it renders the file.  GitHub does not document its algorithm; the
reference everyone (GitHub's own docs tooling included) relies on is the npm
package ``github-slugger`` (https://github.com/Flet/github-slugger), whose test
fixtures are recorded from headings rendered on github.com.  This module is a
faithful, dependency-free Python port of ``github-slugger`` 2.0.0:

* :func:`slugify` -- the stateless ``slug()`` function;
* :class:`Slugger` -- the stateful class that de-duplicates repeated headings;
* :func:`markdown_inline_to_text` -- a deliberately small helper that turns the
  inline Markdown our renderer writes into the plain text GitHub slugs.
"""

from __future__ import annotations

import html.entities
import re
import string

__all__ = ["Slugger", "markdown_inline_to_text", "slugify"]

# Characters github-slugger deletes, ported from ``regex.js`` of github-slugger 2.0.0
# (generated there by ``script/generate-regex.mjs`` from Unicode 13.0.0): the General
# Categories Other_Number, Open/Close/Initial/Final/Other/Dash_Punctuation, Symbol,
# Control, Private_Use, Format, Unassigned and Separator, minus every Alphabetic code
# point, minus U+0020 SPACE and U+002D HYPHEN-MINUS.  Letters, marks, decimal digits,
# letter numbers and connector punctuation (``_``) therefore survive in every script.
#
# The JavaScript original is a UTF-16 regex that spells astral characters (most emoji,
# e.g. U+1F534 🔴) as surrogate-pair alternatives.  Python's ``re`` works on code
# points, so the same set is written here as code-point ranges; it was produced by
# testing every code point against the JS regex in Node and is kept frozen at Unicode
# 13.0.0 on purpose, because that is what github-slugger (and so GitHub) uses -- do not
# "refresh" it from ``unicodedata``.
_REMOVED_CHARS = (
    r"\x00-\x1F\x21-\x2C\x2E\x2F\x3A-\x40\x5B-\x5E\x60\x7B-\xA9\xAB-\xB4\xB6-\xB9\xBB-\xBF\xD7"
    r"\xF7\u02C2-\u02C5\u02D2-\u02DF\u02E5-\u02EB\u02ED\u02EF-\u02FF\u0375\u0378\u0379\u037E"
    r"\u0380-\u0385\u0387\u038B\u038D\u03A2\u03F6\u0482\u0530\u0557\u0558\u055A-\u055F"
    r"\u0589-\u0590\u05BE\u05C0\u05C3\u05C6\u05C8-\u05CF\u05EB-\u05EE\u05F3-\u060F\u061B-\u061F"
    r"\u066A-\u066D\u06D4\u06DD\u06DE\u06E9\u06FD\u06FE\u0700-\u070F\u074B\u074C\u07B2-\u07BF"
    r"\u07F6-\u07F9\u07FB\u07FC\u07FE\u07FF\u082E-\u083F\u085C-\u085F\u086B-\u089F\u08B5"
    r"\u08C8-\u08D2\u08E2\u0964\u0965\u0970\u0984\u098D\u098E\u0991\u0992\u09A9\u09B1"
    r"\u09B3-\u09B5\u09BA\u09BB\u09C5\u09C6\u09C9\u09CA\u09CF-\u09D6\u09D8-\u09DB\u09DE"
    r"\u09E4\u09E5\u09F2-\u09FB\u09FD\u09FF\u0A00\u0A04\u0A0B-\u0A0E\u0A11\u0A12\u0A29\u0A31"
    r"\u0A34\u0A37\u0A3A\u0A3B\u0A3D\u0A43-\u0A46\u0A49\u0A4A\u0A4E-\u0A50\u0A52-\u0A58\u0A5D"
    r"\u0A5F-\u0A65\u0A76-\u0A80\u0A84\u0A8E\u0A92\u0AA9\u0AB1\u0AB4\u0ABA\u0ABB\u0AC6\u0ACA"
    r"\u0ACE\u0ACF\u0AD1-\u0ADF\u0AE4\u0AE5\u0AF0-\u0AF8\u0B00\u0B04\u0B0D\u0B0E\u0B11\u0B12"
    r"\u0B29\u0B31\u0B34\u0B3A\u0B3B\u0B45\u0B46\u0B49\u0B4A\u0B4E-\u0B54\u0B58-\u0B5B\u0B5E"
    r"\u0B64\u0B65\u0B70\u0B72-\u0B81\u0B84\u0B8B-\u0B8D\u0B91\u0B96-\u0B98\u0B9B\u0B9D"
    r"\u0BA0-\u0BA2\u0BA5-\u0BA7\u0BAB-\u0BAD\u0BBA-\u0BBD\u0BC3-\u0BC5\u0BC9\u0BCE\u0BCF"
    r"\u0BD1-\u0BD6\u0BD8-\u0BE5\u0BF0-\u0BFF\u0C0D\u0C11\u0C29\u0C3A-\u0C3C\u0C45\u0C49"
    r"\u0C4E-\u0C54\u0C57\u0C5B-\u0C5F\u0C64\u0C65\u0C70-\u0C7F\u0C84\u0C8D\u0C91\u0CA9\u0CB4"
    r"\u0CBA\u0CBB\u0CC5\u0CC9\u0CCE-\u0CD4\u0CD7-\u0CDD\u0CDF\u0CE4\u0CE5\u0CF0\u0CF3-\u0CFF"
    r"\u0D0D\u0D11\u0D45\u0D49\u0D4F-\u0D53\u0D58-\u0D5E\u0D64\u0D65\u0D70-\u0D79\u0D80\u0D84"
    r"\u0D97-\u0D99\u0DB2\u0DBC\u0DBE\u0DBF\u0DC7-\u0DC9\u0DCB-\u0DCE\u0DD5\u0DD7\u0DE0-\u0DE5"
    r"\u0DF0\u0DF1\u0DF4-\u0E00\u0E3B-\u0E3F\u0E4F\u0E5A-\u0E80\u0E83\u0E85\u0E8B\u0EA4\u0EA6"
    r"\u0EBE\u0EBF\u0EC5\u0EC7\u0ECE\u0ECF\u0EDA\u0EDB\u0EE0-\u0EFF\u0F01-\u0F17\u0F1A-\u0F1F"
    r"\u0F2A-\u0F34\u0F36\u0F38\u0F3A-\u0F3D\u0F48\u0F6D-\u0F70\u0F85\u0F98\u0FBD-\u0FC5"
    r"\u0FC7-\u0FFF\u104A-\u104F\u109E\u109F\u10C6\u10C8-\u10CC\u10CE\u10CF\u10FB\u1249"
    r"\u124E\u124F\u1257\u1259\u125E\u125F\u1289\u128E\u128F\u12B1\u12B6\u12B7\u12BF\u12C1"
    r"\u12C6\u12C7\u12D7\u1311\u1316\u1317\u135B\u135C\u1360-\u137F\u1390-\u139F\u13F6\u13F7"
    r"\u13FE-\u1400\u166D\u166E\u1680\u169B-\u169F\u16EB-\u16ED\u16F9-\u16FF\u170D\u1715-\u171F"
    r"\u1735-\u173F\u1754-\u175F\u176D\u1771\u1774-\u177F\u17D4-\u17D6\u17D8-\u17DB\u17DE\u17DF"
    r"\u17EA-\u180A\u180E\u180F\u181A-\u181F\u1879-\u187F\u18AB-\u18AF\u18F6-\u18FF\u191F"
    r"\u192C-\u192F\u193C-\u1945\u196E\u196F\u1975-\u197F\u19AC-\u19AF\u19CA-\u19CF\u19DA-\u19FF"
    r"\u1A1C-\u1A1F\u1A5F\u1A7D\u1A7E\u1A8A-\u1A8F\u1A9A-\u1AA6\u1AA8-\u1AAF\u1AC1-\u1AFF"
    r"\u1B4C-\u1B4F\u1B5A-\u1B6A\u1B74-\u1B7F\u1BF4-\u1BFF\u1C38-\u1C3F\u1C4A-\u1C4C\u1C7E\u1C7F"
    r"\u1C89-\u1C8F\u1CBB\u1CBC\u1CC0-\u1CCF\u1CD3\u1CFB-\u1CFF\u1DFA\u1F16\u1F17\u1F1E\u1F1F"
    r"\u1F46\u1F47\u1F4E\u1F4F\u1F58\u1F5A\u1F5C\u1F5E\u1F7E\u1F7F\u1FB5\u1FBD\u1FBF-\u1FC1"
    r"\u1FC5\u1FCD-\u1FCF\u1FD4\u1FD5\u1FDC-\u1FDF\u1FED-\u1FF1\u1FF5\u1FFD-\u203E\u2041-\u2053"
    r"\u2055-\u2070\u2072-\u207E\u2080-\u208F\u209D-\u20CF\u20F1-\u2101\u2103-\u2106\u2108\u2109"
    r"\u2114\u2116-\u2118\u211E-\u2123\u2125\u2127\u2129\u212E\u213A\u213B\u2140-\u2144"
    r"\u214A-\u214D\u214F-\u215F\u2189-\u24B5\u24EA-\u2BFF\u2C2F\u2C5F\u2CE5-\u2CEA\u2CF4-\u2CFF"
    r"\u2D26\u2D28-\u2D2C\u2D2E\u2D2F\u2D68-\u2D6E\u2D70-\u2D7E\u2D97-\u2D9F\u2DA7\u2DAF\u2DB7"
    r"\u2DBF\u2DC7\u2DCF\u2DD7\u2DDF\u2E00-\u2E2E\u2E30-\u3004\u3008-\u3020\u3030\u3036\u3037"
    r"\u303D-\u3040\u3097\u3098\u309B\u309C\u30A0\u30FB\u3100-\u3104\u3130\u318F-\u319F"
    r"\u31C0-\u31EF\u3200-\u33FF\u4DC0-\u4DFF\u9FFD-\u9FFF\uA48D-\uA4CF\uA4FE\uA4FF\uA60D-\uA60F"
    r"\uA62C-\uA63F\uA673\uA67E\uA6F2-\uA716\uA720\uA721\uA789\uA78A\uA7C0\uA7C1\uA7CB-\uA7F4"
    r"\uA828-\uA82B\uA82D-\uA83F\uA874-\uA87F\uA8C6-\uA8CF\uA8DA-\uA8DF\uA8F8-\uA8FA\uA8FC"
    r"\uA92E\uA92F\uA954-\uA95F\uA97D-\uA97F\uA9C1-\uA9CE\uA9DA-\uA9DF\uA9FF\uAA37-\uAA3F"
    r"\uAA4E\uAA4F\uAA5A-\uAA5F\uAA77-\uAA79\uAAC3-\uAADA\uAADE\uAADF\uAAF0\uAAF1\uAAF7-\uAB00"
    r"\uAB07\uAB08\uAB0F\uAB10\uAB17-\uAB1F\uAB27\uAB2F\uAB5B\uAB6A-\uAB6F\uABEB\uABEE\uABEF"
    r"\uABFA-\uABFF\uD7A4-\uD7AF\uD7C7-\uD7CA\uD7FC-\uD7FF\uE000-\uF8FF\uFA6E\uFA6F\uFADA-\uFAFF"
    r"\uFB07-\uFB12\uFB18-\uFB1C\uFB29\uFB37\uFB3D\uFB3F\uFB42\uFB45\uFBB2-\uFBD2\uFD3E-\uFD4F"
    r"\uFD90\uFD91\uFDC8-\uFDEF\uFDFC-\uFDFF\uFE10-\uFE1F\uFE30-\uFE32\uFE35-\uFE4C\uFE50-\uFE6F"
    r"\uFE75\uFEFD-\uFF0F\uFF1A-\uFF20\uFF3B-\uFF3E\uFF40\uFF5B-\uFF65\uFFBF-\uFFC1\uFFC8\uFFC9"
    r"\uFFD0\uFFD1\uFFD8\uFFD9\uFFDD-\uFFFF\U0001000C\U00010027\U0001003B\U0001003E"
    r"\U0001004E\U0001004F\U0001005E-\U0001007F\U000100FB-\U0001013F\U00010175-\U000101FC"
    r"\U000101FE-\U0001027F\U0001029D-\U0001029F\U000102D1-\U000102DF\U000102E1-\U000102FF"
    r"\U00010320-\U0001032C\U0001034B-\U0001034F\U0001037B-\U0001037F\U0001039E\U0001039F"
    r"\U000103C4-\U000103C7\U000103D0\U000103D6-\U000103FF\U0001049E\U0001049F"
    r"\U000104AA-\U000104AF\U000104D4-\U000104D7\U000104FC-\U000104FF\U00010528-\U0001052F"
    r"\U00010564-\U000105FF\U00010737-\U0001073F\U00010756-\U0001075F\U00010768-\U000107FF"
    r"\U00010806\U00010807\U00010809\U00010836\U00010839-\U0001083B\U0001083D\U0001083E"
    r"\U00010856-\U0001085F\U00010877-\U0001087F\U0001089F-\U000108DF\U000108F3"
    r"\U000108F6-\U000108FF\U00010916-\U0001091F\U0001093A-\U0001097F\U000109B8-\U000109BD"
    r"\U000109C0-\U000109FF\U00010A04\U00010A07-\U00010A0B\U00010A14\U00010A18"
    r"\U00010A36\U00010A37\U00010A3B-\U00010A3E\U00010A40-\U00010A5F\U00010A7D-\U00010A7F"
    r"\U00010A9D-\U00010ABF\U00010AC8\U00010AE7-\U00010AFF\U00010B36-\U00010B3F"
    r"\U00010B56-\U00010B5F\U00010B73-\U00010B7F\U00010B92-\U00010BFF\U00010C49-\U00010C7F"
    r"\U00010CB3-\U00010CBF\U00010CF3-\U00010CFF\U00010D28-\U00010D2F\U00010D3A-\U00010E7F"
    r"\U00010EAA\U00010EAD-\U00010EAF\U00010EB2-\U00010EFF\U00010F1D-\U00010F26"
    r"\U00010F28-\U00010F2F\U00010F51-\U00010FAF\U00010FC5-\U00010FDF\U00010FF7-\U00010FFF"
    r"\U00011047-\U00011065\U00011070-\U0001107E\U000110BB-\U000110CF\U000110E9-\U000110EF"
    r"\U000110FA-\U000110FF\U00011135\U00011140-\U00011143\U00011148-\U0001114F"
    r"\U00011174\U00011175\U00011177-\U0001117F\U000111C5-\U000111C8\U000111CD\U000111DB"
    r"\U000111DD-\U000111FF\U00011212\U00011238-\U0001123D\U0001123F-\U0001127F\U00011287"
    r"\U00011289\U0001128E\U0001129E\U000112A9-\U000112AF\U000112EB-\U000112EF"
    r"\U000112FA-\U000112FF\U00011304\U0001130D\U0001130E\U00011311\U00011312\U00011329"
    r"\U00011331\U00011334\U0001133A\U00011345\U00011346\U00011349\U0001134A\U0001134E\U0001134F"
    r"\U00011351-\U00011356\U00011358-\U0001135C\U00011364\U00011365\U0001136D-\U0001136F"
    r"\U00011375-\U000113FF\U0001144B-\U0001144F\U0001145A-\U0001145D\U00011462-\U0001147F"
    r"\U000114C6\U000114C8-\U000114CF\U000114DA-\U0001157F\U000115B6\U000115B7"
    r"\U000115C1-\U000115D7\U000115DE-\U000115FF\U00011641-\U00011643\U00011645-\U0001164F"
    r"\U0001165A-\U0001167F\U000116B9-\U000116BF\U000116CA-\U000116FF\U0001171B\U0001171C"
    r"\U0001172C-\U0001172F\U0001173A-\U000117FF\U0001183B-\U0001189F\U000118EA-\U000118FE"
    r"\U00011907\U00011908\U0001190A\U0001190B\U00011914\U00011917\U00011936\U00011939\U0001193A"
    r"\U00011944-\U0001194F\U0001195A-\U0001199F\U000119A8\U000119A9\U000119D8\U000119D9"
    r"\U000119E2\U000119E5-\U000119FF\U00011A3F-\U00011A46\U00011A48-\U00011A4F"
    r"\U00011A9A-\U00011A9C\U00011A9E-\U00011ABF\U00011AF9-\U00011BFF\U00011C09\U00011C37"
    r"\U00011C41-\U00011C4F\U00011C5A-\U00011C71\U00011C90\U00011C91\U00011CA8"
    r"\U00011CB7-\U00011CFF\U00011D07\U00011D0A\U00011D37-\U00011D39\U00011D3B\U00011D3E"
    r"\U00011D48-\U00011D4F\U00011D5A-\U00011D5F\U00011D66\U00011D69\U00011D8F\U00011D92"
    r"\U00011D99-\U00011D9F\U00011DAA-\U00011EDF\U00011EF7-\U00011FAF\U00011FB1-\U00011FFF"
    r"\U0001239A-\U000123FF\U0001246F-\U0001247F\U00012544-\U00012FFF\U0001342F-\U000143FF"
    r"\U00014647-\U000167FF\U00016A39-\U00016A3F\U00016A5F\U00016A6A-\U00016ACF"
    r"\U00016AEE\U00016AEF\U00016AF5-\U00016AFF\U00016B37-\U00016B3F\U00016B44-\U00016B4F"
    r"\U00016B5A-\U00016B62\U00016B78-\U00016B7C\U00016B90-\U00016E3F\U00016E80-\U00016EFF"
    r"\U00016F4B-\U00016F4E\U00016F88-\U00016F8E\U00016FA0-\U00016FDF\U00016FE2"
    r"\U00016FE5-\U00016FEF\U00016FF2-\U00016FFF\U000187F8-\U000187FF\U00018CD6-\U00018CFF"
    r"\U00018D09-\U0001AFFF\U0001B11F-\U0001B14F\U0001B153-\U0001B163\U0001B168-\U0001B16F"
    r"\U0001B2FC-\U0001BBFF\U0001BC6B-\U0001BC6F\U0001BC7D-\U0001BC7F\U0001BC89-\U0001BC8F"
    r"\U0001BC9A-\U0001BC9C\U0001BC9F-\U0001D164\U0001D16A-\U0001D16C\U0001D173-\U0001D17A"
    r"\U0001D183\U0001D184\U0001D18C-\U0001D1A9\U0001D1AE-\U0001D241\U0001D245-\U0001D3FF"
    r"\U0001D455\U0001D49D\U0001D4A0\U0001D4A1\U0001D4A3\U0001D4A4\U0001D4A7\U0001D4A8\U0001D4AD"
    r"\U0001D4BA\U0001D4BC\U0001D4C4\U0001D506\U0001D50B\U0001D50C\U0001D515\U0001D51D\U0001D53A"
    r"\U0001D53F\U0001D545\U0001D547-\U0001D549\U0001D551\U0001D6A6\U0001D6A7\U0001D6C1"
    r"\U0001D6DB\U0001D6FB\U0001D715\U0001D735\U0001D74F\U0001D76F\U0001D789\U0001D7A9\U0001D7C3"
    r"\U0001D7CC\U0001D7CD\U0001D800-\U0001D9FF\U0001DA37-\U0001DA3A\U0001DA6D-\U0001DA74"
    r"\U0001DA76-\U0001DA83\U0001DA85-\U0001DA9A\U0001DAA0\U0001DAB0-\U0001DFFF\U0001E007"
    r"\U0001E019\U0001E01A\U0001E022\U0001E025\U0001E02B-\U0001E0FF\U0001E12D-\U0001E12F"
    r"\U0001E13E\U0001E13F\U0001E14A-\U0001E14D\U0001E14F-\U0001E2BF\U0001E2FA-\U0001E7FF"
    r"\U0001E8C5-\U0001E8CF\U0001E8D7-\U0001E8FF\U0001E94C-\U0001E94F\U0001E95A-\U0001EDFF"
    r"\U0001EE04\U0001EE20\U0001EE23\U0001EE25\U0001EE26\U0001EE28\U0001EE33\U0001EE38\U0001EE3A"
    r"\U0001EE3C-\U0001EE41\U0001EE43-\U0001EE46\U0001EE48\U0001EE4A\U0001EE4C\U0001EE50"
    r"\U0001EE53\U0001EE55\U0001EE56\U0001EE58\U0001EE5A\U0001EE5C\U0001EE5E\U0001EE60\U0001EE63"
    r"\U0001EE65\U0001EE66\U0001EE6B\U0001EE73\U0001EE78\U0001EE7D\U0001EE7F\U0001EE8A"
    r"\U0001EE9C-\U0001EEA0\U0001EEA4\U0001EEAA\U0001EEBC-\U0001F12F\U0001F14A-\U0001F14F"
    r"\U0001F16A-\U0001F16F\U0001F18A-\U0001FBEF\U0001FBFA-\U0001FFFF\U0002A6DE-\U0002A6FF"
    r"\U0002B735-\U0002B73F\U0002B81E\U0002B81F\U0002CEA2-\U0002CEAF\U0002EBE1-\U0002F7FF"
    r"\U0002FA1E-\U0002FFFF\U0003134B-\U000E00FF\U000E01F0-\U0010FFFF"
)
_REMOVED_RE = re.compile(f"[{_REMOVED_CHARS}]")


def slugify(text: str) -> str:
    """Return the GitHub anchor for a heading whose rendered plain text is ``text``.

    Mirrors github-slugger's ``slug(value)``: lower-case, delete the characters of
    the Unicode 13 set above, then turn each U+0020 space into ``-``.  Nothing is
    trimmed or collapsed, so ``"🔴 高 (4)"`` becomes ``"-高-4"`` -- the leading ``-``
    left by the deleted emoji is part of GitHub's id.  Only U+0020 becomes ``-``;
    other whitespace (tabs, no-break spaces, ideographic spaces) is deleted.

    ``text`` must already be plain text: pass Markdown through
    :func:`markdown_inline_to_text` first.  This function does not de-duplicate;
    use :class:`Slugger` for a whole document.
    """
    # str.lower() applies the same full Unicode lower-casing (including the final
    # sigma rule and "İ" -> "i̇") as JavaScript's String.prototype.toLowerCase().
    return _REMOVED_RE.sub("", text.lower()).replace(" ", "-")


class Slugger:
    """Generate unique anchors for the headings of one document, in order.

    GitHub gives the second heading with the same slug ``slug-1``, the third
    ``slug-2`` and so on.  Like github-slugger, the counter belongs to the base
    slug and every id handed out is remembered, so a generated id never collides
    with a literal heading: after ``foo``, ``foo``, a heading ``foo-1`` becomes
    ``foo-1-1``, and a later ``foo`` becomes ``foo-2``.  Use one instance per
    rendered document (or call :meth:`reset` between documents).
    """

    def __init__(self) -> None:
        """Start with no headings seen."""
        # slug handed out -> how many suffixed variants of it were tried so far.
        self._occurrences: dict[str, int] = {}

    def slug(self, text: str) -> str:
        """Return the unique anchor for the next heading, whose plain text is ``text``."""
        original = slugify(text)
        result = original
        while result in self._occurrences:
            self._occurrences[original] += 1
            result = f"{original}-{self._occurrences[original]}"
        self._occurrences[result] = 0
        return result

    def reset(self) -> None:
        """Forget all anchors handed out so far (start a new document)."""
        self._occurrences.clear()


# ``\`` followed by one of these is a backslash escape in CommonMark.
_ASCII_PUNCTUATION = frozenset(string.punctuation)
# CommonMark entity and numeric character references (the trailing ``;`` is required).
_ENTITY_RE = re.compile(r"&(?:#[xX]([0-9a-fA-F]{1,6})|#([0-9]{1,7})|([A-Za-z][A-Za-z0-9]{0,31}));")


def markdown_inline_to_text(md: str) -> str:
    """Return the plain text GitHub slugs for a heading whose inline Markdown is ``md``.

    GitHub computes the anchor from the *rendered* heading text, not from the
    Markdown source, so ``## \\[Bugfix\\] Fix `foo` crash`` gets the anchor of
    ``[Bugfix] Fix foo crash``.  Only the constructs our renderer emits are
    handled, following CommonMark:

    * surrounding spaces/tabs of the heading content are dropped (the Markdown
      parser strips them; an encoded ``&#x20;`` survives);
    * backslash escapes of ASCII punctuation: ``\\[`` -> ``[`` (a backslash
      before anything else stays literal);
    * code spans: ```x``` -> ``x``, content kept verbatim (no escapes or
      entities inside), newlines become spaces and one padding space is removed
      from each side when both are present;
    * inline links ``[text](url)`` -> ``text`` (the text is converted again);
    * entity and numeric character references such as ``&amp;`` or ``&#x20;``
      (unknown names and references without ``;`` stay literal).

    Emphasis, images, autolinks and raw HTML are *not* interpreted; the renderer
    must not put them in headings (or escape them) if it wants to link to them.
    """
    return _inline_to_text(md.strip(" \t"))


def _inline_to_text(md: str) -> str:
    """Convert inline Markdown to text; see :func:`markdown_inline_to_text`."""
    out: list[str] = []
    i = 0
    n = len(md)
    while i < n:
        char = md[i]
        if char == "\\" and i + 1 < n and md[i + 1] in _ASCII_PUNCTUATION:
            out.append(md[i + 1])
            i += 2
        elif char == "`":
            span = _code_span(md, i)
            if span is None:
                run_end = _backtick_run_end(md, i)
                out.append(md[i:run_end])
                i = run_end
            else:
                content, i = span
                out.append(content)
        elif char == "&" and (entity := _ENTITY_RE.match(md, i)) is not None:
            out.append(_decode_entity(entity))
            i = entity.end()
        elif char == "[" and (link := _inline_link(md, i)) is not None:
            label, i = link
            out.append(_inline_to_text(label))
        else:
            out.append(char)
            i += 1
    return "".join(out)


def _backtick_run_end(md: str, start: int) -> int:
    """Return the index just past the run of backticks starting at ``start``."""
    end = start
    while end < len(md) and md[end] == "`":
        end += 1
    return end


def _code_span(md: str, start: int) -> tuple[str, int] | None:
    """Parse the code span opening at ``start``: ``(content, end)`` or ``None``.

    A span closes at the next backtick run of exactly the opening length; with
    no such run the backticks are literal text.
    """
    open_end = _backtick_run_end(md, start)
    width = open_end - start
    pos = open_end
    while (close := md.find("`", pos)) != -1:
        close_end = _backtick_run_end(md, close)
        if close_end - close == width:
            content = md[open_end:close].replace("\r\n", " ").replace("\n", " ")
            if len(content) >= 2 and content[0] == content[-1] == " " and content.strip(" "):
                content = content[1:-1]
            return content, close_end
        pos = close_end
    return None


def _decode_entity(match: re.Match[str]) -> str:
    """Decode one entity/numeric reference matched by ``_ENTITY_RE`` like CommonMark."""
    hex_digits, dec_digits, name = match.groups()
    if name is not None:
        # Only real HTML5 entity names are references; ``&foo;`` stays as typed.
        return html.entities.html5.get(f"{name};", match.group(0))
    code = int(hex_digits, 16) if hex_digits is not None else int(dec_digits)
    if code == 0 or code > 0x10FFFF or 0xD800 <= code <= 0xDFFF:
        return "\ufffd"
    return chr(code)


def _inline_link(md: str, start: int) -> tuple[str, int] | None:
    """Parse ``[label](destination)`` at ``start``: ``(label, end)`` or ``None``.

    Brackets in the label and parentheses in the destination may nest; escaped
    characters and code spans in the label never close it.
    """
    depth = 0
    pos = start
    n = len(md)
    while pos < n:
        char = md[pos]
        if char == "\\" and pos + 1 < n:
            pos += 2
            continue
        if char == "`":
            span = _code_span(md, pos)
            pos = _backtick_run_end(md, pos) if span is None else span[1]
            continue
        if char == "[":
            depth += 1
        elif char == "]":
            depth -= 1
            if depth == 0:
                break
        pos += 1
    else:
        return None
    label_end = pos
    if label_end + 1 >= n or md[label_end + 1] != "(":
        return None
    depth = 0
    pos = label_end + 1
    while pos < n:
        char = md[pos]
        if char == "\\" and pos + 1 < n:
            pos += 2
            continue
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0:
                return md[start + 1 : label_end], pos + 1
        pos += 1
    return None
