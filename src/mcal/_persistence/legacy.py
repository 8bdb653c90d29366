"""The refusal of model files that an earlier mcal wrote with the same schema version but a model this mcal computes
otherwise."""

from __future__ import annotations

from typing import Any


def refuse_legacy_state(data: Any, *, has: str, lacks: str, message: str) -> None:
    """Raise ``ValueError(message)`` if the model data's ``state`` holds ``has`` but not ``lacks``: the state an
    earlier mcal wrote before ``lacks`` existed.

    Raises
    ------
    ValueError
        With ``message``, for such model data; other data (a malformed file included) passes, for the file checks.
    """
    state = data.get("state") if isinstance(data, dict) else None
    if isinstance(state, dict) and has in state and lacks not in state:
        raise ValueError(message)
