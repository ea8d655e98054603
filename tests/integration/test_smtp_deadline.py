"""An SMTP server answering one byte every half second cannot hold a delivery past its deadline."""

from __future__ import annotations

from email.message import EmailMessage

import pytest

from repoherald.errors import PublishError
from repoherald.publish.mailsend import Server, send
from tests.smtp_server import drip_server


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
