"""Generic helpers (mmengine.utils' public names) and small helpers shared by cadence packages.

Everything here imports only the standard library (rich is imported when a
progress bar starts), so every cadence package may import it.
"""

from .decorators import (
    ConflictingArgumentsError,
    check_prerequisites,
    deprecated_api_warning,
    deprecated_function,
    requires_executable,
    requires_package,
)
from .imports import get_object_from_string, import_modules_from_strings, import_object
from .manager import ManagerError, ManagerMeta, ManagerMixin
from .misc import (
    apply_to,
    concat_list,
    has_method,
    is_list_of,
    is_method_overridden,
    is_seq_of,
    is_str,
    is_tuple_of,
    iter_cast,
    list_cast,
    slice_list,
    to_1tuple,
    to_2tuple,
    to_3tuple,
    to_4tuple,
    to_ntuple,
    tuple_cast,
)
from .package_utils import call_command, get_installed_path, install_package, is_installed
from .path import check_file_exist, fopen, is_abs, is_filepath, mkdir_or_exist, scandir, symlink
from .progressbar import (
    ProgressBar,
    track_iter_progress,
    track_parallel_progress,
    track_progress,
    track_progress_rich,
)
from .suggest import closest_names, did_you_mean
from .timer import Timer, TimerError, check_time
from .version_utils import digit_version, get_git_hash

__all__ = [
    "ConflictingArgumentsError", "ManagerError", "ManagerMeta", "ManagerMixin", "ProgressBar",
    "Timer", "TimerError", "apply_to", "call_command", "check_file_exist", "check_prerequisites",
    "check_time", "closest_names", "concat_list", "deprecated_api_warning", "deprecated_function",
    "did_you_mean", "digit_version", "fopen", "get_git_hash", "get_installed_path",
    "get_object_from_string", "has_method", "import_modules_from_strings", "import_object",
    "install_package", "is_abs", "is_filepath", "is_installed", "is_list_of",
    "is_method_overridden", "is_seq_of", "is_str", "is_tuple_of", "iter_cast", "list_cast",
    "mkdir_or_exist", "requires_executable", "requires_package", "scandir", "slice_list",
    "symlink", "to_1tuple", "to_2tuple", "to_3tuple", "to_4tuple", "to_ntuple",
    "track_iter_progress", "track_parallel_progress", "track_progress", "track_progress_rich",
    "tuple_cast",
]  # fmt: skip
