# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every text helper of the collection: messages stay one line, bounded, and free of secrets.

* :func:`redact` masks secret values and URL user-info; :data:`MASK` is what replaces them;
* :func:`label` renders an id or a name (the user's or the service's input) as one bounded line;
* :func:`excerpt` quotes a response body; :func:`describe_value` describes a JSON value (containers
  by size, never printed); :func:`truncate` cuts a text that is already safe;
* :func:`printable` writes a text's control characters out (``\\n``, ``\\x1b``) so it stays one line, and
  :func:`inert` also breaks the Jinja delimiters of a server's text so that no template engine runs it;
* :func:`describe_job` names a job by its item (``training job <id> (<name>)``), the way every message does;
* :func:`name_key` names a job by its key (a v2 id, a v1 ``('v1', job_id, version_id)`` or a search
  result ``('search', n)``): the one way a message names a job before its document is known.
"""

from __future__ import annotations

import functools
import json
import os
import re

MASK = "********"
EXCERPT_LENGTH = 160
LABEL_LENGTH = 120
VALUE_CHARS = 60

# The user-info of a URL: everything from ``//`` to the LAST ``@`` of the URL, since a password written
# raw may hold ``/``, ``@``, ``#``, ``?`` or ``:`` (``http://user:pa/ss@proxy:3128``). A ``@`` later in a
# URL's path masks more than the user-info: the price of never showing part of a password.
_URL_START = re.compile(r"//|\\/\\/")
_URL_END = re.compile(r"[\s'\"<>]")
# Characters percent-encoding leaves as they are whatever the encoder (RFC 3986 unreserved).
_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
_WHITESPACE = re.compile(r"\s+")
# A percent sign, maybe itself percent-encoded (up to three times); a backslash as it is, percent-encoded or an HTML reference.
_PERCENT = "%(?:25){0,3}"
_BACKSLASH = r"(?:\\|%(?:25){0,3}5[cC]|&#0{0,6}92;|&#[xX]0{0,6}5[cC];)"
_JSON_TYPE_NAMES = ((bool, "boolean"), (int, "integer"), (float, "number"), (str, "string"), (list, "array"), (tuple, "array"), (dict, "object"))


def _hex(number, width):
    """``number`` in hexadecimal as a pattern that accepts either case of its letter digits."""
    return "".join("[%s%s]" % (digit, digit.lower()) if digit.isalpha() else digit for digit in "%0*X" % (width, number))


def _char_pattern(ch):
    """Every way an encoder may write ``ch``: as it is, percent-encoded (``+`` for a space) or as an HTML character
    reference, each maybe behind backslashes (JSON, ``repr``), or as a ``\\uXXXX``/``\\xXX``/``\\UXXXXXXXX`` escape;
    the backslashes themselves maybe encoded too (JSON inside a URL or a page). Quantifiers are bounded, so
    matching stays linear whatever the text."""
    if ch in _UNRESERVED:
        return re.escape(ch)
    code = ord(ch)
    data = ch.encode("utf-8", "surrogatepass")
    named = {"&": "|amp", "<": "|lt", ">": "|gt", '"': "|quot", "'": "|apos"}.get(ch, "")
    plain = [re.escape(ch), "".join(_PERCENT + _hex(byte, 2) for byte in data), "&(?:amp;){0,3}(?:#0{0,6}%d|#[xX]0{0,6}%s%s);" % (code, _hex(code, 1), named)]
    if ch == " ":
        plain.append(r"\+")
    escape = _BACKSLASH + "{1,8}"
    escapes = ["".join(escape + "x" + _hex(byte, 2) for byte in data)]
    if code <= 0xFF:
        escapes.append(escape + "x" + _hex(code, 2))
    if code <= 0xFFFF:
        escapes.append(escape + "u" + _hex(code, 4))
    else:
        high, low = divmod(code - 0x10000, 0x400)
        escapes.append(escape + "u" + _hex(0xD800 + high, 4) + escape + "u" + _hex(0xDC00 + low, 4))
        escapes.append(escape + "U" + _hex(code, 8))
    return "(?:%s{0,8}(?:%s)|%s)" % (_BACKSLASH, "|".join(plain), "|".join(escapes))


@functools.lru_cache(maxsize=64)
def _masking(secrets):
    """For ``secrets``: the values (longest first), a pattern per value that has a character some encoder escapes,
    and the longest text one of them may match (an escaped character takes at most 400 characters)."""
    values = tuple(sorted(set(secrets), key=len, reverse=True))
    patterns = tuple(re.compile("".join(_char_pattern(ch) for ch in value)) for value in values if not all(ch in _UNRESERVED for ch in value))
    longest = max(sum(1 if ch in _UNRESERVED else 400 for ch in value) for value in values)
    return values, patterns, longest


def _secret_spans(text, secrets):
    """The ``(start, end)`` of every secret in ``text``, in any form, and of every URL's user-info; merged and in order."""
    spans = []
    if secrets:
        values, patterns, _longest = _masking(secrets)
        for value in values:
            found = text.find(value)
            while found >= 0:
                spans.append((found, found + len(value)))
                found = text.find(value, found + len(value))
        for pattern in patterns:
            spans.extend(match.span() for match in pattern.finditer(text) if match.end() > match.start())
    scan = 0
    while True:
        # A URL's user-info: from "//" (JSON's "\\/\\/" too) to the last "@" before the URL ends.
        start = _URL_START.search(text, scan)
        if start is None:
            break
        end = _URL_END.search(text, start.end())
        scan = end.start() if end is not None else len(text)
        at = text.rfind("@", start.end(), scan)
        if at >= 0:
            spans.append((start.end(), at))
    merged = []
    for start, end in sorted(spans):
        if merged and start < merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def _masked(text, spans, limit=None):
    """``text`` with each span replaced by :data:`MASK`; with ``limit``, only what lies before it (a span that
    starts before it is masked whole)."""
    pieces = []
    kept = 0
    for start, end in spans:
        if limit is not None and start >= limit:
            break
        pieces.extend((text[kept:start], MASK))
        kept = end
    pieces.append(text[kept:] if limit is None else text[kept : max(kept, limit)])
    return "".join(pieces)


