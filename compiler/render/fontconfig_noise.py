"""Keep Fontconfig's complaints about the host's font configuration off the user's terminal.

The pygraphviz wheel bundles its own, older Fontconfig (2.13). When Graphviz first lays
out text, that library reads the system's configuration, including every template in
/usr/share/fontconfig/conf.avail, and prints a warning to file descriptor 2 for each
element newer than itself, e.g. on Debian bookworm (Fontconfig 2.14):

    Fontconfig warning: "/usr/share/fontconfig/conf.avail/05-reset-dirs-sample.conf",
    line 6: unknown element "reset-dirs"

That says nothing about the design and the user cannot act on it (the file is the OS's,
the library the wheel's; FONTCONFIG_FILE does not stop it, the template directory is
compiled in). Filtering changes nothing the library does, only what reaches the
terminal. So while Graphviz runs, fd 2 goes to a temporary file, and afterwards everything in it except lines from
Fontconfig is written on to stderr: other messages are never swallowed.
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
from contextlib import contextmanager

# Fontconfig prefixes the diagnostics it prints with this.
FONTCONFIG_LINE = re.compile(r"^Fontconfig (warning|error): ")


@contextmanager
def without_fontconfig_noise():
    """Run the body with C-level stderr captured; pass on every line not from Fontconfig."""
    try:
        sys.stderr.flush()
        saved = os.dup(2)
    except (OSError, ValueError):  # no fd 2 to redirect (closed, or a test harness stream)
        yield
        return
    with tempfile.TemporaryFile() as captured:
        os.dup2(captured.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            captured.seek(0)
            text = captured.read().decode("utf-8", "replace")
            kept = [line for line in text.splitlines(keepends=True) if not FONTCONFIG_LINE.match(line)]
            if kept:
                sys.stderr.write("".join(kept))
                sys.stderr.flush()
