#include "resolver.h"

#include <mutex>

#include "cache_toolchain.h"
#include "gatejit/template_choice.h"
#include "input_echo.h"
#include "log.h"

namespace gatejit {
namespace {

std::string basename_of(const std::string &path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// Dynamic-M buckets: one kernel compiled for m_max = B serves every M <= B.
// gemv has one (16); mma one per power of two from 16 to 4096: decode
// batches, and the prefill chunks whose plans (gfx950's tiled shapes and
// persistent grid, v79) are chosen for their largest M.
constexpr int64_t kMmaBuckets[] = {16, 32, 64, 128, 256, 512, 1024, 2048, 4096};

std::string label(TemplateKind kind) { return std::string("specialised ") + template_name(kind); }

Contract as_bucket(const Contract &c, TemplateKind kind, int64_t m_max) {
  Contract b = c;
  b.template_kind = kind;
  b.m_dynamic = true;
  b.m = 0;
  b.m_max = m_max;
  return b;
}

// The specialised contracts that can serve `c`, best first: the exact
// contract, the chosen template's bucket, then (M <= 16) the other template's
// bucket, so a bundle with either dynamic-M kernel serves every decode M.
std::vector<std::pair<Contract, std::string>> specialised_candidates(const TemplateChoice &choice) {
  std::vector<std::pair<Contract, std::string>> out;
  const Contract &c = choice.contract;
  out.push_back({c, label(choice.kind)});
  auto add_bucket = [&](TemplateKind kind, int64_t m_max) {
    if (c.m_dynamic && c.m_max == m_max && c.template_kind == kind) return;  // the candidate itself
    out.push_back({as_bucket(c, kind, m_max),
                   label(kind) + " (dynamic-M bucket, m_max " + std::to_string(m_max) + ")"});
  };
  if (choice.kind == TemplateKind::kGemv) {
    add_bucket(TemplateKind::kGemv, kGemvMaxM);
    if (mma_available(c.target)) add_bucket(TemplateKind::kMma, kGemvMaxM);
  } else {
    // The smallest mma bucket that holds M first (its plan is the nearest);
    // then, for M > 16, the larger ones: a kernel planned for more rows
    // still beats the generic fallback by far (a bundle that ships only a
    // prefill bucket serves every M up to it).
    // A decode M the mma serves only as a fixed M (gfx950's thin grid rows at
    // M = 15-16, v84): the 16-buckets in the order a dynamic M would take
    // them, so the gemv's bucket comes before an mma bucket planned for
    // any M up to 16 (12.4 µs predicted at N = 1536 against the gemv's 5.7).
    const bool gemv_bucket_first =
        c.m_max <= kGemvMaxM && !mma_preferred(c.target, kGemvMaxM, c.n, c.k, c.dtype_weight, /*m_dynamic=*/true);
    if (gemv_bucket_first) add_bucket(TemplateKind::kGemv, kGemvMaxM);
    for (int64_t b : kMmaBuckets) {
      if (c.m_max > b) continue;
      add_bucket(TemplateKind::kMma, b);
      if (c.m_max <= kGemvMaxM) {  // decode: the 16-buckets only
        if (!gemv_bucket_first) add_bucket(TemplateKind::kGemv, kGemvMaxM);
        break;
      }
    }
  }
  return out;
}

}  // namespace

Resolver::Resolver(ResolverOptions options) : options_(std::move(options)) {
  if (options_.background_jit) background_ = std::make_unique<BackgroundCompiler>(options_.background);
}

Status Resolver::add_bundle(const std::string &path, const std::string &origin) {
  auto bundle = Bundle::open(path);
  if (!bundle.ok()) return bundle.status();
  log::info("loaded " + origin + " " + path + " (" + std::to_string((*bundle)->size()) + " kernels)");
  std::unique_lock lock(mu_);
  bundles_.push_back(std::move(*bundle));
  bundle_origins_.push_back(origin);
  return Status::Ok();
}

void Resolver::set_jit(JitHook hook) {
  std::unique_lock lock(mu_);
  jit_ = std::move(hook);
}

size_t Resolver::bundle_count() const {
  std::shared_lock lock(mu_);
  return bundles_.size();
}

DiskCache *Resolver::cache() {
  std::unique_lock lock(mu_);
  if (options_.disable_cache) return nullptr;
  if (!cache_opened_) {
    cache_opened_ = true;
    DiskCacheOptions o = options_.cache;
    if (o.dir.empty()) o.dir = DiskCache::default_dir();
    if (o.dir.empty()) {
      log::warn_once("disk cache disabled: no cache directory ($GATEJIT_CACHE_DIR, $XDG_CACHE_HOME and $HOME unset); "
                     "kernels are kept in memory only");
      return nullptr;
    }
    auto opened = DiskCache::open(o);
    if (!opened.ok()) {
      log::warn_once("disk cache disabled: " + opened.status().message() + "; kernels are kept in memory only");
      return nullptr;
    }
    cache_ = std::move(*opened);
  }
  return cache_.get();
}

StatusOr<Resolution> Resolver::lookup(const Contract &candidate, Mode mode, const std::string &what) {
  const std::string key = contract_key(candidate);
  std::string damaged;  // bundle entries passed over, for the miss message
  {
    std::shared_lock lock(mu_);
    for (size_t i = 0; i < bundles_.size(); ++i) {
      const Bundle *bundle = bundles_[i].get();
      if (!bundle->contains(key)) continue;
      const std::string where = what + " from " + bundle_origins_[i] + " " + escape_input(basename_of(bundle->path()));
      // Checked even to explain: an entry that fails its checksum or does
      // not decode is never named as the one that would serve.
      auto kb = bundle->find(key);
      if (kb.ok()) return Resolution{mode == Mode::kExplain ? KernelBinary{} : std::move(*kb), where};
      log::warn_once(kb.status().message());
      damaged += "; passed over a damaged entry: " + kb.status().message();
    }
  }
  std::string fingerprint;
  {
    std::shared_lock lock(mu_);
    fingerprint = jit_.fingerprint;
  }
  // The cache key includes the compiler's fingerprint. Without a compiler
  // attached, the toolchain recorded in the cache stands in (cache_toolchain.h).
  std::string source = " from the disk cache", unread;
  if (DiskCache *dc = cache()) {
    if (fingerprint.empty()) {
      auto recorded = recorded_toolchain(*dc);
      if (recorded.ok()) fingerprint = *recorded, source += " (no compiler attached: toolchain recorded in the cache)";
      else unread = "; the disk cache is not read without a compiler: " + recorded.status().message();
    }
    if (!fingerprint.empty()) {
      auto kb = dc->get(cache_key(key, fingerprint), key, fingerprint);
      if (kb.ok()) return Resolution{std::move(*kb), what + source};
      if (kb.status().code() != StatusCode::kNotFound) log::warn_once("disk cache: " + kb.status().message());
    }
  }
  return not_found(what + ": not in " + std::to_string(bundle_count()) + " bundle(s) or the disk cache" + damaged +
                   unread);
}

StatusOr<Resolution> Resolver::jit(const Contract &candidate, Mode mode, const std::string &what) {
  JitHook hook;
  {
    std::shared_lock lock(mu_);
    hook = jit_;
  }
  GATEJIT_RETURN_IF_ERROR(jit_usable(hook));
  if (mode == Mode::kExplain) return Resolution{{}, what + " compiled by the JIT (not in any bundle or the cache)"};
  const std::string key = contract_key(candidate);
  log::info("JIT compile " + canonical_text(candidate));
  DiskCache *dc = options_.cache.read_only ? nullptr : cache();
  if (!dc) {
    auto kb = hook.compile(candidate);
    if (!kb.ok()) return kb.status();
    return Resolution{std::move(*kb), what + " compiled by the JIT (not cached)"};
  }
  bool hit = false;
  Status stored;
  auto kb = dc->get_or_compile(cache_key(key, hook.fingerprint), key, hook.fingerprint,
                               [&] { return hook.compile(candidate); }, &hit, &stored);
  if (!kb.ok()) return kb.status();
  // Recorded once the entry is on disk, so a runtime without the compiler can find it.
  if (hit || stored.ok())
    if (Status s = record_toolchain(*dc, hook.fingerprint); !s.ok()) log::warn_once("disk cache: " + s.message());
  if (hit) return Resolution{std::move(*kb), what + " from the disk cache (compiled by another process)"};
  return Resolution{std::move(*kb), what + " compiled by the JIT" +
                                        (stored.ok() ? "" : " (not stored in the disk cache: " + stored.message() + ")")};
}

Status Resolver::jit_usable(const JitHook &hook) const {
  if (!hook.compile) return not_found("JIT not attached (the compiler library is not linked in)");
  if (options_.disable_jit) return not_found("JIT disabled (GATEJIT_DISABLE_JIT=1, GATEJIT_JIT=off or disable_jit)");
  return Status::Ok();
}

// The specialised kernel from its finished job; else the generic kernel from
// a bundle or the cache while the job compiles (or after it failed); else,
// with nothing loadable meanwhile, the job waited for, as sync mode would.
StatusOr<Resolution> Resolver::jit_in_background(const Contract &candidate, Mode mode, const std::string &what,
                                                 const Contract &c) {
  {
    std::shared_lock lock(mu_);
    GATEJIT_RETURN_IF_ERROR(jit_usable(jit_));
  }
  const std::string key = contract_key(candidate);
  auto compile = [this, candidate, what]() -> StatusOr<BackgroundResult> {
    auto r = jit(candidate, Mode::kResolve, what);
    if (!r.ok()) return r.status();
    return BackgroundResult{std::move(r->binary), r->explanation + " in the background"};
  };
  const std::shared_ptr<BackgroundJob> job =
      mode == Mode::kExplain ? background_->find(key) : background_->submit(key, what, compile);
  if (job && job->state() == BackgroundJob::State::kDone)
    return Resolution{mode == Mode::kExplain ? KernelBinary{} : job->result()->binary, job->result()->explanation, {}};
  const bool failed = job && job->state() == BackgroundJob::State::kFailed;
  const std::string note = failed ? what + " failed to compile in the background: " + job->result().status().message()
                                  : what + " compiles in the background: " + (job ? job->describe() : "not started");
  auto fallback = lookup(generic_contract_for(c), mode, "generic (" + note + ")");
  if (fallback.ok()) {
    if (!failed) fallback->pending = job;
    return fallback;
  }
  if (failed) return job->result().status();
  if (mode == Mode::kExplain) return Resolution{{}, what + " compiled by the JIT (nothing else loadable meanwhile)", {}};
  const auto &waited = job->wait();
  if (!waited.ok()) return waited.status();
  return Resolution{waited->binary, waited->explanation + " (waited: nothing else loadable meanwhile)", {}};
}

StatusOr<Resolution> Resolver::run(const Contract &c, Mode mode) {
  auto choice = choose_template(c);
  if (!choice.ok()) return choice.status();
  std::vector<std::string> misses;
  if (choice->kind != TemplateKind::kGeneric) {
    const auto candidates = specialised_candidates(*choice);
    for (const auto &[candidate, what] : candidates) {
      auto r = lookup(candidate, mode, what);
      if (r.ok()) return r;
      misses.push_back(r.status().message());
    }
    auto r = background_ ? jit_in_background(candidates.front().first, mode, candidates.front().second, c)
                         : jit(candidates.front().first, mode, candidates.front().second);
    if (r.ok()) return r;
    if (r.status().code() != StatusCode::kNotFound) return r.status();  // a real compile error
    misses.push_back(r.status().message());
  }
  const Contract generic = generic_contract_for(c);
  const std::string why = choice->kind == TemplateKind::kGeneric
                              ? choice->reason.substr(choice->reason.find(':') + 2)
                              : "no specialised kernel available";
  const std::string what = "generic (" + why + ")";
  auto r = lookup(generic, mode, what);
  if (r.ok()) return r;
  misses.push_back(r.status().message());
  r = jit(generic, mode, what);
  if (r.ok() || r.status().code() != StatusCode::kNotFound) return r;
  misses.push_back(r.status().message());
  std::string message = "no kernel can serve " + canonical_text(c) + ":";
  for (const std::string &m : misses) message += "\n  - " + m;
  return unsupported(message);
}

StatusOr<Resolution> Resolver::resolve(const Contract &c) {
  // Recorded whatever the outcome (a contract no kernel serves yet is what
  // the next bundle needs), unless no template takes it: precompile would
  // refuse it.
  if (options_.recorder && choose_template(c).ok()) options_.recorder->record(c);
  return run(c, Mode::kResolve);
}

StatusOr<std::string> Resolver::explain(const Contract &c) {
  auto r = run(c, Mode::kExplain);
  if (!r.ok()) return r.status();
  return r->explanation;
}

}  // namespace gatejit
