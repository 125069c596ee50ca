"""Model complexity: FLOPs and activations by module and operator (from a jit trace of one
forward call), parameter counts, and their tables.

mmengine's ``mmengine.analysis`` is this package. Nothing here is imported by the
runner; torch's jit tracer is loaded on the first analysis.
"""

from .complexity import (
    ActivationAnalyzer,
    FlopAnalyzer,
    activation_count,
    flop_count,
    parameter_count,
    parameter_count_table,
)
from .complexity_info import get_model_complexity_info
from .jit_analysis import JitModelAnalysis
from .printing import complexity_stats_str, complexity_stats_table

__all__ = [
    "ActivationAnalyzer", "FlopAnalyzer", "JitModelAnalysis", "activation_count",
    "complexity_stats_str", "complexity_stats_table", "flop_count",
    "get_model_complexity_info", "parameter_count", "parameter_count_table",
]  # fmt: skip
