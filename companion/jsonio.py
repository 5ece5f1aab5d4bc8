"""Reading JSON documents from files or stdin with errors that say what is wrong."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from companion.games.base import InputError

MAX_DOCUMENT_BYTES = 8 * 1024 * 1024
"""A position is a few kilobytes; anything this large is not one."""


def load_document(source: str | None) -> dict[str, Any]:
    """The JSON object in file ``source`` (``-`` or None: stdin)."""
    label = "stdin" if source in (None, "-") else source
    try:
        if source in (None, "-"):
            raw = sys.stdin.buffer.read(MAX_DOCUMENT_BYTES + 1)
        else:
            with Path(source).open("rb") as fh:
                raw = fh.read(MAX_DOCUMENT_BYTES + 1)
    except OSError as exc:
        raise InputError("", f"cannot read {label}: {exc.strerror or exc}") from None
    return parse_document(raw, label=label)


def parse_document(raw: bytes | str, *, label: str = "input") -> dict[str, Any]:
    """Parse one JSON object; InputError for malformed, empty, huge or non-object input."""
    if len(raw) > MAX_DOCUMENT_BYTES:
        raise InputError("", f"{label} is larger than {MAX_DOCUMENT_BYTES // 1024 // 1024} MiB")
    if isinstance(raw, bytes):
        try:
            raw = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise InputError("", f"{label} is not UTF-8 text") from None
    if not raw.strip():
        raise InputError("", f"{label} is empty: expected a JSON object")
    try:
        doc = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise InputError(
            "", f"malformed JSON in {label} at line {exc.lineno} column {exc.colno}: {exc.msg}"
        ) from None
    if not isinstance(doc, dict):
        raise InputError("", f"{label} must hold a JSON object, not {type(doc).__name__}")
    return doc
