"""The doors for OpenMMLab code: ``mmengine`` and ``mmengine.X.Y`` resolve to cadence's modules.

Three ways in, one mechanism (:mod:`cadence.compat.alias`):

* ``python -m cadence.compat.mmengine SCRIPT [ARGS]`` runs an unmodified script;
* ``import cadence.compat.mmengine`` at the top of a script installs the alias;
* ``cadence train|val|test CONFIG`` installs it when the config's ``default_scope`` or
  ``custom_imports`` name a downstream package.

Nothing here has behaviour of its own beyond the mapping (see docs/openmmlab.md).
"""

from __future__ import annotations

from .alias import AliasConflict, MissingMMEngineModule, install, is_installed

__all__ = ["AliasConflict", "MissingMMEngineModule", "install", "is_installed"]
