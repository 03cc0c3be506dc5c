"""What transformers' pure-torch chunked gated delta rule costs, counted op by op.

Without flash-linear-attention (fla) transformers' Gated DeltaNet layers (Qwen3-Next, Qwen3.5) run
``torch_chunk_gated_delta_rule`` (huggingface/transformers src/transformers/models/qwen3_next/
modeling_qwen3_next.py@01cdc60; ``self.chunk_gated_delta_rule = chunk_gated_delta_rule or
torch_chunk_gated_delta_rule``, with a warning "The fast path is not available"). It runs in fp32, one eager
PyTorch op at a time, so each op reads its inputs from and writes its output to GPU memory, and its
matmuls run on the CUDA cores (fp32, no tensor cores unless TF32 is allowed). This module counts, per token
and per value head (q and k are repeated to the value heads before the call), with C = 64 (its
chunk_size), d_k and d_v the head widths and fp32 elements of 4 B:

Forward traffic, per chunk of C tokens (one sample, one head):

- the within-chunk C × C matrices: decay mask (difference, tril, exp, tril: 7 accesses), the k·kᵀ
  product, its decay and negation and mask (8), ``+ eye`` (3), the two ``attn @`` matmuls reading attn (2),
  and in the chunk loop q·kᵀ, its decay and mask (6) and ``attn @ v_new`` (1): 27 accesses;
- the row loop (``for i in range(1, chunk_size)``: clone of ``attn[..., :i, :i]``, its product with the row,
  the sum): 5 accesses of i² elements for each i < C;
- C × d_k tensors: the k·kᵀ matmul's inputs (2), ``k_beta * g.exp()`` and its matmul (2 + 2), q·kᵀ's inputs
  (2), k_cumdecay's read (1), ``q * g.exp()`` and its matmul (2 + 1), ``k * decay`` and kᵀ·v_new (2 + 1): 15;
- C × d_v tensors: ``attn @ v_beta`` (2), ``zeros_like`` (1), v_prime and ``v - v_prime`` (1 + 3), the state
  read's output (1), ``attn @ v_new`` (2), the sum (3) and the slice write (2), kᵀ·v_new's read (1): 16;
- d_k × d_v state, read or written in the chunk loop: its two reads by matmuls (2), the decay (2), the
  update matmul's output (1) and the sum (3): 8.

Per token outside the chunks: the L2 norms of q and k (bf16: 4 accesses of 2 B each), the transposes to
contiguous fp32 (10 B an element), the padding copy and the q scale, ``value * beta``, ``key * beta``
(8 B each) and the output's transpose back to bf16 (14 B): 76·d_k + 40·d_v bytes.

FLOPs (fp32 matmuls, 2 per multiply-add): k·kᵀ, attn·v_beta, attn·(k_beta·eᵍ), q·kᵀ and attn·v_new
(2·C²·d each, per chunk) and the three state products (2·C·d_k·d_v each), plus the row loop's 2·Σi².

Saved for the backward (autograd keeps each op's inputs while the output may be differentiated): the row
loop's every ``row`` and ``sub`` (Σ(i² + i) fp32 per chunk, the largest share), six C × C matrices (decay
mask, its exp, the k·kᵀ product, attn, the q·kᵀ product and the masked q·kᵀ), six C × d_k tensors
(k_beta, key, ``k_beta * g.exp()``, query, ``q * g.exp()``, ``k * decay``), three C × d_v (value, v_beta,
v_new), one d_k × d_v state per chunk, and the bf16 L2 norms' inputs of q and k.

The count is of that row-loop version. Later transformers (models/qwen3_5/modeling_qwen3_5.py@009e78d)
solve the chunk's triangular system with ``torch.linalg.solve_triangular`` instead, which drops the row
loop's share (37% of the traffic and 42% of the saved bytes counted here at d = 128). Which version a run
had is not recorded by the runs counted here, so the rule stays the row loop's.

The counts are of the delta rule alone: the torch fallbacks of the gated RMSNorm and the depthwise conv1d
(without causal-conv1d) are left out, so these are the least the fallback adds. The backward, autograd's
reverse of each op (a matmul's two matmuls, an elementwise op's reads of its saved inputs and the output
gradient and writes of the input gradients), is taken as twice the forward's traffic and FLOPs.
"""

from __future__ import annotations

from rigcheck.core.models.spec import LinearMixer

SOURCE = (
    "huggingface/transformers src/transformers/models/qwen3_next/modeling_qwen3_next.py@01cdc60 "
    "torch_chunk_gated_delta_rule (counted op by op)"
)
#: the fallback's chunk_size
CHUNK = 64
FP32 = 4
BF16 = 2
#: accesses per chunk of the C × C, C × d_k, C × d_v and d_k × d_v tensors (module docstring)
SQUARE_ACCESSES = 27
KEY_ACCESSES = 15
VALUE_ACCESSES = 16
STATE_ACCESSES = 8
#: the row loop's accesses per element of ``attn[..., :i, :i]``: clone (2), product (2), sum (1)
ROW_LOOP_ACCESSES = 5
#: bytes per token per key and per value width outside the chunks (module docstring)
TOKEN_KEY_BYTES = 76
TOKEN_VALUE_BYTES = 40
#: the backward's traffic and FLOPs over the forward's
BACKWARD_OVER_FORWARD = 2


def _row_loop_elements(chunk: int = CHUNK) -> int:
    """Σ i² over the row loop's i = 1 … C-1: the elements of every ``attn[..., :i, :i]`` it reads."""
    return sum(i * i for i in range(1, chunk))


def forward_bytes(mixer: LinearMixer) -> float:
    """Bytes one forward pass moves per token per value head."""
    c, dk, dv = CHUNK, mixer.key_head_dim, mixer.value_head_dim
    per_chunk = FP32 * (
        SQUARE_ACCESSES * c * c
        + KEY_ACCESSES * c * dk
        + VALUE_ACCESSES * c * dv
        + STATE_ACCESSES * dk * dv
        + ROW_LOOP_ACCESSES * _row_loop_elements(c)
    )
    return per_chunk / c + TOKEN_KEY_BYTES * dk + TOKEN_VALUE_BYTES * dv


def forward_flops(mixer: LinearMixer) -> float:
    """fp32 FLOPs of one forward pass per token per value head."""
    c, dk, dv = CHUNK, mixer.key_head_dim, mixer.value_head_dim
    per_chunk = 2 * c * c * (3 * dk + 2 * dv) + 3 * 2 * c * dk * dv + 2 * _row_loop_elements(c)
    return per_chunk / c


def saved_bytes(mixer: LinearMixer) -> float:
    """Bytes autograd keeps per token per value head for the fallback's backward."""
    c, dk, dv = CHUNK, mixer.key_head_dim, mixer.value_head_dim
    row_loop = sum(i * i + i for i in range(1, c))
    per_chunk = FP32 * (row_loop + 6 * c * c + 6 * c * dk + 3 * c * dv + dk * dv)
    return per_chunk / c + 2 * BF16 * dk


def kernel_saved_bytes(mixer: LinearMixer) -> int:
    """What fla's kernel saves per token per value head instead (training_mixers.gdn_token_bytes' share of
    the kernel: q and k repeated to the value heads, v's contiguous copy, A, q_rstd, k_rstd, g and beta)."""
    return BF16 * (2 * mixer.key_head_dim + mixer.value_head_dim) + CHUNK * BF16 + 3 * FP32 + BF16
