"""The HTTP policy's pure parts: waits a server asks for, and bodies read within a cap."""

from __future__ import annotations

import gzip
import zlib
from dataclasses import replace

import pytest

from repoherald.httppolicy import (
    WEBHOOK,
    BadEncoding,
    BodyTooLarge,
    JsonTooDeep,
    epoch_from_header,
    loads,
    retry_after,
)
from repoherald.httppolicy.body import _STEP, BodyReader

NOW = 1_800_000_000.0


@pytest.mark.parametrize(
    ("value", "seconds", "capped"),
    [
        ("5", 5.0, False),
        (" 2.5 ", 2.5, False),
        ("3600", 120.0, True),
        ("0", 0.0, False),
        ("Fri, 15 Jan 2027 08:00:20 GMT", 20.0, False),
        ("Sat, 16 Jan 2027 08:00:00 GMT", 120.0, True),
    ],
)
def test_retry_after_is_read_and_capped(value: str, seconds: float, capped: bool) -> None:
    wait = retry_after(value, 120.0, now=NOW)
    assert wait is not None and (wait.seconds, wait.capped) == (seconds, capped)


@pytest.mark.parametrize(
    "value",
    [None, "", "soon", "inf", "-inf", "nan", "1e300", "999999999", "-5",
     "Mon, 01 Jan 2001 00:00:00 GMT", "Fri, 99 Foo 99999 99:99:99 GMT", "x" * 10_000],
)  # fmt: skip
def test_retry_after_that_is_no_plausible_wait_is_none(value: str | None) -> None:
    assert retry_after(value, 120.0, now=NOW) is None


@pytest.mark.parametrize(
    ("value", "epoch"), [("1800000000", 1800000000), ("soon", None), ("-1", None), ("1e9", None),
                         ("²", None), ("", None), (None, None), ("9" * 40, None)],
)  # fmt: skip
def test_a_reset_header_is_a_plain_number_or_nothing(value: str | None, epoch: int | None) -> None:
    assert epoch_from_header(value) == epoch


def test_the_note_says_what_was_asked_and_what_is_done() -> None:
    wait = retry_after("3600", 60.0)
    assert wait is not None
    assert wait.note("webhook json ($U)") == (
        "webhook json ($U) asked to wait 3600 s (Retry-After); waiting 60 s, the cap"
    )


def read(encoding: str | None, data: bytes, cap: int = 1 << 20, chunk: int = 7) -> bytes:
    reader = BodyReader(encoding, replace(WEBHOOK, max_body=cap))
    for i in range(0, len(data), chunk):
        reader.feed(data[i : i + chunk])
    return reader.finish()


BODY = b'{"ok": true, "text": "' + b"x" * 5000 + b'"}'


@pytest.mark.parametrize(
    ("encoding", "data"),
    [
        (None, BODY),
        ("identity", BODY),
        ("gzip", gzip.compress(BODY)),
        ("deflate", zlib.compress(BODY)),
        ("deflate", zlib.compress(BODY)[2:-4]),  # raw deflate, as some servers send it
    ],
)
def test_bodies_are_decoded_in_chunks(encoding: str | None, data: bytes) -> None:
    assert read(encoding, data) == BODY


def test_the_cap_holds_before_and_after_decompression() -> None:
    with pytest.raises(BodyTooLarge, match="larger than 1,000 bytes"):
        read(None, BODY, cap=1000)
    with pytest.raises(BodyTooLarge, match="expands to more than 1,000 bytes"):
        read("gzip", gzip.compress(BODY), cap=1000)
    assert read(None, BODY, cap=len(BODY)) == BODY


@pytest.mark.parametrize(
    ("encoding", "data", "said"),
    [
        ("gzip", b"\x1f\x8b\x08\x00 not deflate at all", "gzip data is damaged"),
        ("gzip", gzip.compress(BODY)[:40], "gzip data is cut off"),
        ("br", b"whatever", "encoded as 'br', which was not asked for"),
    ],
)
def test_bad_encodings_are_one_clear_error(encoding: str, data: bytes, said: str) -> None:
    with pytest.raises(BadEncoding, match=said):
        read(encoding, data)


def test_json_too_deep_is_a_value_error() -> None:
    with pytest.raises(JsonTooDeep):
        loads(b"[" * 200_000 + b"]" * 200_000)
    assert issubclass(JsonTooDeep, ValueError)
    assert loads(b"[[[]]]") == [[[]]]


@pytest.mark.parametrize("size", [_STEP, 3 * _STEP, 3 * _STEP + 1])
def test_output_held_back_by_the_step_limit_is_not_lost(size: int) -> None:
    data = bytes(range(256)) * (size // 256) + b"x" * (size % 256)
    assert read("gzip", gzip.compress(data), cap=10 * _STEP, chunk=65536) == data
