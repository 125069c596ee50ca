"""``--cfg-options a.b=1 c=[1,2]``: argparse support for config overrides."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

from .errors import ConfigError

_PAIRS = {"[": "]", "(": ")"}


def parse_scalar(text: str) -> Any:
    """``'1'`` → 1, ``'0.5'`` → 0.5, ``'true'``/``'false'`` → bool, ``'None'`` → None."""
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    if text == "None":
        return None
    return text


def _split_top_level(text: str, option: str) -> list[str]:
    """Split on commas that are not inside brackets or parentheses."""
    parts, depth, start, stack = [], 0, 0, []
    for index, char in enumerate(text):
        if char in _PAIRS:
            stack.append(_PAIRS[char])
            depth += 1
        elif char in ")]":
            if not stack or stack.pop() != char:
                raise ConfigError(
                    f"unbalanced '{char}' in --cfg-options value {text!r}", key=option
                )
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(text[start:index])
            start = index + 1
    if stack:
        raise ConfigError(f"unclosed bracket in --cfg-options value {text!r}", key=option)
    parts.append(text[start:])
    return parts


def parse_value(text: str, option: str = "") -> Any:
    """Parse an override value: scalars, ``a,b``, ``[a,b]``, ``(a,b)``, nested.

    Quotes around the whole value are dropped and spaces removed (as in
    mmengine), so ``"(1, 2)"`` is the tuple ``(1, 2)``.
    """
    text = text.strip("'\"").replace(" ", "")
    is_tuple = False
    if text.startswith("(") and text.endswith(")"):
        is_tuple, text = True, text[1:-1]
    elif text.startswith("[") and text.endswith("]"):
        text = text[1:-1]
    elif "," not in text:
        return parse_scalar(text)
    parts = [part for part in _split_top_level(text, option) if part != ""]
    bracketed = text[:1] in _PAIRS and text[-1:] == _PAIRS[text[:1]]
    if parts == [text] and "," in text and not bracketed:  # a call such as dict(a=1,b=2)
        raise ConfigError(
            f"cannot parse the --cfg-options value {text!r}: values are numbers, strings, "
            "lists [a,b] and tuples (a,b). Set a dict in the config file, or each of its keys "
            f"by its path ({option or 'key'}.0.name=value)",
            key=option or None,
        )
    values = [parse_value(part, option) for part in parts]
    return tuple(values) if is_tuple else values


def parse_options(items: Sequence[str]) -> dict[str, Any]:
    """Turn ``['a.b=1', 'c=[1,2]']`` into ``{'a.b': 1, 'c': [1, 2]}``."""
    options: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ConfigError(
                f"bad override {item!r}: expected KEY=VALUE, e.g. optim_wrapper.optimizer.lr=0.01",
                filename="--cfg-options",
            )
        options[key.strip()] = parse_value(value, key)
    return options


class DictAction(argparse.Action):
    """argparse action collecting ``KEY=VALUE`` pairs into a dict of parsed values.

    ``--cfg-options model.depth=50 pipeline=[1,2] size="(224,224)" flag=true x=None``
    """

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        options = dict(getattr(namespace, self.dest, None) or {})
        if values is not None:
            items = [values] if isinstance(values, str) else list(values)
            try:
                options.update(parse_options(items))
            except ConfigError as exc:
                parser.error(str(exc))
        setattr(namespace, self.dest, options)