class Secrets(tuple):
    """Secret values to mask, each once, as text; built once by a caller that masks many texts with the same values
    (diagnostics: every event and log line of a failed job) and passed as ``secrets``.  Its hash is computed once, so
    that finding the masking compiled for it (:func:`_masking`) does not go over every value for every text."""

    def __new__(cls, values=()):
        self = super().__new__(cls, dict.fromkeys(str(value) for value in values if value))
        self._hash = tuple.__hash__(self)
        return self

    def __hash__(self):
        return self._hash

    def __eq__(self, other):
        return self is other or tuple.__eq__(self, other)

    def __ne__(self, other):
        return not self == other


def _wanted(secrets):
    if isinstance(secrets, Secrets):
        return secrets
    return tuple(str(secret) for secret in secrets if secret)


def redact(text, secrets=()):
    """Mask each non-empty secret value, in every form a server or a library may echo it, and any ``user:password@`` in URLs.

    The forms: the value as it is, backslash-escaped (JSON, ``repr``, once or more, ASCII or not),
    percent-encoded (any safe set, either case, once or more) and HTML-escaped, or a mix of these.
    Mask before cutting a text to length, never after: a secret cut in two is no longer found (see
    :func:`excerpt` and :func:`label`).
    """
    text = str(text)
    return _masked(text, _secret_spans(text, _wanted(secrets)))


def redact_part(text, start, end, secrets=()):
    """``text[start:end]`` as :func:`redact` shows it within ``text``: the secrets are found in the whole text first, so
    that the part of one that lies inside (a regex group that captured the first 40 characters of a token) is masked too."""
    text = str(text)
    inside = [(max(first, start) - start, min(last, end) - start) for first, last in _secret_spans(text, _wanted(secrets)) if first < end and last > start]
    return _masked(text[start:end], inside)


