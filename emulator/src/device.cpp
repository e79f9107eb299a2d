// The emulated device: memory, loaded modules, and launch setup as the HSA
// runtime and the HIP runtime do it (kernarg layout from the metadata,
// hidden arguments, the dispatch packet, the initial SGPRs and VGPRs).
#include <algorithm>
#include <cstdlib>
#include <list>
#include <mutex>

#include "gatejit/target_info.h"
#include "launch.h"
#include "op_table.h"

namespace gatejit::emulator {

struct Module {
  CodeObject co;
  Program program;
  uint8_t *image = nullptr;
};

struct Device::Impl {
  Target target;
  GlobalMemory memory;
  std::list<Module> modules;
  std::vector<std::pair<void *, size_t>> allocations;
  std::mutex mu;  // one launch at a time; allocations from any thread
};

namespace {

void *zeroed_pages(size_t bytes) {
  void *p = std::aligned_alloc(4096, (std::max<size_t>(bytes, 1) + 4095) / 4096 * 4096);
  if (p) std::memset(p, 0, (std::max<size_t>(bytes, 1) + 4095) / 4096 * 4096);
  return p;
}

// Kernel arguments the HIP runtime fills behind the explicit ones (code
// object v5, AMDGPUUsage "Code Object V5 Metadata", hidden_* value kinds).
void fill_hidden(const KernelInfo::Arg &a, uint8_t *slot, const LaunchGrid &g) {
  auto put = [&](uint64_t v) { std::memcpy(slot, &v, std::min<size_t>(a.size, 8)); };
  const std::string &k = a.kind;
  for (int d = 0; d < 3; ++d) {
    const char axis = char('x' + d);
    if (k == std::string("hidden_block_count_") + axis) return put(g.workgroups[size_t(d)]);
    if (k == std::string("hidden_group_size_") + axis) return put(g.workgroup_size[size_t(d)]);
    if (k == std::string("hidden_remainder_") + axis) return put(0);
    if (k == std::string("hidden_global_offset_") + axis) return put(0);
  }
  if (k == "hidden_grid_dims") return put(g.workgroups[2] > 1 ? 3 : g.workgroups[1] > 1 ? 2 : 1);
  if (k == "hidden_dynamic_lds_size") return put(g.dynamic_lds_bytes);
  std::memset(slot, 0, a.size);  // pointers the HIP runtime may leave null (hostcall, printf, ...)
}

}  // namespace

Device::Device(Target target) : impl_(std::make_unique<Impl>()) { impl_->target = target; }

Device::~Device() {
  for (auto &m : impl_->modules) std::free(m.image);
  for (auto &[p, n] : impl_->allocations) std::free(p);
}

Target Device::target() const { return impl_->target; }

void *Device::allocate(size_t bytes) {
  void *p = zeroed_pages(bytes);
  if (!p) return nullptr;
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->allocations.emplace_back(p, bytes);
  impl_->memory.add(uint64_t(p), bytes, "allocation of " + std::to_string(bytes) + " bytes");
  return p;
}

void Device::release(void *p) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  auto it = std::find_if(impl_->allocations.begin(), impl_->allocations.end(), [&](auto &a) { return a.first == p; });
  if (it == impl_->allocations.end()) return;
  impl_->memory.remove(uint64_t(p));
  std::free(p);
  impl_->allocations.erase(it);
}

void Device::register_host(const void *p, size_t bytes) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->memory.add(uint64_t(p), bytes, "host buffer of " + std::to_string(bytes) + " bytes");
}

void Device::unregister_host(const void *p) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->memory.remove(uint64_t(p));
}

StatusOr<Module *> Device::load(std::span<const uint8_t> code_object) {
  auto co = parse_code_object(code_object);
  if (!co.ok()) return co.status();
  if (co->target != impl_->target)
    return invalid_argument(std::string("code object is for ") + target_name(co->target) + ", the emulated device is " +
                            target_name(impl_->target));
  std::lock_guard<std::mutex> lock(impl_->mu);
  Module &m = impl_->modules.emplace_back();
  m.co = std::move(*co);
  m.image = static_cast<uint8_t *>(zeroed_pages(m.co.image_bytes));
  if (!m.image) {
    impl_->modules.pop_back();
    return internal_error("out of host memory for a code object image");
  }
  for (const auto &s : m.co.segments) std::memcpy(m.image + s.vaddr, m.co.file.data() + s.file_offset, s.file_bytes);
  for (const auto &r : m.co.relocations) {
    if (r.offset + 8 > m.co.image_bytes) return corrupt("code object: a relocation lies outside the image");
    const uint64_t v = uint64_t(m.image) + r.addend;
    std::memcpy(m.image + r.offset, &v, 8);
  }
  auto program = decode_program(m.co, uint64_t(m.image));
  if (!program.ok()) {
    std::free(m.image);
    impl_->modules.pop_back();
    return program.status();
  }
  m.program = std::move(*program);
  impl_->memory.add(uint64_t(m.image), m.co.image_bytes, "code object image (module globals)");
  return &m;
}

