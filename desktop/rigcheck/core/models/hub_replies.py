"""What the hub's files say: a JSON object, the cached snapshot's commit, config.json, headers summarised."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rigcheck.core.catalog import Catalog
from rigcheck.core.errors import InputError
from rigcheck.core.models.files import _read_json_object as _read_local_json
from rigcheck.core.models.files import summarise_safetensors
from rigcheck.core.models.hub_limits import CONFIG_FILE
from rigcheck.core.models.spec import ArchConfig, WeightsInfo

if TYPE_CHECKING:
    from huggingface_hub.utils._safetensors import SafetensorsFileMetadata


def _read_json_object(path: Path, name: str, source: str) -> dict[str, Any]:
    from rigcheck.core.models import files

    try:
        return _read_local_json(path, files.MAX_CONFIG_BYTES if name == CONFIG_FILE else files.MAX_JSON_BYTES)
    except InputError as error:  # it names the cache path; the user asked for hf:org/name
        raise InputError(source, f"{name}: {error.problem}") from error


def _snapshot_commit(path: Path) -> str | None:
    """The commit of a cached file: the cache stores it under ``snapshots/<commit>/``."""
    parts = path.parts
    if len(parts) >= 3 and parts[-3] == "snapshots":
        return parts[-2]
    return None


def _parse_config(config: Mapping[str, Any], source: str) -> ArchConfig:
    from rigcheck.core.models.config import parse_config

    try:
        return parse_config(config, source)
    except InputError as error:
        if error.problem.startswith(CONFIG_FILE):
            raise
        raise InputError(source, f"{CONFIG_FILE}: {error.problem}") from error


def _summarise(
    headers: Mapping[str, SafetensorsFileMetadata],
    shards: list[str],
    *,
    config: Mapping[str, Any],
    arch: ArchConfig,
    catalog: Catalog,
    source: str,
) -> tuple[WeightsInfo, list[str], ArchConfig]:
    """The hub's parsed headers back in the header's own JSON shape, summarised as a local folder is."""
    as_json = {
        shard: {
            name: {"dtype": t.dtype, "shape": list(t.shape), "data_offsets": list(t.data_offsets)}
            for name, t in headers[shard].tensors.items()
        }
        for shard in shards
    }
    try:
        return summarise_safetensors(as_json, config, arch, catalog, source=source)
    except InputError as error:
        if error.source == source:
            raise
        raise InputError(
            source, f"malformed safetensors header in {error.source}: {error.problem}"
        ) from error
