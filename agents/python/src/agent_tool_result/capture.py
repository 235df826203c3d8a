"""The command line: ``python -m agent_tool_result [--ndjson] FILE...`` prints one outcome
line per answer, as ``atr classify --format json`` does, each with its ``source``: a result
document or ``tools/call`` result (``FILE``), a REST response captured by ``curl -i``
(``FILE``) or every response of a HAR file (``FILE #N URL``), and with ``--ndjson`` each
answer of a recorded session (``FILE:LINE``). ``-`` reads standard input. Exit status 2 when
a file cannot be read or a capture is not one."""

from __future__ import annotations

import base64
import binascii
import json
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from .read import read
from .reading import Reading
from .rest import read_rest
from .session import readings


class Unusable(Exception):
    """A file that is not what it says it is."""


def answers(name: str, data: bytes, ndjson: bool) -> Iterator[tuple[str, Reading]]:
    """The readings of one file's answers, each with its source."""
    if ndjson:
        for line, reading in readings(data):
            yield f"{name}:{line}", reading
        return
    start = data.lstrip(b" \t\r\n\x0c")
    if start.startswith(b"HTTP/"):
        status, headers, body = curl_response(data)
        yield name, read_rest(status, headers, body)
        return
    if start.startswith(b"{"):
        try:
            har = json.loads(data)
        except ValueError:
            har = None
        if isinstance(har, dict) and "log" in har:
            for source, (status, headers, body) in har_responses(har, name):
                yield source, read_rest(status, headers, body)
            return
    yield name, read(data)


def curl_response(data: bytes) -> tuple[int, list[tuple[str, str]], bytes]:
    """A response as ``curl -i`` prints it; interim (1xx) responses and a proxy's ``CONNECT``
    answer before it are skipped."""
    while True:
        crlf, lf = data.find(b"\r\n\r\n"), data.find(b"\n\n")
        ends = [(at, size) for at, size in ((crlf, 4), (lf, 2)) if at >= 0]
        if not ends:
            raise Unusable("no blank line after the headers")
        at, size = min(ends)
        head, body = data[:at], data[at + size :]
        lines = [line.removesuffix(b"\r") for line in head.split(b"\n")]
        status = _status_line(lines[0])
        headers = []
        for line in lines[1:]:
            colon = line.find(b":")
            if colon < 0:
                raise Unusable("a header line without a colon")
            try:
                name = line[:colon].decode("ascii").strip()
                value = line[colon + 1 :].strip(b" \t\r\n\x0c").decode("latin-1")
            except UnicodeDecodeError as err:
                raise Unusable("a header name that is not ASCII") from err
            headers.append((name, value))
        if body.startswith(b"HTTP/") and (100 <= status <= 199 or (status == 200 and not headers)):
            data = body
            continue
        return status, headers, body


def _status_line(line: bytes) -> int:
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as err:
        raise Unusable("a status line that is not text") from err
    parts = text.split()
    if not parts or not parts[0].startswith("HTTP/"):
        raise Unusable(f"`{text[:40]}` is not an HTTP status line (capture with `curl -i`)")
    if len(parts) < 2 or len(parts[1]) != 3 or not parts[1].isdigit() or int(parts[1]) < 100:
        raise Unusable(f"`{text}` has no status code")
    return int(parts[1])


def har_responses(
    har: dict[str, Any], name: str
) -> Iterator[tuple[str, tuple[int, list[tuple[str, str]], bytes]]]:
    """Every response of a HAR 1.2 log: ``log.entries[].response``."""
    entries = har.get("log", {}).get("entries") if isinstance(har.get("log"), dict) else None
    if not isinstance(entries, list):
        raise Unusable("a HAR file has log.entries")
    for index, entry in enumerate(entries):
        at = f"entry {index}"
        response = entry.get("response") if isinstance(entry, dict) else None
        if response is None:
            raise Unusable(f"{at} has no response")
        status = response.get("status") if isinstance(response, dict) else None
        if type(status) is not int or not 100 <= status <= 999:
            raise Unusable(f"{at}: the response status is not an HTTP status")
        headers = []
        for header in response.get("headers") or []:
            key = header.get("name") if isinstance(header, dict) else None
            value = header.get("value") if isinstance(header, dict) else None
            if type(key) is not str or type(value) is not str:
                raise Unusable(f"{at}: a header without a name or a value")
            headers.append((key.strip(), value.strip(" \t\r\n\x0c")))
        content = response.get("content") if isinstance(response.get("content"), dict) else {}
        said = content.get("text")
        text = said if isinstance(said, str) else ""
        if content.get("encoding") == "base64":
            try:
                body = base64.b64decode(text, validate=True)
            except binascii.Error as err:
                raise Unusable(f"{at}: the base64 body does not decode: {err}") from err
        else:
            body = text.encode("utf-8")
        request = entry.get("request")
        url = request.get("url") if isinstance(request, dict) else None
        source = f"{name} #{index}" + (f" {url}" if type(url) is str else "")
        yield source, (status, headers, body)


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the command line; returns its exit status."""
    args = list(sys.argv[1:] if argv is None else argv)
    ndjson = "--ndjson" in args
    files = [arg for arg in args if arg != "--ndjson"]
    if not files or any(arg in ("-h", "--help") for arg in files):
        print(__doc__, file=sys.stderr if not files else sys.stdout)
        return 0 if files else 2
    out = []
    for path in files:
        try:
            data = sys.stdin.buffer.read() if path == "-" else Path(path).read_bytes()
            name = "<stdin>" if path == "-" else path
            for source, reading in answers(name, data, ndjson):
                line = {"source": source, **reading.to_dict()}
                out.append(json.dumps(line, ensure_ascii=False, separators=(",", ":")))
        except (OSError, Unusable) as err:
            print(f"agent-tool-result: {path}: {err}", file=sys.stderr)
            return 2
    if out:
        sys.stdout.write("\n".join(out) + "\n")
    return 0
