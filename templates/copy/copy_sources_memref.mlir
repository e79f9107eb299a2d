      // (copy_sources_memref: every thread copies chunks of the memrefs.)
      %w_src = memref.cast %weight : memref<${W_SIZE}x${T}, #gpu.address_space<global>> to memref<?x${T}, #gpu.address_space<global>>
      %h_src = memref.cast %hidden : memref<${H_SIZE}x${T}, #gpu.address_space<global>> to memref<?x${T}, #gpu.address_space<global>>
