// kind: fragment
      // (copy_sources_tensor_map: %w_src and %h_src are the kernel's tensor
      // map arguments, COPY_ARGS.)