def redact_value(value, secrets=()):
    """``value`` (JSON-like data: dicts, lists, strings, numbers) with :func:`redact` applied to every string.

    Its JSON text is looked over once first.  When it holds no secret in any form and no URL user-info, the value is
    returned as it is, without a redaction per string (a job's item holds hundreds of them); when what is found there
    is URL user-info alone (a task's ``ssh://ma-user@...`` URL), only the strings holding a URL are redacted; anything
    else has every string redacted one by one."""
    wanted = _wanted(secrets)
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return _redact_each(value, wanted, lambda string: True)
    spans = _secret_spans(text, wanted)
    # A string's "\/\/" (a URL's start as JSON escapes it, which redact reads as one) is "\\/\\/" in the JSON text,
    # where the URL pattern does not see it: such a value is looked at string by string.
    if not spans and "\\\\/\\\\/" not in text:
        return value
    if spans == _secret_spans(text, ()):
        # URL user-info only: a string without "//" (or its JSON escape) holds no URL, and no secret either.
        return _redact_each(value, wanted, lambda string: "//" in string or "\\/\\/" in string)
    return _redact_each(value, wanted, lambda string: True)


def _redact_each(value, secrets, may_hold):
    if isinstance(value, str):
        return redact(value, secrets) if may_hold(value) else value
    if isinstance(value, dict):
        return dict((key, _redact_each(entry, secrets, may_hold)) for key, entry in value.items())
    if isinstance(value, list):
        return [_redact_each(entry, secrets, may_hold) for entry in value]
    return value


def label(value, length=LABEL_LENGTH, secrets=()):
    """``value`` as one bounded, printable line for messages: secrets masked, control characters escaped, long values cut.

    A job id is the user's (or another system's) input: a newline in it must not forge a line of
    Ansible's output, and a 5,000-character id must not make a 5,000-character message.  Masking
    comes first, so the part of a secret that a cut would leave is never shown.
    """
    text = printable(redact(value, secrets))
    return text if len(text) <= length else text[:length] + "..."


def printable(text):
    """``text`` on one line: every character that is not printable (newlines, carriage returns, ANSI escapes, Unicode
    line separators) written out as Python writes it in a string (``\\n``, ``\\x1b``, ``\\u2028``); nothing is cut."""
    text = str(text)
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in text)


# A "{" that would open a Jinja block, expression or comment; "#jinja2:" at the start names other delimiters.
_JINJA_OPENING = re.compile(r"\{(?=[{%#])")
_JINJA_OVERRIDE = "#jinja2:"


def inert(text):
    """A server's ``text`` (a job name) as a value no template engine runs: one line (:func:`printable`), a space after
    every ``{`` that opens a Jinja delimiter (``{{`` becomes ``{ {``, ``{%`` becomes ``{ %``, ``{#`` becomes ``{ #``)
    and a leading ``#jinja2:`` (which chooses other delimiters) written ``# jinja2:``.

    ansible-rulebook hands the whole event to ``run_playbook`` as extra vars, and ansible-playbook renders a template
    found in extra vars: a job named ``{{ lookup('pipe', ...) }}`` would run a command on the rulebook's host.
    """
    text = _JINJA_OPENING.sub("{ ", printable(text))
    if text.startswith(_JINJA_OVERRIDE):
        text = "# " + text[1:]
    return text


def excerpt(body, secrets=(), length=EXCERPT_LENGTH):
    """A one-line, bounded, redacted excerpt of a response body for error messages.

    Secrets are masked before anything is cut: cut first, the part of a secret before the cut no
    longer matches it and would be shown.  Only the body's start is read: ``8 * length`` characters,
    and as many more as the longest form of a secret takes, so that a secret starting there is masked whole.
    """
    window = length * 8
    wanted = _wanted(secrets)
    scanned = window + (_masking(wanted)[2] if wanted else 0) + 1024
    if isinstance(body, bytes):
        body = body[: scanned * 4].decode("utf-8", "replace")
    head = str(body)[:scanned]
    text = _masked(head, _secret_spans(head, wanted), window)
    text = _WHITESPACE.sub(" ", text).strip()
    if len(text) > length:
        text = text[:length] + "..."
    return text


