// kind: fragment
// param W_SIZE: elements of the weight memref
// param T: the contract's element type: hidden, attn and the gated value (bf16 | f16 | f32)
// param H_SIZE: elements of the hidden memref
      // (copy_sources_memref: every thread copies chunks of the memrefs.)
      %w_src = memref.cast %weight : memref<${W_SIZE}x${T}, #gpu.address_space<global>> to memref<?x${T}, #gpu.address_space<global>>
      %h_src = memref.cast %hidden : memref<${H_SIZE}x${T}, #gpu.address_space<global>> to memref<?x${T}, #gpu.address_space<global>>
