"""Every message docs/troubleshooting.md quotes is one the code prints (issue 38: the page once showed ``HTTP 401 401``).

What counts as a quoted message (the page's markup convention, also stated at the top of the page):

- each line of a ```` ```text ```` block;
- each code span in a table column headed ``message``, ``message part``, ``line`` or ``code``;
- each other code span with a space in it, unless :data:`NOT_MESSAGES` lists it (a command, an option setting, the
  shape of a message rather than a message).

A message is tied to the code when it can be read, left to right, as literal pieces of the strings of the code that
prints it - the collection (plugins/, the event source, the role), the emulator (which answers with the service's own texts), and the
libraries whose texts the collection passes on (ansible-core's argument checks, requests, urllib3) - between values:
an id, a number, a host, a path, a quoted value, an option or variable name, ``...`` (left out) or ``<placeholder>``.
A word that is neither in those strings nor a value fails the test: a message reworded in the code and not in the page,
a message the page invents, a value written twice (``HTTP 401 401`` reads ``HTTP <status> <status>``, which no string of
the code has: the test knows that a status is followed by an error code, see :data:`VALUE`). The messages that come from
the operating system or OpenSSL, which no Python source holds, are listed in :data:`FOREIGN`, each with its origin.

Where the code's path is at hand without a request (the selection's and the wait options' checks, :data:`TRIGGERED`),
the test also makes the code print the message and compares it with the quotation. The messages of issues 29 and 38
(the role's, the emulator's, the connection errors') are triggered against the emulator in test_issue_38_newcomer.py
and test_issue_29_messages.py; this test covers every quotation.
"""

import ast
import glob
import json
import os
import re
import sys

import ansible
import pytest
import requests
import urllib3
import yaml

from conftest import ROOT

PAGE = os.path.join(ROOT, "docs", "troubleshooting.md")

# Code spans with a space that are not messages: commands, option settings, the shape of a message.
NOT_MESSAGES = {
    "<what was being done>: <error type>: <reason>",  # the shape of a transport error (the examples after it are checked)
    "GET /_emulator/requests",
    'access_key: "{{ modelarts_access_key }}"',
    "openssl x509 -inform der -in ca.der -out ca.pem",
    "curl http://169.254.169.254/openstack/latest/meta_data.json",
    '... > "$RUNNER_TEMP/id-token"',
    "chronyc tracking",
    "CN North-Beijing4",  # a region's display name, the wrong thing to give as region
    "wait: true",
    "curl -sS https://modelarts.cn-north-4.myhuaweicloud.com",
    "getent hosts <host>",
    "curl -v",
    "is_success: false",
    "validate_certs: false",
    "validate: strict",
    "validate: warn",
    "validate: off",
    "make demo",
    "diagnostics: false",
    "training_job_gate_diagnostics: false",
    "log_lines: 0",
    "latest: true",
    "training_jobs: []",
    "training_job_gate_latest: true",
    "--port 0",
    "worker-<node_count - 1>",
}

# Texts no source of the collection, the emulator or the libraries holds: the operating system's error strings,
# OpenSSL's reasons and a service text the emulator does not serve, passed on as they come.
FOREIGN = {
    "[Errno 111] Connection refused": "strerror(ECONNREFUSED), in the text of urllib3's NewConnectionError",
    "Connection reset by peer": "strerror(ECONNRESET)",
    "[SSL: WRONG_VERSION_NUMBER] wrong version number": "OpenSSL's reason, in Python's ssl.SSLError",
    "[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed: unable to get local issuer certificate": "OpenSSL's reason",
    "self-signed certificate in certificate chain": "OpenSSL's reason",
    "No such file or directory": "strerror(ENOENT), in an OSError the message quotes",
    "The job does not exist.": "the v1 service's error_message of ModelArts.0103 (the emulator serves no v1 error on HTTP 200)",
}

# Words the examples' users wrote (a misspelt option or value), quoted unquoted by the messages that echo them.
USER_WORDS = ("regoin", "regx", "nmae")