def truncate(text, limit):
    """``text`` cut to ``limit`` characters, the last three of them ``...`` when it was longer."""
    return text if len(text) <= limit else text[: limit - 3] + "..."


def json_type_name(value):
    """Return the JSON type name of a Python value (``null``, ``string``, ...)."""
    if value is None:
        return "null"
    for python_type, name in _JSON_TYPE_NAMES:
        if isinstance(value, python_type):
            return name
    return type(value).__name__


def describe_value(value, limit=VALUE_CHARS):
    """Return a short, bounded description of a JSON value for error messages.

    Containers are described rather than printed: their repr can be huge or nested deeper
    than the recursion limit.  Very large integers are described by size because ``repr``
    of an int over 4300 digits raises ``ValueError`` on recent Pythons.
    """
    if value is None or isinstance(value, bool):
        return "null" if value is None else ("true" if value else "false")
    if isinstance(value, int):
        return repr(value) if value.bit_length() <= 128 else "an integer of %d bits" % value.bit_length()
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, str):
        if len(value) <= limit:
            return repr(value)
        return "%s... (%d characters)" % (repr(value[:limit]), len(value))
    if isinstance(value, dict):
        return "an object with %d key%s" % (len(value), "" if len(value) == 1 else "s")
    if isinstance(value, (list, tuple)):
        return "an array of %d item%s" % (len(value), "" if len(value) == 1 else "s")
    return "a value of type %s" % type(value).__name__


def describe_typed(value):
    """A value with its JSON type, for "expected X, got ..." messages: ``string 'abc'``, ``an object with 2 keys``."""
    if value is None or isinstance(value, (dict, list)):
        return describe_value(value)
    return "%s %s" % (json_type_name(value), describe_value(value))


def name_key(key):
    """Name a job by its key, for messages: ``3f7a...``, ``v1 job 10 version 2`` or ``search result 3``."""
    if isinstance(key, tuple):
        if len(key) == 3 and key[0] == "v1" and all(isinstance(part, int) for part in key[1:]):
            return "v1 job %s version %s" % (label(key[1]), label(key[2]))
        if len(key) == 2 and key[0] == "search":
            return "search result %s" % (label(key[1]),)
        return "/".join(label(part) for part in key)
    return label(key)


def describe_job(key, item):
    """Name a job for a message: id, name and (v1) version from its item, else its key."""
    if item:
        text = "training job %s" % (label(item.get("id")),)
        if item.get("version_id") is not None:
            text += " version %s" % (label(item.get("version_id")),)
        if item.get("name"):
            text += " (%s)" % (label(item.get("name")),)
        return text
    return "training job %s" % (name_key(key),)


# -- where a value came from, and paths as a task sees them ---------------------------------------------------

# Level names, as messages show them.
LEVEL_OPTION = "task option"
LEVEL_KEYWORD = "keyword"
LEVEL_VARIABLE = "variable"
LEVEL_ARGUMENT = "argument"
LEVEL_ENVIRONMENT = "environment"


def level_text(level):
    """Where a set of values came from, as a message says it: ``given as task options``."""
    return {
        LEVEL_OPTION: "given as task options",
        LEVEL_KEYWORD: "given as lookup keywords",
        LEVEL_VARIABLE: "given as modelarts_* variables",
        LEVEL_ARGUMENT: "given as source arguments",
        LEVEL_ENVIRONMENT: "from HUAWEICLOUD_* environment variables",
    }.get(level, level)


# What posixpath.expandvars replaces: $name and ${name}.
_VARIABLE = re.compile(r"\$(\w+|\{[^}]*\})", re.ASCII)


def expand_path(value, environ=None):
    """``value`` as a ``type: path`` option reaches the module (``os.path.expanduser(os.path.expandvars(value))``,
    ansible-core's ``check_type_path``), its variables and ``~`` taken from ``environ`` - the environment the task
    sees (``os.environ`` when None) - never from the process that runs it when that differs (the action plugin's
    worker: the task's ``environment:`` is not in its ``os.environ``)."""
    return expand_user(_expand_vars(value, os.environ if environ is None else environ), environ)


