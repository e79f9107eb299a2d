"""A small MLA-like attention block that owns its output-gate projection, with
the seam of vLLM PR #50664: an optional ``output_gate(hidden_states,
gate_proj, attn_output)`` callback whose default is the block's own
expression ``attn_output * sigmoid(gate_proj(hidden_states))``.

The shape follows the Kimi-K3 MLA output gate at a reduced head count:
hidden 7168, 12 heads of 128 (N = 1536), a 512-wide compressed KV latent.
``forward`` returns the block's output and, for the tests, the two tensors at
the seam (the attention output going in and the gated values coming out).
"""

from __future__ import annotations

from typing import Callable, Optional

import torch
import torch.nn.functional as F
from torch import Tensor, nn


class TinyMLAAttention(nn.Module):
    def __init__(self, hidden_size: int = 7168, num_heads: int = 12, head_dim: int = 128, kv_lora_rank: int = 512,
                 output_gate: Optional[Callable[[Tensor, nn.Module, Tensor], Tensor]] = None):
        super().__init__()
        self.num_heads, self.head_dim = num_heads, head_dim
        width = num_heads * head_dim
        self.q_proj = nn.Linear(hidden_size, width, bias=False)
        self.kv_a_proj = nn.Linear(hidden_size, kv_lora_rank, bias=False)
        self.kv_a_norm = nn.RMSNorm(kv_lora_rank)
        self.kv_b_proj = nn.Linear(kv_lora_rank, 2 * width, bias=False)
        self.gate_proj = nn.Linear(hidden_size, width, bias=False)
        self.o_proj = nn.Linear(width, hidden_size, bias=False)
        self.output_gate = output_gate

    def forward(self, hidden_states: Tensor):
        tokens = hidden_states.shape[0]
        q = self.q_proj(hidden_states).view(tokens, self.num_heads, self.head_dim).transpose(0, 1)
        latent = self.kv_a_norm(self.kv_a_proj(hidden_states))
        kv = self.kv_b_proj(latent).view(tokens, self.num_heads, 2 * self.head_dim)
        k, v = kv.split(self.head_dim, dim=-1)
        attn = F.scaled_dot_product_attention(q, k.transpose(0, 1), v.transpose(0, 1), is_causal=True)
        attn_output = attn.transpose(0, 1).reshape(tokens, self.num_heads * self.head_dim)
        if self.output_gate is not None:
            gated = self.output_gate(hidden_states, self.gate_proj, attn_output)
        else:
            gated = attn_output * torch.sigmoid(self.gate_proj(hidden_states))
        return self.o_proj(gated), attn_output, gated
