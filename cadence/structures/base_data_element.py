"""BaseDataElement: a container of metainfo and data fields, with tensor-like methods.

mmengine's data-sample interface. Fields are attributes; each belongs to one of two
groups: *metainfo* (image shape, file name: set with :meth:`set_metainfo`) or *data*
(annotations, predictions: set by plain assignment). Errors keep mmengine's types:
``AssertionError`` for a bad argument type, ``AttributeError`` for a field moved
between the groups or for the private field sets, ``KeyError`` from :meth:`pop`.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Iterator, MutableSet
from typing import Any, TypeVar

import numpy as np
import torch

_PRIVATE = ("_metainfo_fields", "_data_fields")
_INDENT = 4

Element = TypeVar("Element", bound="BaseDataElement")


class FieldSet(MutableSet[str]):
    """A set of field names that iterates in insertion order (``set`` order varies by run)."""

    def __init__(self, names: Iterable[str] = ()) -> None:
        self._names: dict[str, None] = dict.fromkeys(names)

    def __contains__(self, name: object) -> bool:
        return name in self._names

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)

    def add(self, name: str) -> None:
        self._names[name] = None

    def discard(self, name: str) -> None:
        self._names.pop(name, None)

    def __repr__(self) -> str:
        return f"{{{', '.join(map(repr, self._names))}}}" if self._names else "set()"


def _indent_tail(text: str) -> str:
    """Indent every line of ``text`` but the first (blank lines too)."""
    first, *rest = text.split("\n")
    return "\n".join([first, *(" " * _INDENT + line for line in rest)])


def _describe(value: Any) -> str:
    """mmengine's ``repr`` layout: nested elements and dicts indented by four spaces."""
    if isinstance(value, dict):
        return "".join(f"\n{key}: {_indent_tail(_describe(item))}" for key, item in value.items())
    if isinstance(value, BaseDataElement):
        meta = _indent_tail(_describe(value.metainfo))
        data = _indent_tail(_describe(dict(value.items())))
        body = f"\n\n    META INFORMATION{meta}\n\n    DATA FIELDS{data}"
        return f"<{type(value).__name__}({body}\n) at {hex(id(value))}>"
    return repr(value)