def _expand_vars(path, environ):
    # posixpath.expandvars over a mapping: a variable the mapping lacks is left as written.
    if "$" not in path:
        return path
    index = 0
    while True:
        found = _VARIABLE.search(path, index)
        if not found:
            return path
        index, end = found.span(0)
        name = found.group(1)
        if name.startswith("{") and name.endswith("}"):
            name = name[1:-1]
        if name in environ:
            tail = path[end:]
            path = path[:index] + environ[name]
            index = len(path)
            path += tail
        else:
            index = end


def expand_user(path, environ=None):
    """``os.path.expanduser(path)`` with ``HOME`` from ``environ`` (``os.environ`` when None): a leading ``~`` is the
    home of the environment the task sees; ``~user`` and a ``~`` without ``HOME`` are the password database's, as there."""
    environ = os.environ if environ is None else environ
    if not path.startswith("~"):
        return path
    end = path.find("/", 1)
    end = len(path) if end < 0 else end
    if end == 1 and "HOME" in environ:
        home = environ["HOME"]
    else:
        try:
            import pwd  # pylint: disable=import-outside-toplevel

            home = pwd.getpwuid(os.getuid()).pw_dir if end == 1 else pwd.getpwnam(path[1:end]).pw_dir
        except (ImportError, KeyError):
            return path
    return (home.rstrip("/") + path[end:]) or "/"


# -- names the caller did not mean ----------------------------------------------------------------------------


def unknown_names(given, known, prefix="", hints=None):
    """``[(name, hint)]`` for each name of ``given`` not in ``known``, sorted; ``hint`` is ``"did you mean <closest known name>?"``.

    The closest name is ``difflib.get_close_matches`` over ``known``, compared without ``prefix`` (the
    role's ``training_job_gate_`` would make any two of its names look alike); ``hints`` replaces the
    suggestion for particular names; a name with neither gets ``None``.
    """
    import difflib  # pylint: disable=import-outside-toplevel  # only a misspelt name needs it

    known = [str(name) for name in known]
    stems = dict((name[len(prefix) :] if prefix and name.startswith(prefix) else name, name) for name in known)
    found = []
    for name in sorted(set(str(name) for name in given) - set(known)):
        stem = name[len(prefix) :] if prefix and name.startswith(prefix) else name
        close = difflib.get_close_matches(stem, list(stems), n=1)
        hint = (hints or {}).get(name) or ("did you mean %s?" % stems[close[0]] if close else None)
        found.append((name, hint))
    return found


def unknown_text(found, what):
    """``unknown keyword auth_tokn (did you mean auth_token?)``: the names :func:`unknown_names` found, as one phrase."""
    names = ", ".join("%s (%s)" % (name, hint) if hint else name for name, hint in found)
    return "unknown %s%s %s" % (what, "s" if len(found) > 1 else "", names)


# -- booleans as Ansible writes them -------------------------------------------------------------------------

BOOLEAN_TRUE = frozenset(("yes", "on", "t", "1", "y", "true"))
BOOLEAN_FALSE = frozenset(("false", "f", "off", "no", "0", "n"))


def number_word(value):
    """``value`` as a number when it is text that reads as one (templated values are text: ``"0.5"`` is 0.5); any other
    value as it is, and None for text that reads as no number - the caller checks the type and the range, and its
    message says which option it was."""
    if not isinstance(value, str):
        return value
    try:
        return float(value.strip())
    except ValueError:
        return None


def boolean_word(value):
    """``True`` or ``False`` for a boolean, one of Ansible's boolean words (any case, spaces around) or 1/0; ``None`` for
    anything else - the caller's message says which option it was."""
    if isinstance(value, bool):
        return value
    key = value.strip().lower() if isinstance(value, str) else value
    if isinstance(key, (dict, list)):
        return None
    try:
        if key in BOOLEAN_TRUE or key == 1:
            return True
        if key in BOOLEAN_FALSE or key == 0:
            return False
    except TypeError:  # an unhashable value
        pass
    return None
