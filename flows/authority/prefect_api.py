"""Which Prefect API this process talks to: one answer for `serve`, `notify setup` and waking runs.

Why read the profile file here instead of ``prefect.settings.get_current_settings()``:
Prefect builds its settings once per process, so after anything imported Prefect
with ``PREFECT_API_URL`` in the environment, the cached settings keep that URL
even when the variable is gone. Asking the environment first and then the active
profile (``prefect config set PREFECT_API_URL=…`` writes it there), each time, is
what an operator expects from "whichever way it is configured".
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

__all__ = ["prefect_api_url"]


def _profiles_path() -> Path:
    explicit = os.environ.get("PREFECT_PROFILES_PATH", "").strip()
    if explicit:
        return Path(explicit).expanduser()
    return Path(os.environ.get("PREFECT_HOME", "").strip() or "~/.prefect").expanduser() / "profiles.toml"


def prefect_api_url() -> str | None:
    """The environment's ``PREFECT_API_URL``, else the active Prefect profile's; ``None`` when neither sets it.

    The active profile is ``PREFECT_PROFILE`` or the file's ``active`` key, as
    Prefect chooses it; the file is parsed here (TOML), so nothing cached
    from an earlier configuration can answer.
    """
    url = os.environ.get("PREFECT_API_URL", "").strip()
    if url:
        return url
    try:
        doc = tomllib.loads(_profiles_path().read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None
    active = os.environ.get("PREFECT_PROFILE", "").strip() or str(doc.get("active") or "ephemeral")
    profile = (doc.get("profiles") or {}).get(active) or {}
    return str(profile.get("PREFECT_API_URL") or "").strip() or None
