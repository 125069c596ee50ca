"""JSON encoding shared by the mmengine parity generator and the parity test.

``Config.to_dict()`` returns plain Python containers, but a few of the values
found in real configs do not survive a JSON round trip unchanged:

* tuples (``out_indices=(0, 1, 2, 3)``) would come back as lists;
* dicts whose keys are not all strings would get their keys stringified;
* classes, functions and modules (possible in pure-Python configs or when a
  loader keeps objects instead of import-path strings) are not JSON at all;
* NaN/inf floats are not valid JSON;
* predefined variables such as ``{{fileDirname}}`` expand to absolute paths
  of the machine that loaded the config.

:func:`encode` maps such values onto tagged JSON objects and replaces corpus
directory prefixes with ``<CORPUS>``. :func:`compare` does a type-strict,
order-insensitive comparison of two encoded values and returns readable
differences, one per key path. :func:`order_differences` reports dict key
order mismatches separately.

This module only needs the standard library: the generator runs it under
mmengine's interpreter and the test under cadence's.
"""

import math
import os
import types

CORPUS_TOKEN = '<CORPUS>'

TUPLE_TAG = '__tuple__'
DICT_TAG = '__dict_items__'
OBJECT_TAG = '__object__'
MODULE_TAG = '__module__'
FLOAT_TAG = '__float__'
SET_TAG = '__set__'
UNENCODABLE_TAG = '__unencodable__'

_TAGS = (TUPLE_TAG, DICT_TAG, OBJECT_TAG, MODULE_TAG, FLOAT_TAG, SET_TAG,
         UNENCODABLE_TAG)


class UnencodableValue(TypeError):
    """Raised by :func:`encode` with ``strict=True`` for unknown types."""


def corpus_prefixes(*dirs):
    """Return the spellings of ``dirs`` to replace by :data:`CORPUS_TOKEN`.

    Both the path as given and its symlink-resolved form are returned (a
    loader may or may not resolve symlinks, e.g. ``/tmp`` on macOS), with
    backslashes turned into forward slashes as the predefined variables do.
    Longest first, so that nested prefixes are replaced correctly.
    """
    found = set()
    for d in dirs:
        d = os.fspath(d)
        for p in (os.path.abspath(d), os.path.realpath(d)):
            p = p.rstrip('/\\')
            found.add(p)
            found.add(p.replace('\\', '/'))
    return tuple(sorted(found, key=len, reverse=True))


def normalise_str(text, prefixes):
    for p in prefixes:
        if p and p in text:
            text = text.replace(p, CORPUS_TOKEN)
    return text


def _object_path(obj):
    module = getattr(obj, '__module__', None)
    qualname = getattr(obj, '__qualname__', None) or getattr(
        obj, '__name__', None)
    if module and qualname:
        return f'{module}.{qualname}'
    return qualname or repr(obj)


def encode(value, prefixes=(), strict=False):
    """Encode ``value`` (the output of ``Config.to_dict()``) as JSON data.

    Args:
        value: the value to encode.
        prefixes: absolute directory prefixes to replace by ``<CORPUS>`` in
            every string (see :func:`corpus_prefixes`).
        strict: raise :class:`UnencodableValue` for a value of an unknown
            type instead of encoding it as ``{"__unencodable__": ...}``.
    """
    # bool first: it is a subclass of int.
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, str):
        return normalise_str(value, prefixes)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        if math.isnan(value):
            return {FLOAT_TAG: 'nan'}
        if math.isinf(value):
            return {FLOAT_TAG: 'inf' if value > 0 else '-inf'}
        return float(value)
    if isinstance(value, dict):
        keys = list(value.keys())
        if all(isinstance(k, str) for k in keys) and not any(
                k in _TAGS for k in keys):
            return {
                normalise_str(k, prefixes): encode(v, prefixes, strict)
                for k, v in value.items()
            }
        return {
            DICT_TAG: [[encode(k, prefixes, strict),
                        encode(v, prefixes, strict)]
                       for k, v in value.items()]
        }
    if isinstance(value, tuple):
        return {TUPLE_TAG: [encode(v, prefixes, strict) for v in value]}
    if isinstance(value, list):
        return [encode(v, prefixes, strict) for v in value]
    if isinstance(value, (set, frozenset)):
        items = [encode(v, prefixes, strict) for v in value]
        return {SET_TAG: sorted(items, key=repr)}
    if isinstance(value, types.ModuleType):
        return {MODULE_TAG: value.__name__}
    if isinstance(value, (type, types.FunctionType, types.BuiltinFunctionType,
                          types.MethodType)):
        return {OBJECT_TAG: _object_path(value)}
    if strict:
        raise UnencodableValue(
            f'cannot encode {type(value).__module__}.'
            f'{type(value).__qualname__} value {value!r}')
    return {
        UNENCODABLE_TAG: f'{type(value).__module__}.{type(value).__qualname__}',
        'repr': normalise_str(repr(value), prefixes),
    }


