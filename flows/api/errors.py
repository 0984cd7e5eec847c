"""``equilens.errors``: the typed errors the API raises (re-exported from :mod:`equilens.tasks.errors`)."""

from equilens.tasks.errors import (  # re-exports
    ConfigError,
    EquilensError,
    InputDataError,
    ModelLoadError,
    ProviderError,
    RegistryError,
    StorageError,
    ValidationFailed,
)

__all__ = ["ConfigError", "EquilensError", "InputDataError", "ModelLoadError", "ProviderError", "RegistryError",
           "StorageError", "ValidationFailed"]
