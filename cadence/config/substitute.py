"""Text substitutions applied to a config file before it is parsed.

* ``{{fileDirname}}``, ``{{fileBasename}}``, ``{{fileBasenameNoExtension}}``,
  ``{{fileExtname}}``: facts about the file itself.
* ``{{$NAME:default}}``: an environment variable (the default may be empty;
  without ``:default`` the variable must be set).
* ``{{_base_.a.b}}``: a value from the merged base configs, replaced after
  parsing. In code position the whole value is substituted (a dict stays a
  dict); inside a string literal its ``str()`` is spliced into the string.
"""

from __future__ import annotations

import copy
import os
import re
import zlib
from dataclasses import dataclass, field
from typing import Any

from .errors import ConfigError, ConfigKeyError

_PREDEFINED = re.compile(
    r"\{\{\s*(fileDirname|fileBasename|fileBasenameNoExtension|fileExtname)\s*\}\}"
)
_ENV = re.compile(r"\{\{\s*['\"]?\s*\$(\w+)\s*(?::\s*(.*?)\s*)?['\"]?\s*\}\}")
_BASE_REF = re.compile(r"\{\{\s*_base_\.([\w.]+?)\s*\}\}")


def line_of(text: str, offset: int) -> int:
    """1-based line number of ``offset`` in ``text``."""
    return text.count("\n", 0, offset) + 1


def substitute_predefined(text: str, filename: str) -> str:
    """Replace ``{{fileDirname}}`` and friends with facts about ``filename``."""
    if "{{" not in text:
        return text
    dirname, basename = os.path.split(filename)
    stem, ext = os.path.splitext(basename)
    values = {
        "fileDirname": dirname.replace("\\", "/"),
        "fileBasename": basename,
        "fileBasenameNoExtension": stem,
        "fileExtname": ext,
    }
    return _PREDEFINED.sub(lambda m: values[m.group(1)], text)


def substitute_env(text: str, filename: str, used: dict[str, str]) -> str:
    """Replace ``{{$NAME:default}}``; record the values taken from the environment."""
    if "{{" not in text:
        return text

    def replace(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        if name in os.environ:
            used[name] = os.environ[name]
            return os.environ[name]
        if default is None:
            raise ConfigKeyError(
                f"environment variable '{name}' is not set and {match.group(0)} gives no "
                f"default; set it or write {{{{${name}:default}}}}",
                filename=filename,
                line=line_of(text, match.start()),
            )
        return default

    return _ENV.sub(replace, text)


@dataclass(frozen=True)
class BaseRef:
    """One ``{{_base_.path}}`` occurrence: where it is and how it was replaced."""

    path: str
    line: int
    spliced: bool  # inside a Python string literal: its str() is spliced in
    python: bool


@dataclass
class BaseRefs:
    """Placeholders standing in for ``{{_base_.x}}`` until the bases are merged."""

    tokens: dict[str, BaseRef] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.tokens)

    def resolve(self, value: Any, values: dict[str, Any], filename: str) -> Any:
        """Put the base values (``values[token]``) back where the tokens are."""
        if isinstance(value, str):
            if value in values:
                return copy.deepcopy(values[value])
            if "__cadence_base_" in value:
                for token, sub in values.items():
                    ref = self.tokens[token]
                    if ref.spliced:
                        value = value.replace(token, str(sub))
                    elif token in value and ref.python:
                        raise ConfigError(
                            f"{{{{_base_.{ref.path}}}}} is used inside an expression; it can only "
                            f"stand for a whole value. Use _base_.{ref.path} (a Python variable "
                            "after _base_ = [...]) to compute with it",
                            filename=filename,
                            line=ref.line,
                        )
                    else:
                        value = value.replace(f'"{token}"', str(sub)).replace(token, str(sub))
            return value
        if isinstance(value, dict):
            for key in list(value.keys()):
                item = dict.__getitem__(value, key)
                dict.__setitem__(value, key, self.resolve(item, values, filename))
            return value
        if isinstance(value, list):
            return [self.resolve(v, values, filename) for v in value]
        if isinstance(value, tuple) and not hasattr(value, "_fields"):
            return tuple(self.resolve(v, values, filename) for v in value)
        return value


def _inside_string(text: str, offset: int) -> bool:
    """Whether ``offset`` lies inside a one-line string literal of Python source."""
    line_start = text.rfind("\n", 0, offset) + 1
    quote = None
    index = line_start
    while index < offset:
        char = text[index]
        if quote is None:
            if char == "#":
                return False
            if char in "'\"":
                quote = char
        elif char == "\\":
            index += 1
        elif char == quote:
            quote = None
        index += 1
    return quote is not None


def substitute_base_refs(text: str, python: bool) -> tuple[str, BaseRefs]:
    """Replace ``{{_base_.x}}`` with unique placeholder tokens."""
    refs = BaseRefs()
    if "_base_." not in text or "{{" not in text:
        return text, refs
    salt = f"{zlib.crc32(text.encode()):08x}"  # stable, so compiled files can be cached
    pieces: list[str] = []
    last = 0
    for n, match in enumerate(_BASE_REF.finditer(text)):
        token = f"__cadence_base_{n}_{salt}__"
        in_string = python and _inside_string(text, match.start())
        line = line_of(text, match.start())
        refs.tokens[token] = BaseRef(match.group(1), line, in_string, python)
        pieces.append(text[last : match.start()])
        pieces.append(token if in_string else f'"{token}"')
        last = match.end()
    pieces.append(text[last:])
    return "".join(pieces), refs
