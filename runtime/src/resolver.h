// Resolution: which kernel serves a contract, in this order:
//   loaded bundles -> disk cache -> JIT (when attached and not disabled)
//   -> the generic kernel (from the same three sources) -> "unsupported".
// The specialised candidates are the contract as asked and its dynamic-M
// buckets, so one precompiled kernel can serve every decode batch size,
// whichever form the compiler picked for it (the runtime never decides it).
#pragma once

#include <functional>
#include <memory>
#include <shared_mutex>
#include <string>
#include <vector>

#include "background_jit.h"
#include "bundle.h"
#include "contract_record.h"
#include "disk_cache.h"
#include "gatejit/jit_hook.h"
#include "gatejit/kernel_binary.h"

namespace gatejit {

struct ResolverOptions {
  bool disable_cache = false;
  DiskCacheOptions cache;  // dir "" = default_dir()
  bool disable_jit = false;
  // GATEJIT_RECORD: every contract resolve() is asked for is appended here.
  std::shared_ptr<ContractRecorder> recorder;
  // GATEJIT_JIT=background: a specialised kernel that must be compiled is
  // compiled on these threads while the generic kernel serves (background_jit.h).
  bool background_jit = false;
  BackgroundCompiler::Limits background;
};

struct Resolution {
  KernelBinary binary;
  std::string explanation;  // "specialised gemv from bundle kernels.gjb"
  // Background JIT: set when `binary` serves while this job compiles the
  // specialised kernel (the caller swaps it in once the job is done).
  std::shared_ptr<BackgroundJob> pending;
};

class Resolver {
 public:
  explicit Resolver(ResolverOptions options);

  // `origin` names the bundle in explanations ("bundle kernels.gjb").
  Status add_bundle(const std::string &path, const std::string &origin = "bundle");
  void set_jit(JitHook hook);

  // Finds (and, where needed, compiles) the kernel for a normalised contract;
  // records it first (ResolverOptions::recorder) when a template can serve it.
  StatusOr<Resolution> resolve(const Contract &c);
  // The path resolve() would take and why, without compiling or writing.
  StatusOr<std::string> explain(const Contract &c);

  // Background mode: queues a job the full queue refused, if there is room now.
  bool retry_background(const std::shared_ptr<BackgroundJob> &job) { return background_ && background_->retry(job); }
  // Background mode's job counts (all zero in the other modes).
  BackgroundCompiler::Counts background_counts() const {
    return background_ ? background_->counts() : BackgroundCompiler::Counts{};
  }

  size_t bundle_count() const;
  // The disk cache, opened lazily; null (with one warning) when disabled or
  // unusable. The loader keeps native code in it too (native_code_cache.h).
  DiskCache *cache();

 private:
  enum class Mode { kResolve, kExplain };
  StatusOr<Resolution> run(const Contract &c, Mode mode);
  // One candidate through bundles and cache; nullopt-like NotFound on miss.
  // What a kernel of the form ("gemv", "mma"; "" unknown) is called in
  // explanations ("specialised mma (dynamic-M bucket, m_max 64)").
  using Describe = std::function<std::string(const std::string &form)>;
  // `form` non-empty: a kernel of another form is passed over.
  StatusOr<Resolution> lookup(const Contract &candidate, Mode mode, const Describe &describe,
                              const std::string &form = "");
  StatusOr<Resolution> jit(const Contract &candidate, Mode mode, const Describe &describe);
  // Background mode's JIT step for `c`'s specialised candidate.
  StatusOr<Resolution> jit_in_background(const Contract &candidate, Mode mode, const Describe &describe,
                                         const Contract &c);
  std::string jit_label(const JitHook &hook, const Contract &candidate, const Describe &describe) const;
  Status jit_usable(const JitHook &hook) const;
  // The form the attached compiler picks for an auto contract ("" where it
  // cannot tell, may not compile, or `c` names a template).
  std::string compiler_form(const Contract &c) const;

  ResolverOptions options_;
  mutable std::shared_mutex mu_;
  std::vector<std::unique_ptr<Bundle>> bundles_;
  std::vector<std::string> bundle_origins_;  // parallel to bundles_
  JitHook jit_;
  bool cache_opened_ = false;
  std::unique_ptr<DiskCache> cache_;
  // Last: destroyed first, so no compile runs against the members above.
  std::unique_ptr<BackgroundCompiler> background_;
};

}  // namespace gatejit
