"""ExLlamaV3 as an engine: EXL3 models on NVIDIA GPUs (CUDA; its kernels are CUDA extensions).

What is ExLlamaV3's own (turboderp-org/exllamav3, ``EXL3_SOURCE``):

- formats: EXL3 at a target bits per weight over the linear layers (catalog/quant.toml exl3-*), made with
  ``convert.py -i IN -o OUT -w WORK -b BPW``;
- the KV cache: ``CacheLayer_fp16`` by default, k and v in torch.half, paged by ``PAGE_SIZE`` = 256 tokens,
  so the cache size (``-cs``) is a multiple of 256 (``exllamav3/cache/fp16.py``, ``exllamav3/constants.py``);
- memory: ``Model.load`` reserves 0.5 GiB on each device (``reserve_per_device`` default, ``model/model.py``)
  and fills the GPUs in order with whole modules, sized for forward passes of ``max_chunk_size`` = 2,048
  tokens; there is no CPU offload of layers ("Insufficient VRAM in split for model and cache",
  ``model/model_ls.py``).

Speed: no cited ExLlamaV3 rows are fitted, so llama.cpp's CUDA factors for the GPU's class stand in, and the
explanation says so.
"""

from __future__ import annotations

from rigcheck.core.errors import InputError
from rigcheck.core.machine import Machine
from rigcheck.core.models.spec import ArchConfig
from rigcheck.core.said import Num, Said, say

EXL3_SOURCE = (
    "turboderp-org/exllamav3 exllamav3/model/model.py@41544ae (load_gen), exllamav3/cache/fp16.py@350713a"
)
#: Model.load_gen's default max_chunk_size: the longest forward pass the split is sized for
CHUNK = 2048
#: Model.load_gen's default reserve_per_device, GiB per GPU
RESERVE_BYTES = int(0.5 * 1024**3)
#: the cache is allocated in pages of this many tokens (exllamav3/constants.py PAGE_SIZE)
PAGE_SIZE = 256
#: EXL3 formats, best quality first
EXL3_FORMATS = ("exl3-6.0bpw", "exl3-5.0bpw", "exl3-4.0bpw", "exl3-3.0bpw")


def check_exllamav3(machine: Machine) -> None:
    """ExLlamaV3 runs on NVIDIA GPUs (CUDA): anything else is refused in one line naming why."""
    if machine.gpus and all(g.vendor == "nvidia" for g in machine.gpus):
        return
    found = ", ".join(g.name for g in machine.gpus) or say("no GPU")
    raise InputError(
        "--engine exllamav3",
        say("ExLlamaV3 runs only on NVIDIA GPUs (CUDA); this machine has {gpus}", gpus=found),
    )


def cache_tokens(context: int, batch: int = 1) -> int:
    """The cache size ExLlamaV3 takes for ``batch`` sequences of ``context`` tokens: whole pages of 256."""
    tokens = context * batch
    return -(-tokens // PAGE_SIZE) * PAGE_SIZE


def chunk_activation_bytes(arch: ArchConfig) -> tuple[int, Said]:
    """One 2,048-token forward pass's largest live activations (the MLP's gate, up and product in 16 bits)."""
    width = arch.intermediate_size or 4 * arch.hidden_size
    formula = say(
        "forward chunk {step} tokens × {width} MLP width × 3 tensors (gate, up, product) × 2 B",
        step=Num(CHUNK),
        width=Num(width),
    )
    return CHUNK * width * 3 * 2, formula