# A value in a message: what the code fills in rather than writes.
VALUE = re.compile(
    r"""
      \s*\.\.\.\s*                                      # a part left out
    | <[^<>]+>                                          # a placeholder
    | (?<!\w)'[^']*'(?!\w)                              # a quoted value
    | (?:(?<=^')|(?<=[\s(=\[]'))[^'\s]*'(?!\w)          # the rest of one (the code writes the opening quote)
    | (?:true|false|null)\b                             # a value of JSON or YAML
    | HTTPS?Connection(?:Pool)?                         # urllib3's class name in its text
    | HTTP\ [1-5][0-9][0-9](?=[ :]|$)                   # a status, never twice
    | [a-z][a-z0-9+]*://[^\s()]+                        # a URL
    | /[\w.@%-]+(?:/[\w.@%-]+)*                         # a path
    | \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ                   # a time
    | [0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12}       # a v2 job id
    | [0-9a-f]{32}                                      # a request id
    | \[?[\w-]+(?:\.[\w-]+)+\]?(?::\d+)?                # a host, an address, a code such as ModelArts.2775, a module name
    | [A-Z][A-Za-z]*(?:Error|Timeout|Header|URL)\b      # an exception's class name
    | (?:Creating|Pending|Running|Failed|Completed|Terminating|Terminated|Abnormal)\b  # a phase
    | [a-z][a-z0-9]*(?:_[a-z0-9]+)+\b                   # an option or variable name
    | [A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b                   # an environment variable
    | \w+(?:\|\w+)+                                     # options joined by |
    | [a-z0-9]+(?:-[a-z0-9]+)+\b                        # a name: a job's, a user's, a task's, a region's
    | (?<!HTTP\ \d\d\d\ )-?\d+(?:\.\d+)?s?\b            # a number, seconds (not a second status)
    | [a-z]{2}-[a-z]+-\d+                               # a region
    """,
    re.X,
)


def messages():
    """``(line, text)`` for each message the page quotes, and the set of :data:`NOT_MESSAGES` entries it has."""
    with open(PAGE) as handle:
        lines = handle.read().split("\n")
    found, skipped, header, fence = [], set(), None, None
    for number, line in enumerate(lines, 1):
        if line.startswith("```"):
            fence = None if fence is not None else line[3:].strip()
            continue
        if fence is not None:
            if fence == "text" and line.strip():
                found.append((number, line.strip()))
            continue
        cells = re.split(r"(?<!\\)\|", line)[1:-1] if line.startswith("|") else None
        if cells is None:
            header = None
        elif header is None:
            header = [cell.strip() for cell in cells]
        elif not set(line) <= set("|-: "):
            for title, cell in zip(header, cells):
                column = title.startswith("message") or title in ("line", "code (HTTP)")
                for span in re.findall(r"`([^`]+)`", cell):
                    if column or " " in span:
                        found.append((number, span))
            continue
    # Prose: the code spans of the text outside tables and blocks (a span may go on over a line break).
    prose = "\n".join("" if line.startswith("|") else line for line in lines)
    prose = re.sub(r"```.*?```", lambda block: "\n" * block.group().count("\n"), prose, flags=re.S)
    for span in re.finditer(r"`([^`]+)`", prose):
        if " " in span.group(1) or "\n" in span.group(1):
            found.append((prose.count("\n", 0, span.start()) + 1, span.group(1)))
    result = []
    for number, span in found:
        span = " ".join(span.replace("\\|", "|").split())
        if span in NOT_MESSAGES:
            skipped.add(span)
        else:
            result.append((number, span))
    return result, skipped


def _pieces(text):
    """The literal pieces of a string of the code: the parts between its %-placeholders and {}-fields."""
    return [piece for piece in re.split(r"%(?:\([a-z_]+\))?[-#0-9.]*[sdrfigex]|\{[^{}]*\}", text) if piece.strip()]


def _python_strings(path):
    with open(path, encoding="utf-8") as handle:
        tree = ast.parse(handle.read())
    docstrings = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list):
            # A docstring, and any other string standing alone as a statement, is never printed.
            docstrings.update(id(statement.value) for statement in body if isinstance(statement, ast.Expr))
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            yield node.value


