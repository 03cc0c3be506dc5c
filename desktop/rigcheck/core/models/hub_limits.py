"""The bounds of a hub look-up (time, bytes, parallel requests) and the file names it asks for.

The bounds are read as ``limits.NAME`` where they are used, so a test that sets one here reaches every
request (setting it on ``hub`` would not).
"""

from __future__ import annotations

import re

#: seconds to wait for the hub on each request (the API call, the HEAD of config.json, each header)
TIMEOUT_S = 10.0
#: safetensors headers fetched at once for sharded repos
MAX_PARALLEL = 8
#: the most one look-up may take, all requests together: a server dripping a byte every few seconds
#: never trips the per-read TIMEOUT_S
DEADLINE_S = 60.0
#: the largest body accepted, announced or streamed, counted in DECODED bytes (a gzip reply is
#: inflated under the cap): the index is kilobytes to ~10 MB, the API's file list of a huge repository a
#: few MB, a safetensors header at most 25 MB (the library's SAFETENSORS_MAX_HEADER_LENGTH)
MAX_RESPONSE_BYTES = 32 * 1024 * 1024
#: all the replies of one look-up together (many shards or GGUF parts): the largest real repositories'
#: headers total ~15 MB (DeepSeek-V3's 163 shards), so this is four times that
MAX_LOOKUP_BYTES = 64 * 1024 * 1024
#: config.json itself: real ones are 1-100 kB (files.MAX_CONFIG_BYTES, the same cap as a local file)
MAX_CONFIG_BYTES = 4 * 1024 * 1024

CONFIG_FILE = "config.json"
#: the id forms load_hub_model takes, for messages and help texts
ID_FORMS = "org/name, org/name:TAG or org/name/file.gguf"
SAFETENSORS_FILE = "model.safetensors"
SAFETENSORS_INDEX = "model.safetensors.index.json"

# The hub's rule (huggingface_hub.utils.validate_repo_id) for each half of "org/name", in ASCII.
_ID_PART = re.compile(r"[A-Za-z0-9_](?:[A-Za-z0-9_.-]{0,94}[A-Za-z0-9_])?")
_MAX_LISTED = 8
#: the data size passed to the files package's tensor check: remote files are never measured
_NO_LIMIT = 1 << 62
