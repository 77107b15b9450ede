"""Read a topology file the way NCCL's hand-written parser does (src/graph/xml.cc), and
report every lexical rule it would trip over rather than stopping at the first.

NCCL is fatal on: a <?xml?> prolog or DOCTYPE, tabs, a tag spread over lines, spaces
around '=', unquoted values, single quotes (until 2.27), mismatched close tags. Between
tags only space, LF and CR may appear; <!-- --> comments may appear anywhere.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .element import Element


@dataclass(frozen=True)
class Finding:
    severity: str  # error: NCCL fails or silently ignores/misreads; warning: accepted but fragile
    code: str  # stable, e.g. NCCL_BUSID_FORMAT
    line: int
    message: str

    def format(self, file: str = "") -> str:
        where = f"{file}:{self.line}" if file else f"line {self.line}"
        return f"{where}: {self.severity}: {self.code}: {self.message}"


_TAG_NAME = re.compile(r"[A-Za-z0-9_]+")
_ATTR = re.compile(r'([A-Za-z0-9_]+)="([^"]*)"')


def parse(text: str) -> tuple[list[Element], list[Finding]]:
    findings: list[Finding] = []
    roots: list[Element] = []
    stack: list[Element] = []

    def bad(code: str, line: int, message: str, severity: str = "error") -> None:
        findings.append(Finding(severity, code, line, message))

    for i, line_text in enumerate(text.split("\n"), start=1):
        if "\t" in line_text:
            bad("NCCL_TAB", i, "tab character: fatal to NCCL's parser; indent with spaces")
    if any(ord(ch) > 127 for ch in text):
        line = next(i for i, t in enumerate(text.split("\n"), 1) if any(ord(c) > 127 for c in t))
        bad("NCCL_NON_ASCII", line, "non-ASCII character; NCCL reads bytes and decodes nothing")

    pos, n = 0, len(text)
    line_at = _line_index(text)
    while pos < n:
        ch = text[pos]
        if ch in " \n\r\t":
            pos += 1
            continue
        line = line_at(pos)
        if text.startswith("<!--", pos):
            end = text.find("-->", pos + 4)
            if end < 0:
                bad("NCCL_SYNTAX", line, "unterminated comment")
                break
            pos = end + 3
            continue
        if text.startswith("<?", pos):
            bad("NCCL_PROLOG", line, "XML prolog <?...?>: NCCL fails with \"expected >, got '?'\"; remove it")
            end = text.find(">", pos)
            pos = n if end < 0 else end + 1
            continue
        if text.startswith("<!", pos):
            bad("NCCL_PROLOG", line, "DOCTYPE or other <!...> declaration: fatal to NCCL's parser")
            end = text.find(">", pos)
            pos = n if end < 0 else end + 1
            continue
        if ch != "<":
            end = text.find("<", pos)
            end = n if end < 0 else end
            bad("NCCL_TEXT", line, f"text between tags ({text[pos:end].strip()[:30]!r}); only spaces and newlines are allowed")
            pos = end
            continue
        end = text.find(">", pos)
        if end < 0:
            bad("NCCL_SYNTAX", line, "tag never closed with '>'")
            break
        tag = text[pos:end + 1]
        pos = end + 1
        if "\n" in tag or "\r" in tag:
            bad("NCCL_MULTILINE_TAG", line, "a tag spread over several lines is fatal to NCCL; one tag per line")
            tag = " ".join(tag.split())
        if tag.startswith("</"):
            m = _TAG_NAME.fullmatch(tag[2:-1].strip())
            name = m.group(0) if m else tag[2:-1]
            if not stack:
                bad("NCCL_MISMATCH", line, f"</{name}> closes nothing")
            elif stack[-1].name != name:
                bad("NCCL_MISMATCH", line, f"</{name}> closes <{stack[-1].name}> (line {stack[-1].line}): XML Mismatch")
                stack.pop()
            else:
                stack.pop()
            continue
        self_closing = tag.endswith("/>")
        body = tag[1:-2] if self_closing else tag[1:-1]
        m = _TAG_NAME.match(body)
        if not m:
            bad("NCCL_SYNTAX", line, f"cannot read a tag name in {tag[:40]!r}")
            continue
        el = Element(m.group(0), [], [], line)
        _attributes(el, body[m.end():], line, bad)
        if stack:
            stack[-1].children.append(el)
        else:
            roots.append(el)
        if not self_closing:
            stack.append(el)
    for el in stack:
        bad("NCCL_MISMATCH", el.line, f"<{el.name}> is never closed")
    return roots, findings


def _attributes(el: Element, rest: str, line: int, bad) -> None:
    pos = 0
    while pos < len(rest):
        if rest[pos] == " ":
            spaces = len(rest[pos:]) - len(rest[pos:].lstrip(" "))
            if spaces > 1 and rest[pos + spaces:]:
                bad("NCCL_EXTRA_SPACE", line, f"<{el.name}>: {spaces} spaces between attributes; each extra space is an "
                    "empty attribute that counts toward NCCL's 16", "warning")
            pos += spaces
            continue
        m = _ATTR.match(rest, pos)
        if m:
            el.attrs.append((m.group(1), m.group(2)))
            pos = m.end()
            if pos < len(rest) and rest[pos] != " ":
                bad("NCCL_SYNTAX", line, f"<{el.name}>: no space after {m.group(1)}=\"...\"")
            continue
        chunk = rest[pos:].split(" ", 1)[0]
        if re.match(r"[A-Za-z0-9_]+\s*=\s", rest[pos:]) or re.match(r"[A-Za-z0-9_]+\s+=", rest[pos:]):
            bad("NCCL_SPACE_AROUND_EQUALS", line, f"<{el.name}>: spaces around '=' are fatal to NCCL")
        elif re.match(r"[A-Za-z0-9_]+='", rest[pos:]):
            bad("NCCL_SINGLE_QUOTES", line, f"<{el.name}>: single quotes are fatal before NCCL 2.27; use double quotes")
            q = re.match(r"([A-Za-z0-9_]+)='([^']*)'", rest[pos:])
            if q:
                el.attrs.append((q.group(1), q.group(2)))
                pos += q.end()
                continue
        elif re.match(r"[A-Za-z0-9_]+=[^\"']", rest[pos:]):
            bad("NCCL_UNQUOTED", line, f"<{el.name}>: unquoted value in {chunk!r} is fatal to NCCL")
        else:
            bad("NCCL_SYNTAX", line, f"<{el.name}>: cannot read attribute {chunk!r}")
        # resynchronise after the next closing quote or space
        nxt = rest.find(" ", pos + 1)
        if nxt < 0:
            break
        m2 = re.compile(r'"[^"]*"|\'[^\']*\'').match(rest, rest.find("=", pos) + 1) if "=" in rest[pos:] else None
        pos = max(nxt, m2.end() if m2 else 0)


def _line_index(text: str):
    starts = [0]
    for i, ch in enumerate(text):
        if ch == "\n":
            starts.append(i + 1)
    import bisect

    return lambda pos: bisect.bisect_right(starts, pos)