def _data_strings(data):
    """The strings in parsed JSON or YAML, keys and values."""
    if isinstance(data, str):
        yield data
    elif isinstance(data, dict):
        for key, value in data.items():
            yield from _data_strings(key)
            yield from _data_strings(value)
    elif isinstance(data, list):
        for value in data:
            yield from _data_strings(value)


def _yaml_strings(path):
    """The role's text: quoted strings, and the text of each line outside its Jinja expressions."""
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            if line.lstrip().startswith("#"):
                continue
            for quoted in re.findall(r"'([^'\n]*)'|\"([^\"\n]*)\"", line):
                yield quoted[0] or quoted[1]
            for outside in re.split(r"\{\{.*?\}\}|\{%.*?%\}|\{\{|\}\}", line):
                yield outside.strip("\n")


def code_pieces():
    """Every literal piece of the strings of the code that prints the page's messages."""
    pieces = set()
    python = glob.glob(os.path.join(ROOT, "plugins", "**", "*.py"), recursive=True)
    python += glob.glob(os.path.join(ROOT, "emulator", "src", "**", "*.py"), recursive=True)
    python += glob.glob(os.path.join(ROOT, "extensions", "**", "*.py"), recursive=True)  # the event source's own lines
    for library in (ansible, requests, urllib3):
        base = os.path.dirname(library.__file__)
        if library is ansible:
            python += [os.path.join(base, "module_utils", "basic.py")]
            python += glob.glob(os.path.join(base, "module_utils", "parsing", "*.py"))
            python += glob.glob(os.path.join(base, "module_utils", "common", "*.py"))
        else:
            python += glob.glob(os.path.join(base, "**", "*.py"), recursive=True)
    for path in python:
        for text in _python_strings(path):
            pieces.update(_pieces(text))
    for path in glob.glob(os.path.join(ROOT, "roles", "*", "tasks", "*.yml")) + glob.glob(os.path.join(ROOT, "roles", "*", "vars", "*.yml")):
        for text in _yaml_strings(path):
            pieces.update(_pieces(text))
        with open(path, encoding="utf-8") as handle:
            pieces.update(piece for text in _data_strings(yaml.safe_load(handle)) for piece in _pieces(text))
    # The json module's reasons, which the credential exchanges quote with a small first letter.
    for path in glob.glob(os.path.join(os.path.dirname(json.__file__), "*.py")):
        pieces.update(piece[:1].lower() + piece[1:] for text in _python_strings(path) for piece in _pieces(text))
    # Python's re: why a metric's regex does not compile, which the option check quotes.
    for path in _re_sources():
        pieces.update(piece for text in _python_strings(path) for piece in _pieces(text))
    # The emulator's scenarios: the failure reasons, events and logs the service would send.
    for path in glob.glob(os.path.join(ROOT, "emulator", "src", "**", "*.json"), recursive=True):
        with open(path, encoding="utf-8") as handle:
            pieces.update(_data_strings(json.load(handle)))
    for path in glob.glob(os.path.join(ROOT, "emulator", "src", "**", "*.yaml"), recursive=True):
        with open(path, encoding="utf-8") as handle:
            pieces.update(_data_strings(yaml.safe_load(handle)))
    pieces.update(FOREIGN)
    pieces.update(USER_WORDS)
    return pieces


def _re_sources():
    """The files of Python's re that word its errors: the package re/ from Python 3.11, sre_parse and sre_constants before."""
    import re as re_module  # pylint: disable=import-outside-toplevel

    if os.path.basename(re_module.__file__) == "__init__.py":
        return glob.glob(os.path.join(os.path.dirname(re_module.__file__), "*.py"))
    return [os.path.join(os.path.dirname(re_module.__file__), name) for name in ("sre_parse.py", "sre_constants.py")]


@pytest.fixture(scope="module")
def pieces():
    return index(code_pieces())


