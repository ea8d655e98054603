"""The ``email`` publisher: the report as a multipart message sent over SMTP."""
