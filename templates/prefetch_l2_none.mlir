    // No L2 prefetch on this target (gfx9 loads attn before the main loop
    // instead, kernel_plan.cpp plan_attn_load): nothing is issued.
    func.func private @prefetch_l2(%addr: i64) {
      return
    }