def index(found):
    """The pieces by their first two characters, and the set of the pieces that are one word. A one-word piece
    (``'region'``, ``'keyword'``: an option's name, where a value came from) reads only as a whole word of a message,
    never as a part of one (``'e'``, ``'at'`` would let any sentence through)."""
    by_start, words, variants = {}, set(), set()
    for piece in found:
        # A quoted value is read with its quotes: the piece around it also reads without them.
        variants.update({piece, piece.strip(), piece.strip("'"), piece.strip().strip("'")})
    for text in variants:
        if re.fullmatch(r"\w+", text):
            words.add(text)
        elif text:
            by_start.setdefault(text[:2], []).append(text)
    return by_start, words, "\0" + "\0".join(variants) + "\0"


def _word_ends(message, start):
    """Where a word ends after ``start``, within 300 characters, and where the spaces after it end."""
    return [start + match.end(group) for match in re.finditer(r"(\S+)(\s*)", message[start : start + 300]) for group in (1, 2)]


def unread(message, pieces):
    """'' when ``message`` reads as pieces of the code's strings and values; else the part from where it stops."""
    by_start, words, joined = pieces
    elided = [match.start() for match in re.finditer(r"\s*\.\.\.", message)] + [len(message)]
    reachable, furthest = {0}, 0
    todo = [0]
    while todo:
        start = todo.pop()
        if start == len(message):
            return ""
        furthest = max(furthest, start)
        ends = set()
        value = VALUE.match(message, start)
        if value and value.end() > start:
            ends.add(value.end())
            if re.fullmatch(r"-?[0-9.]+s", value.group()):
                ends.add(value.end() - 1)  # the code may write the unit after the number
        cut = start == 0 or re.search(r"\.\.\.\s*$", message[:start]) is not None
        if cut:
            # After a part left out (or at the start of a quotation from the middle of a message): the end of a string.
            ends.update(end for end in _word_ends(message, start) if message[start:end] + "\0" in joined)
        for end in elided:
            # Before a part left out (or at the end of the quotation): the beginning of a string; between two, any part.
            if end > start and ("\0" + message[start:end] in joined or (cut and message[start:end] in joined)):
                ends.add(end)
        if message[start] == " ":
            ends.add(start + 1)  # a space between two values
        word = re.compile(r"\w+\b").match(message, start)
        if word and word.group() in words and (start == 0 or not re.match(r"\w", message[start - 1]) or word.group() in ("s", "es")):
            ends.add(word.end())  # a whole word, or the plural ending the code adds
        for text in by_start.get(message[start : start + 2], []) + by_start.get(message[start], []):
            if message.startswith(text, start):
                ends.add(start + len(text))
        for end in ends - reachable:
            reachable.add(end)
            todo.append(end)
    return message[furthest:]


def test_the_page_quotes_messages_and_the_list_of_non_messages_is_current():
    found, skipped = messages()
    assert len(found) > 150, "the convention found %d messages only: %s" % (len(found), found[:5])
    assert skipped == NOT_MESSAGES, "NOT_MESSAGES lists spans the page no longer has: %s" % sorted(NOT_MESSAGES - skipped)


def test_the_texts_from_outside_the_code_are_quoted_by_the_page():
    """FOREIGN and USER_WORDS hold only what the page quotes: a stale entry would let a wrong message through."""
    with open(PAGE) as handle:
        page = " ".join(handle.read().split())
    assert [text for text in list(FOREIGN) + list(USER_WORDS) if text not in page] == []


def test_every_quoted_message_is_printed_by_the_code(pieces):
    failures = []
    for number, message in messages()[0]:
        rest = unread(message, pieces)
        if rest:
            failures.append("line %s: %s\n    no string of the code reads on from: %s" % (number, message, rest[:80]))
    assert not failures, "docs/troubleshooting.md quotes what the code does not print:\n" + "\n".join(failures)


@pytest.mark.parametrize(
    "invented",
    [
        "get an IAM token for user ci-robot: HTTP 401 401: The username or password is wrong.",
        "training_job_gate: no job to gate on; set training_job_gate_ids",
        "validate_certs (environment variable HUAWEICLOUD_VALIDATE_CERTS) must be a truth value, got 'ture'",
        "get training job <id>: the deadline went by while the body was still arriving",
    ],
)
def test_a_message_the_code_does_not_print_is_found(invented, pieces):
    """The check can fail: a repeated status, a reworded or a made-up message does not read as the code's strings."""
    assert unread(invented, pieces)


