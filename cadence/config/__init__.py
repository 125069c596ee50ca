"""Config files in the OpenMMLab style: ``_base_`` inheritance, overrides, dumping."""

from .config import Config, import_custom
from .config_dict import ConfigDict
from .dict_action import DictAction, parse_options, parse_value
from .errors import (
    ConfigAssertionError,
    ConfigError,
    ConfigFileNotFoundError,
    ConfigImportError,
    ConfigKeyError,
    ConfigSyntaxError,
    ConfigTypeError,
)
from .lazy import LazyObject, read_base
from .provenance import Origin

__all__ = [
    "ConfigAssertionError",
    "Config", "ConfigDict", "ConfigError", "ConfigFileNotFoundError", "ConfigImportError",
    "ConfigKeyError", "ConfigSyntaxError", "ConfigTypeError", "DictAction", "LazyObject",
    "Origin", "import_custom", "parse_options", "parse_value", "read_base",
]  # fmt: skip
