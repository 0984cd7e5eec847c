"""``equilens.errors``: the typed errors the API raises (re-exported from :mod:`tasks.errors`)."""

from tasks.errors import (  # noqa: F401 - re-exports
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
