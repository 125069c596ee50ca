"""Config files in the OpenMMLab style: ``_base_`` inheritance, overrides, dumping.

Names are imported on first use (:mod:`cadence.utils.lazy`): a module that needs one
submodule (the registry reads :mod:`.config_dict`'s origin attributes) does not import
the loader and the dumper with it.
"""

from __future__ import annotations

from ..utils.lazy import lazy_exports

#: name -> the module that defines it, imported when the name is first read.
LAZY_EXPORTS: dict[str, str] = {
    "Config": ".config",
    "ConfigAssertionError": ".errors",
    "ConfigDict": ".config_dict",
    "ConfigError": ".errors",
    "ConfigFileNotFoundError": ".errors",
    "ConfigImportError": ".errors",
    "ConfigKeyError": ".errors",
    "ConfigSyntaxError": ".errors",
    "ConfigTypeError": ".errors",
    "DictAction": ".dict_action",
    "LazyObject": ".lazy",
    "Origin": ".provenance",
    "import_custom": ".config",
    "parse_options": ".dict_action",
    "parse_value": ".dict_action",
    "read_base": ".lazy",
}

__all__ = sorted(LAZY_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, LAZY_EXPORTS)