def _kind(value):
    """Name the Python type an encoded value stands for."""
    if isinstance(value, dict) and len(value) >= 1:
        tag = next(iter(value))
        kinds = {
            TUPLE_TAG: 'tuple',
            DICT_TAG: 'dict with non-str keys',
            OBJECT_TAG: 'class/function',
            MODULE_TAG: 'module',
            FLOAT_TAG: 'float',
            SET_TAG: 'set',
            UNENCODABLE_TAG: 'unencodable object',
        }
        if tag in kinds:
            return kinds[tag]
    return type(value).__name__


def _describe(value):
    text = repr(value)
    if len(text) > 120:
        text = text[:117] + '...'
    return f'{text} ({_kind(value)})'


def _join(path, key):
    if isinstance(key, int):
        return f'{path}[{key}]'
    return f'{path}.{key}' if path else str(key)


def compare(expected, actual, path=''):
    """Compare two encoded values; return a list of difference strings.

    Dict key order is ignored here (see :func:`order_differences`), but
    scalar types are not: ``1``, ``1.0`` and ``True`` are all different.
    """
    diffs = []
    if isinstance(expected, dict) and isinstance(actual, dict):
        for key in expected:
            if key not in actual:
                diffs.append(f'{path or "<root>"}: missing key {key!r} '
                             f'(expected {_describe(expected[key])})')
            else:
                diffs.extend(
                    compare(expected[key], actual[key], _join(path, key)))
        for key in actual:
            if key not in expected:
                diffs.append(f'{path or "<root>"}: unexpected key {key!r} '
                             f'= {_describe(actual[key])}')
        return diffs
    if isinstance(expected, list) and isinstance(actual, list):
        if len(expected) != len(actual):
            diffs.append(f'{path or "<root>"}: list length {len(actual)}, '
                         f'expected {len(expected)}')
        for i, (e, a) in enumerate(zip(expected, actual)):
            diffs.extend(compare(e, a, _join(path, i)))
        return diffs
    if type(expected) is not type(actual) or expected != actual:
        diffs.append(f'{path or "<root>"}: got {_describe(actual)}, '
                     f'expected {_describe(expected)}')
    return diffs


def order_differences(expected, actual, path=''):
    """Report dicts whose keys are equal as sets but ordered differently."""
    diffs = []
    if isinstance(expected, dict) and isinstance(actual, dict):
        ek, ak = list(expected), list(actual)
        if set(ek) == set(ak) and ek != ak:
            diffs.append(f'{path or "<root>"}: key order {ak}, expected {ek}')
        for key in ek:
            if key in actual:
                diffs.extend(
                    order_differences(expected[key], actual[key],
                                      _join(path, key)))
    elif isinstance(expected, list) and isinstance(actual, list):
        for i, (e, a) in enumerate(zip(expected, actual)):
            diffs.extend(order_differences(e, a, _join(path, i)))
    return diffs