class BaseDataElement:
    """Metainfo and data fields with dict-like and tensor-like methods.

    ``BaseDataElement(metainfo=dict(img_shape=(4, 4)), bboxes=torch.rand(5, 4))``
    holds ``img_shape`` as metainfo and ``bboxes`` as data; both read as
    attributes (``elem.img_shape``), ``in`` finds either, :meth:`keys` lists
    data fields, :meth:`metainfo_keys` metainfo ones. A name stays in its group:
    assigning a metainfo name as data (or the reverse) raises ``AttributeError``.
    Tensor-like methods (:meth:`to`, :meth:`cpu`, :meth:`numpy`...) return a new
    element whose data tensors (and nested elements) are converted.

    Subclasses define typed fields with properties whose setter calls
    :meth:`set_field` on a private name (``'_gt_instances'``); :meth:`keys`
    then lists the public name only.
    """

    def __init__(self, *, metainfo: dict[str, Any] | None = None, **kwargs: Any) -> None:
        self._metainfo_fields: FieldSet = FieldSet()
        self._data_fields: FieldSet = FieldSet()
        if metainfo is not None:
            self.set_metainfo(metainfo=metainfo)
        if kwargs:
            self.set_data(kwargs)

    # ------------------------------------------------------------------ setting fields
    def set_metainfo(self, metainfo: dict[str, Any]) -> None:
        """Add or change metainfo fields from a (deep-copied) dict."""
        if not isinstance(metainfo, dict):
            raise AssertionError(f"metainfo should be a ``dict`` but got {type(metainfo)}")
        for name, value in copy.deepcopy(metainfo).items():
            self.set_field(value, name, field_type="metainfo")

    def set_data(self, data: dict[str, Any]) -> None:
        """Add or change data fields from a dict (through ``setattr``, so properties apply)."""
        if not isinstance(data, dict):
            raise AssertionError(f"data should be a `dict` but got {data}")
        for name, value in data.items():
            setattr(self, name, value)

    def update(self, instance: BaseDataElement) -> None:
        """Copy another element's metainfo and data fields into this one."""
        if not isinstance(instance, BaseDataElement):
            raise AssertionError(f"instance should be a `BaseDataElement` but got {type(instance)}")
        self.set_metainfo(dict(instance.metainfo_items()))
        self.set_data(dict(instance.items()))

    def set_field(
        self,
        value: Any,
        name: str,
        dtype: type | tuple[type, ...] | None = None,
        field_type: str = "data",
    ) -> None:
        """Store ``value`` as field ``name`` of ``field_type`` (``'data'`` or ``'metainfo'``).

        ``dtype``: the value must be an instance of it (``AssertionError`` otherwise);
        property setters of subclasses use it to type their fields.
        """
        if field_type not in ("metainfo", "data"):
            raise AssertionError(f"field_type must be 'metainfo' or 'data', got {field_type!r}")
        if dtype is not None and not isinstance(value, dtype):
            raise AssertionError(f"{value} should be a {dtype} but got {type(value)}")
        own, other = (
            (self._metainfo_fields, self._data_fields)
            if field_type == "metainfo"
            else (self._data_fields, self._metainfo_fields)
        )
        if name in other:
            kind = "metainfo" if field_type == "data" else "data"
            raise AttributeError(
                f"Cannot set {name} to be a field of {field_type} "
                f"because {name} is already a {kind} field"
            )
        added = name not in own
        own.add(name)
        try:
            object.__setattr__(self, name, value)
        except BaseException:
            if added:  # a property setter refused the value: the name was never set
                own.discard(name)
            raise

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _PRIVATE:
            if name in self.__dict__:
                raise AttributeError(
                    f"{name} has been used as a private attribute, which is immutable."
                )
            object.__setattr__(self, name, value)
            return
        self.set_field(self._check_data(name, value), name, field_type="data")

    def _check_data(self, name: str, value: Any) -> Any:
        """Validate (and possibly convert) a value assigned as data; subclasses override."""
        return value

    def __delattr__(self, name: str) -> None:
        if name in _PRIVATE:
            raise AttributeError(
                f"{name} has been used as a private attribute, which is immutable."
            )
        object.__delattr__(self, name)
        self._metainfo_fields.discard(name)
        self._data_fields.discard(name)

    __delitem__ = __delattr__

    # ------------------------------------------------------------------ dict-like reading
    def get(self, key: str, default: Any = None) -> Any:
        """The field ``key`` (metainfo, data or property), or ``default``."""
        return getattr(self, key, default)

    def pop(self, *args: Any) -> Any:
        """Remove field ``args[0]`` and return it; ``args[1]`` is the default if it is absent."""
        if len(args) >= 3:
            raise AssertionError("``pop`` get more than 2 arguments")
        name = args[0]
        for fields in (self._metainfo_fields, self._data_fields):
            if name in fields:
                fields.discard(name)
                return self.__dict__.pop(*args)
        if len(args) == 2:
            return args[1]
        raise KeyError(f"{name} is not contained in metainfo or data")

    def __contains__(self, name: str) -> bool:
        return name in self._data_fields or name in self._metainfo_fields

    def keys(self) -> list[str]:
        """Data field names (a property's private ``_name`` is listed as ``name``)."""
        cls = type(self)
        hidden = {
            f"_{key}" for key in self._data_fields if isinstance(getattr(cls, key, None), property)
        }
        return [key for key in self._data_fields if key not in hidden]

    def metainfo_keys(self) -> list[str]:
        """Metainfo field names."""
        return list(self._metainfo_fields)

    def values(self) -> list[Any]:
        """Data field values."""
        return [getattr(self, key) for key in self.keys()]

    def metainfo_values(self) -> list[Any]:
        """Metainfo field values."""
        return [getattr(self, key) for key in self.metainfo_keys()]

    def all_keys(self) -> list[str]:
        """Metainfo then data field names."""
        return self.metainfo_keys() + self.keys()

    def all_values(self) -> list[Any]:
        """Metainfo then data field values."""
        return self.metainfo_values() + self.values()

    def items(self) -> Iterator[tuple[str, Any]]:
        """``(name, value)`` of the data fields."""
        for key in self.keys():
            yield key, getattr(self, key)

    def metainfo_items(self) -> Iterator[tuple[str, Any]]:
        """``(name, value)`` of the metainfo fields."""
        for key in self.metainfo_keys():
            yield key, getattr(self, key)

    def all_items(self) -> Iterator[tuple[str, Any]]:
        """``(name, value)`` of metainfo then data fields."""
        for key in self.all_keys():
            yield key, getattr(self, key)

    @property
    def metainfo(self) -> dict[str, Any]:
        """The metainfo fields as a new dict."""
        return dict(self.metainfo_items())

    # ------------------------------------------------------------------ copies
    def new(self: Element, *, metainfo: dict[str, Any] | None = None, **kwargs: Any) -> Element:
        """An element of the same type with this one's fields, or with the ones given.

        ``metainfo`` replaces all metainfo when given, ``kwargs`` all data when
        non-empty. Metainfo is deep-copied; data values are shared.
        """
        element = type(self)()
        element.set_metainfo(dict(self.metainfo_items()) if metainfo is None else metainfo)
        element.set_data(kwargs if kwargs else dict(self.items()))
        return element

    def clone(self: Element) -> Element:
        """A new element with the same fields (metainfo deep-copied, data values shared)."""
        return self.new()

    # ------------------------------------------------------------------ tensor-like methods
    def _map_data(self: Element, convert: Callable[[Any], Any], kinds: tuple[type, ...]) -> Element:
        element = self.new()
        for key, value in self.items():
            if isinstance(value, kinds):
                element.set_data({key: convert(value)})
        return element

    def to(self: Element, *args: Any, **kwargs: Any) -> Element:
        """A new element whose data values that have ``to`` are ``value.to(*args, **kwargs)``."""
        element = self.new()
        for key, value in self.items():
            if hasattr(value, "to"):
                element.set_data({key: value.to(*args, **kwargs)})
        return element

    def cpu(self: Element) -> Element:
        """A new element with data tensors (and nested elements) on the CPU."""
        return self._map_data(lambda v: v.cpu(), (torch.Tensor, BaseDataElement))

    def cuda(self: Element) -> Element:
        """A new element with data tensors (and nested elements) on the current CUDA device."""
        return self._map_data(lambda v: v.cuda(), (torch.Tensor, BaseDataElement))

    def npu(self: Element) -> Element:
        """A new element with data tensors on the NPU (needs ``torch_npu``)."""
        return self._map_data(lambda v: v.npu(), (torch.Tensor, BaseDataElement))

    def mlu(self: Element) -> Element:
        """A new element with data tensors on the MLU (needs ``torch_mlu``)."""
        return self._map_data(lambda v: v.mlu(), (torch.Tensor, BaseDataElement))

    def musa(self: Element) -> Element:
        """A new element with data tensors on the MUSA device (needs ``torch_musa``)."""
        return self._map_data(lambda v: v.musa(), (torch.Tensor, BaseDataElement))

    def detach(self: Element) -> Element:
        """A new element with data tensors detached from the graph."""
        return self._map_data(lambda v: v.detach(), (torch.Tensor, BaseDataElement))

    def numpy(self: Element) -> Element:
        """A new element with data tensors as numpy arrays (detached, on the CPU)."""
        return self._map_data(lambda v: v.detach().cpu().numpy(), (torch.Tensor, BaseDataElement))

    def to_tensor(self: Element) -> Element:
        """A new element with numpy data arrays as tensors (``torch.from_numpy``: memory shared)."""
        return self._map_data(
            lambda v: torch.from_numpy(v) if isinstance(v, np.ndarray) else v.to_tensor(),
            (np.ndarray, BaseDataElement),
        )

    def to_dict(self) -> dict[str, Any]:
        """All fields as a dict; nested elements become dicts too."""
        return {
            key: value.to_dict() if isinstance(value, BaseDataElement) else value
            for key, value in self.all_items()
        }

    def __repr__(self) -> str:
        return _describe(self)
