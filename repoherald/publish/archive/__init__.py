"""The ``archive`` publisher: report files, the index and where each file lives."""
