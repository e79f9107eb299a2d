// kind: snippet
    // No L2 prefetch on this target: nothing is issued (no gfx9 plan asks
    // for ATTN_PREFETCH; kernel_plan.cpp plan_attn_load).
    func.func private @prefetch_l2(%addr: i64) {
      return
    }