void Device::unload(Module *m) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  for (auto it = impl_->modules.begin(); it != impl_->modules.end(); ++it)
    if (&*it == m) {
      impl_->memory.remove(uint64_t(m->image));
      std::free(m->image);
      impl_->modules.erase(it);
      return;
    }
}

StatusOr<const KernelInfo *> Device::kernel(Module *m, const std::string &name) {
  auto it = m->co.kernels.find(name);
  if (it == m->co.kernels.end()) return not_found("code object has no kernel " + name);
  return &it->second.info;
}

std::vector<std::string> Device::unimplemented(Module *m) const { return m->program.unimplemented; }

Status Device::launch(Module *m, const std::string &name, const LaunchGrid &grid, void **args,
                      const RunOptions &options, RunStats *stats) {
  auto kit = m->co.kernels.find(name);
  if (kit == m->co.kernels.end()) return not_found("code object has no kernel " + name);
  const CodeObjectKernel &k = kit->second;
  const KernelDescriptor &kd = k.kd;
  const uint32_t group_threads = grid.workgroup_size[0] * grid.workgroup_size[1] * grid.workgroup_size[2];
  if (group_threads == 0 || group_threads > 1024)
    return invalid_argument("workgroup size " + std::to_string(group_threads) + ": must be 1..1024");
  if (k.info.max_workgroup_size && group_threads > k.info.max_workgroup_size)
    return invalid_argument("workgroup size " + std::to_string(group_threads) + " exceeds the kernel's " +
                            std::to_string(k.info.max_workgroup_size));
  for (int d = 0; d < 3; ++d)
    if (grid.workgroups[size_t(d)] == 0) return invalid_argument("grid dimension " + std::to_string(d) + " is 0");
  if (kd.workitem_id_dims < 2 && (grid.workgroup_size[1] > 1 || grid.workgroup_size[2] > 1))
    return invalid_argument("the kernel takes only the x work-item ID, the workgroup is not one-dimensional");
  const uint64_t lds_bytes = uint64_t(kd.group_segment_bytes) + grid.dynamic_lds_bytes;
  if (lds_bytes > 160 * 1024) return invalid_argument("LDS of " + std::to_string(lds_bytes) + " bytes exceeds 160 KiB");

  std::lock_guard<std::mutex> lock(impl_->mu);
  Launch l;
  l.program = &m->program;
  l.kernel = &k;
  l.target = impl_->target;
  l.memory = &impl_->memory;
  l.options = options;
  l.grid = grid;
  l.lds_bytes = uint32_t(lds_bytes);
  l.mnemonic_counts.assign(m->program.mnemonics.size(), 0);

  // The kernarg buffer: explicit arguments at their metadata offsets (from
  // kernelParams, as hipModuleLaunchKernel copies them), hidden ones filled.
  const uint32_t kernarg_bytes = std::max<uint32_t>({k.info.kernarg_bytes, kd.kernarg_bytes, 16});
  std::vector<uint8_t> kernarg(kernarg_bytes + 256, 0);
  size_t explicit_index = 0;
  for (const auto &a : k.info.args) {
    if (a.offset + a.size > kernarg_bytes) return corrupt("kernel argument past the kernarg segment's end");
    if (a.kind.rfind("hidden_", 0) == 0) {
      fill_hidden(a, kernarg.data() + a.offset, grid);
    } else {
      if (!args || !args[explicit_index]) return invalid_argument("argument " + std::to_string(explicit_index) + " is null");
      std::memcpy(kernarg.data() + a.offset, args[explicit_index], a.size);
      ++explicit_index;
    }
  }
  impl_->memory.add(uint64_t(kernarg.data()), kernarg.size(), "kernarg segment");
  // The AQL dispatch packet (hsa_kernel_dispatch_packet_t), for kernels that read it.
  struct alignas(64) Packet {
    uint16_t header, setup, wg_x, wg_y, wg_z, reserved0;
    uint32_t grid_x, grid_y, grid_z, private_bytes, group_bytes;
    uint64_t kernel_object, kernarg_address, reserved2, completion_signal;
  } packet{};
  packet.setup = uint16_t(grid.workgroups[2] > 1 ? 3 : grid.workgroups[1] > 1 ? 2 : 1);
  packet.wg_x = uint16_t(grid.workgroup_size[0]), packet.wg_y = uint16_t(grid.workgroup_size[1]);
  packet.wg_z = uint16_t(grid.workgroup_size[2]);
  packet.grid_x = grid.workgroups[0] * grid.workgroup_size[0];
  packet.grid_y = grid.workgroups[1] * grid.workgroup_size[1];
  packet.grid_z = grid.workgroups[2] * grid.workgroup_size[2];
  packet.private_bytes = kd.private_segment_bytes;
  packet.group_bytes = uint32_t(lds_bytes);
  packet.kernarg_address = uint64_t(kernarg.data());
  impl_->memory.add(uint64_t(&packet), sizeof packet, "dispatch packet");
  std::vector<uint8_t> queue(256, 0);  // hsa_queue_t, for kernels that ask for its pointer
  impl_->memory.add(uint64_t(queue.data()), queue.size(), "queue");
  struct Unregister {
    GlobalMemory &mem;
    std::vector<uint64_t> bases;
    ~Unregister() {
      for (auto b : bases) mem.remove(b);
    }
  } unregister{impl_->memory, {uint64_t(kernarg.data()), uint64_t(&packet), uint64_t(queue.data())}};

  std::unique_ptr<XcdCaches> xcd;
  const int dies = target_info(impl_->target).dies;
  if (options.cross_xcd) {
    xcd = std::make_unique<XcdCaches>(std::max(dies, 1));
    l.xcd = xcd.get();
  }

  // Registers: the hardware's unified file of kd.vgprs per lane.
  const uint32_t waves_per_group = (group_threads + 63) / 64;
  const uint64_t groups = uint64_t(grid.workgroups[0]) * grid.workgroups[1] * grid.workgroups[2];
  const uint64_t waves = groups * waves_per_group;
  if (waves * kd.vgprs * 64 * 4 > (uint64_t(8) << 30))
    return unsupported("launch too large for the emulator: " + std::to_string(waves) + " waves of " +
                       std::to_string(kd.vgprs) + " registers");
  // Every register an instruction names must be in the kernel's file.
  for (const Inst &in : m->program.insts)
    for (int i = 0; i < in.nops; ++i) {
      const Operand &o = in.op[i];
      const uint32_t first = o.kind == OpKind::kAgpr ? kd.accum_offset + o.reg : o.reg;
      if ((o.kind == OpKind::kVgpr || o.kind == OpKind::kAgpr) && first + o.count > kd.vgprs)
        return corrupt("instruction '" + m->program.texts[in.text_id] + "' names a register past the kernel's " +
                       std::to_string(kd.vgprs) + " (accum_offset " + std::to_string(kd.accum_offset) + ")");
    }
  l.register_file = ZeroedPages(size_t(waves) * kd.vgprs * 64 * 4);
  l.waves.resize(size_t(waves));
  l.workgroups.resize(size_t(groups));
  if (options.check_waits) {
    l.trackers.resize(size_t(waves));
    for (auto &t : l.trackers) t.vregs.resize(kd.vgprs);
  }
  if (kd.private_segment_bytes) l.scratch = ZeroedPages(size_t(waves) * 64 * kd.private_segment_bytes);
  const size_t lds_stride = (lds_bytes + 63) / 64 * 64;
  l.lds = ZeroedPages(size_t(groups) * lds_stride);
  if (options.check_lds_races || options.check_waits)
    l.lds_shadow = ZeroedPages(size_t(groups) * lds_stride / 4 * sizeof(LdsWordShadow));

  const uint32_t entry = m->program.index_at(uint64_t(m->image) + kd.entry_offset);
  uint32_t mode = 0;  // the MODE register (CDNA3 ISA, "MODE"): FP_ROUND [3:0], FP_DENORM [7:4], DX10_CLAMP 8, IEEE 9
  mode |= kd.float_denorm_32 << 4 | kd.float_denorm_16_64 << 6 | uint32_t(kd.dx10_clamp) << 8 |
          uint32_t(kd.ieee_mode) << 9;
  uint64_t wave_index = 0;
  for (uint32_t z = 0; z < grid.workgroups[2]; ++z)
    for (uint32_t y = 0; y < grid.workgroups[1]; ++y)
      for (uint32_t x = 0; x < grid.workgroups[0]; ++x) {
        const uint64_t linear = (uint64_t(z) * grid.workgroups[1] + y) * grid.workgroups[0] + x;
        Workgroup &g = l.workgroups[size_t(linear)];
        g.id = {x, y, z};
        g.linear = uint32_t(linear);
        g.xcd = int(linear % uint64_t(std::max(dies, 1)));  // dealt round-robin to the XCDs
        g.lds = l.lds.data() + size_t(linear) * lds_stride;
        g.lds_bytes = uint32_t(lds_bytes);
        if (l.lds_shadow.size()) g.lds_shadow = l.lds_shadow.data<LdsWordShadow>() + size_t(linear) * lds_stride / 4;
        g.waves = waves_per_group;
        g.first_wave = uint32_t(wave_index);
        for (uint32_t wi = 0; wi < waves_per_group; ++wi, ++wave_index) {
          Wave &w = l.waves[size_t(wave_index)];
          w.launch = &l;
          w.wg = &g;
          w.id = uint32_t(wave_index);
          w.id_in_group = wi;
          w.v = l.register_file.data<uint32_t>() + size_t(wave_index) * kd.vgprs * 64;
          w.vregs = kd.vgprs;
          w.accum_offset = kd.accum_offset;
          w.pc = entry;
          w.hwreg_mode = mode;
          w.mode.flush_f32 = kd.float_denorm_32 != 3;
          w.mode.flush_f16_64 = kd.float_denorm_16_64 != 3;
          w.mode.ieee = kd.ieee_mode;
          w.mode.dx10_clamp = kd.dx10_clamp;
          if (options.check_waits) w.waits = &l.trackers[size_t(wave_index)];
          if (kd.private_segment_bytes)
            w.scratch = l.scratch.data() + size_t(wave_index) * 64 * kd.private_segment_bytes;
          // EXEC: the wave's threads that exist.
          const uint32_t first_thread = wi * 64;
          const uint32_t threads = std::min<uint32_t>(64, group_threads - first_thread);
          w.set_exec(threads == 64 ? ~0ull : (1ull << threads) - 1);
          // User SGPRs, then system SGPRs (AMDGPUUsage, "Initial Kernel Execution State").
          uint32_t s = 0;
          auto put64 = [&](uint64_t v) {
            w.s[s++] = uint32_t(v);
            w.s[s++] = uint32_t(v >> 32);
          };
          if (kd.dispatch_ptr) put64(uint64_t(&packet));
          if (kd.queue_ptr) put64(uint64_t(queue.data()));
          if (kd.kernarg_ptr) put64(uint64_t(kernarg.data()));
          if (kd.dispatch_id) put64(0);
          if (kd.flat_scratch_init) put64(0);
          if (kd.private_segment_size) w.s[s++] = kd.private_segment_bytes;
          for (uint32_t i = 0; i < kd.kernarg_preload_length && s < kd.user_sgprs; ++i) {
            uint32_t dw = 0;
            std::memcpy(&dw, kernarg.data() + 4 * i, 4);
            w.s[s++] = dw;
          }
          if (s > kd.user_sgprs) return corrupt("the kernel's user SGPR count is smaller than what its descriptor enables");
          s = kd.user_sgprs;
          for (int d = 0; d < 3; ++d)
            if (kd.workgroup_id[d]) w.s[s++] = g.id[size_t(d)];
          if (kd.workgroup_info) w.s[s++] = waves_per_group;
          if (kd.private_segment_wave_offset) w.s[s++] = 0;
          // v0: the work-item IDs, packed x | y << 10 | z << 20 (GFX90A+).
          for (uint32_t lane = 0; lane < threads; ++lane) {
            const uint32_t t = first_thread + lane;
            const uint32_t tx = t % grid.workgroup_size[0];
            const uint32_t ty = (t / grid.workgroup_size[0]) % grid.workgroup_size[1];
            const uint32_t tz = t / (grid.workgroup_size[0] * grid.workgroup_size[1]);
            uint32_t id = tx;
            if (kd.workitem_id_dims >= 2) id |= ty << 10;
            if (kd.workitem_id_dims >= 3) id |= tz << 20;
            w.v[lane] = id;
          }
        }
      }
  return run_launch(l, stats);
}

}  // namespace gatejit::emulator
