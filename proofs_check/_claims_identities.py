r"""Registry entries ``ID.<identity>`` for the identities proven by ``softpolar derive --check``."""
from __future__ import annotations


def identity_claims() -> list:
    """One claim per identity in :data:`theorems.IDENTITIES` (empty until that registry exists)."""
    return []
