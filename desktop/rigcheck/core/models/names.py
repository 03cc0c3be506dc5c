"""The names people type for a catalog model, and the near misses worth suggesting.

A model is known by its catalog id (``llama-3.3-70b``), its Ollama library names (``llama3.3:70b``), its
Hugging Face id (``meta-llama/Llama-3.3-70B-Instruct``, what LM Studio and vLLM show) and the spellings in
between (``Llama 3.3 70B``, ``llama3.3-70b``). All of these resolve offline; a name that is none of them gets
the closest catalog ids as a did-you-mean.
"""

from __future__ import annotations

import difflib
import re
from collections import defaultdict

from rigcheck.core.catalog import Catalog, ModelSpec

#: Ollama tags that name a weight format after the size (``qwen3:8b-q4_K_M``, ``llama3.1:8b-instruct-fp16``):
#: the model is the same, the format is --quant's business
_OLLAMA_FORMAT = re.compile(
    r"-(instruct-|chat-|it-|text-)?(q\d[\w]*|iq\d[\w]*|fp16|bf16|f16|fp8|mxfp4|int4|int8)$", re.IGNORECASE
)
#: words a spelling may add or drop without naming another model
_FILLER = ("instruct", "chat", "it", "hf")


def _key(text: str) -> str:
    """A spelling's letters, digits and dots, lower case: ``Llama 3.3 70B`` -> ``llama3.370b``."""
    return re.sub(r"[^a-z0-9.]+", "", text.lower())


def _keys(text: str) -> set[str]:
    """The key of a spelling, with and without a trailing filler word (``-Instruct``, ``-it``)."""
    words = [w for w in re.split(r"[^a-z0-9.]+", text.lower()) if w]
    out = {_key(text)}
    while words and words[-1] in _FILLER:
        words.pop()
        out.add("".join(words))
    return {k for k in out if k}


def _spellings(spec: ModelSpec) -> set[str]:
    hf_tail = spec.hf_id.split("/", 1)[-1]
    keys = _keys(spec.id) | _keys(spec.name) | _keys(hf_tail)
    for name in spec.ollama:
        keys |= _keys(name)
    return keys


def _index(catalog: Catalog) -> dict[str, set[str]]:
    """spelling key -> the ids of the models spelled so (more than one: the key is ambiguous)."""
    index: dict[str, set[str]] = defaultdict(set)
    for spec in catalog.models:
        for key in _spellings(spec):
            index[key].add(spec.id)
    return index


def find_model(text: str, catalog: Catalog) -> ModelSpec | None:
    """The catalog model ``text`` names, by id, Ollama name, Hugging Face id or an unambiguous spelling."""
    text = text.strip()
    lowered = text.lower()
    spec = catalog.model(lowered)
    if spec is not None:
        return spec
    ollama = _OLLAMA_FORMAT.sub("", lowered) if ":" in lowered else lowered
    if ollama.endswith(":latest"):
        ollama = ollama[: -len(":latest")]
    for candidate in catalog.models:
        if ollama in (n.lower() for n in candidate.ollama) or lowered == candidate.hf_id.lower():
            return candidate
    if "/" in text:  # another repository's id is another model (a fine-tune, a quantization): the hub's
        return None
    ids = _index(catalog).get(_key(ollama))
    if ids and len(ids) == 1:
        return catalog.model(next(iter(ids)))
    return None


def suggest_models(text: str, catalog: Catalog, limit: int = 5) -> list[str]:
    """Catalog ids close to ``text``: those every typed word appears in, else the nearest spellings."""
    words = [w for w in re.split(r"[\s:/_-]+", text.lower()) if w]
    found = [m.id for m in catalog.search_models(" ".join(words))] if words else []
    if found:
        return found[:limit]
    index = _index(catalog)
    tail = text.split("/", 1)[-1]
    close = difflib.get_close_matches(_key(tail), list(index), n=limit * 3, cutoff=0.72)
    out: list[str] = []
    for key in close:
        for model_id in sorted(index[key]):
            if model_id not in out:
                out.append(model_id)
    return out[:limit]


def catalog_for_repository(text: str, catalog: Catalog) -> ModelSpec | None:
    """The catalog model a GGUF or MLX repository holds (``unsloth/Qwen3-8B-GGUF:Q4_K_M``,
    ``mlx-community/Qwen3-8B-4bit``): what to point at when the hub cannot be asked about it."""
    repo = "/".join(text.strip().split(":", 1)[0].split("/")[:2]).lower()
    for spec in catalog.models:
        if repo in (r.lower() for r in (*spec.gguf_repos, *spec.mlx_repos)):
            return spec
    return None
