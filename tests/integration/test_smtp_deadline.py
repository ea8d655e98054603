"""An SMTP server answering one byte every half second cannot hold a delivery past its deadline."""

from __future__ import annotations

from email.message import EmailMessage
from pathlib import Path

import pytest

from repoherald.errors import MaybeSentError, PublishError
from repoherald.publish.email.send import Server, send
from tests.smtp_server import drip_server, make_certificate, smtp_server


@pytest.mark.parametrize("security", ["none", "ssl", "starttls"])
def test_a_dripping_smtp_server_fails_at_the_deadline(security: str) -> None:
    message = EmailMessage()
    message["Subject"] = "report"
    message.set_content("body")
    with drip_server(0.5) as port:
        server = Server("127.0.0.1", port, security, timeout=10.0, deadline=1.5)  # type: ignore[arg-type]
        with pytest.raises(PublishError) as caught:
            send(server, message, "a@example.com", ["b@example.com"], None,
                 max_retries=1, retry_delay=0, sleep=lambda s: None)  # fmt: skip
    text = str(caught.value)
    assert text == (
        f"email 127.0.0.1:{port}: the conversation took longer than 1.5 s, the deadline"
        " after 2 attempt(s): try again later"
    )


def test_the_deadline_after_the_message_went_out_is_may_have_been_sent(tmp_path: Path) -> None:
    """The server took the message and never answered; the deadline cuts the wait, and the
    message is not sent a second time."""
    message = EmailMessage()
    message["Subject"] = "report"
    message.set_content("body")
    with smtp_server("plain", *make_certificate(tmp_path)) as smtp:
        smtp.hold()
        server = Server("127.0.0.1", smtp.port, "none", timeout=30.0, deadline=2.0)
        with pytest.raises(MaybeSentError) as caught:
            send(server, message, "a@example.com", ["b@example.com"], None,
                 max_retries=2, retry_delay=0, sleep=lambda s: None)  # fmt: skip
        assert len(smtp.received) == 1
    assert str(caught.value) == (
        f"email 127.0.0.1:{smtp.port}: the message went out but the server's answer did not"
        " come back (the conversation took longer than 2 s, the deadline); look in a"
        " recipient's mailbox before sending it again"
    )
