// kind: snippet
    // One wave per column group (KSPLIT = 1): the wave's sum is the dot product.
    func.func private @combine_partials(%dot: f32, %slot: index, %wave_id: index, %group: index, %lane: index) -> f32 {
      return %dot : f32
    }