def _selection(collection_root):
    if collection_root not in sys.path:
        sys.path.insert(0, collection_root)
    # pylint: disable=import-outside-toplevel,import-error
    from ansible_collections.modelarts.training.plugins.module_utils.door import options
    from ansible_collections.modelarts.training.plugins.module_utils.door import selection_checks as selection

    return selection, options


def _raised(call, *args):
    try:
        call(*args)
    except Exception as error:  # pylint: disable=broad-exception-caught
        return str(error)
    raise AssertionError("%s%r raised nothing" % (call.__name__, args))


# The quotations the code's own paths print, each with how to make the code print it (module_utils, no request).
TRIGGERED = {
    "training_job_id, tags are mutually exclusive (name and tags may be combined)": lambda s, o: _raised(
        s.select, {"training_job_id": "a", "tags": {"team": "x"}}
    ),
    "training_job_ids[1]: '..' is not a training job id (ModelArts ids look like 3f7a1c2e-9b4d-4e8a-a1b2-c3d4e5f60718: letters, "
    "digits, '-', '_' and '.', starting with a letter or digit, at most 128 characters)": lambda s, o: _raised(s.select, {"training_job_ids": ["a", ".."]}),
    "latest needs name or tags: it keeps the newest of the jobs they match": lambda s, o: _raised(s.select, {"training_job_id": "a", "latest": True}),
    "tags.release: 'a#b' is not a tag value the search takes (0-255 letters, digits, spaces and _ . : / = + - @)": lambda s, o: _raised(
        s.parse_tags, {"release": "a#b"}
    ),
    "tags: 'team/x' is not a tag key the search takes (...)": lambda s, o: _raised(s.parse_tags, {"team/x": None}),
    "tags: at most 10 tag keys, got 11": lambda s, o: _raised(s.parse_tags, dict(("k%d" % n, None) for n in range(11))),
    "tags.release: at most 10 values a tag key, got 11": lambda s, o: _raised(s.parse_tags, {"release": [str(n) for n in range(11)]}),
    "tags.release: a value is given twice": lambda s, o: _raised(s.parse_tags, {"release": ["a", "a"]}),
    "tags.release: an empty value means any value; give it alone (or null, or [])": lambda s, o: _raised(s.parse_tags, {"release": ["", "a"]}),
    "tags.release: a tag value must be a string, got 1.1 (quote numbers such as 1.10 in YAML)": lambda s, o: _raised(s.parse_tags, {"release": 1.1}),
    "workspace_id: 'ws-1' is not a workspace id (0, the default workspace, or the 32 letters and digits of a workspace's id)": lambda s, o: _raised(
        s.check_workspace_id, "ws-1"
    ),
    "wait_for and fail_on must not share phases, both contain: Failed": lambda s, o: o.wait_option_problems(["Completed", "Failed"], ["Failed"], 60, 5, 60)[0],
    "wait_for must name at least one phase": lambda s, o: o.wait_option_problems([], ["Failed"], 60, 5, 60)[0],
    "wait_timeout must be 0 or more seconds, got -1": lambda s, o: o.wait_option_problems(["Completed"], ["Failed"], -1, 5, 60)[0],
}


def quoted_pattern(quoted):
    """A quotation as a regular expression of the whole message: ``...`` and ``<placeholder>`` stand for any text."""
    parts = re.split(r"(\.\.\.|<[a-z0-9 ]+>)", quoted)
    return re.compile("".join(".*?" if index % 2 else re.escape(part) for index, part in enumerate(parts)))


@pytest.mark.parametrize("quoted", sorted(TRIGGERED))
def test_the_code_prints_the_quotation(quoted, collection_root):
    """Where the code's own path is at hand, the quotation is compared with what it prints, not only with its strings."""
    assert quoted in [message for _number, message in messages()[0]], "docs/troubleshooting.md no longer quotes: %s" % quoted
    printed = TRIGGERED[quoted](*_selection(collection_root))
    assert quoted_pattern(quoted).fullmatch(printed), "the code prints:\n%s\nthe page quotes:\n%s" % (printed, quoted)
