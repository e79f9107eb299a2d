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

// Dynamic-M buckets: one kernel compiled for m_max = B serves every M <= B:
// 16 for decode batches, then powers of two to 4096 for the prefill chunks
// (whose plans are chosen for their largest M).
constexpr int64_t kBuckets[] = {16, 32, 64, 128, 256, 512, 1024, 2048, 4096};

Contract as_bucket(const Contract &c, TemplateKind kind, int64_t m_max) {
  Contract b = c;
  b.template_kind = kind;
  b.m_dynamic = true;
  b.m = 0;
  b.m_max = m_max;
  return b;
}

// A contract to look up, and what its explanation adds to the kernel's
// form ("specialised mma" + detail).
struct Candidate {
  Contract contract;
  std::string detail;
  std::string form = {};  // non-empty: only a kernel of this form serves
};

// The form a binary records ("template=mma" in its contract text), or "".
std::string form_of(const KernelBinary &kb) {
  const std::string tag = " template=";
  const size_t at = kb.contract_text.find(tag);
  if (at == std::string::npos) return "";
  const size_t from = at + tag.size();
  return kb.contract_text.substr(from, kb.contract_text.find(' ', from) - from);
}

std::string specialised_label(const std::string &form, const std::string &detail) {
  return "specialised" + (form.empty() ? std::string() : " " + form) + detail;
}

// The specialised contracts that can serve `c`, best first. Kernels are
// found by the contract as asked, whichever form the compiler picked, and
// then by the same contract naming a template that can serve it (gemv
// first): bundles that name the form in their keys (written while the
// runtime decided it, or for a contract that asked for one). A contract
// that asks for a template is also served by the kernel of the same contract
// left to the compiler where the compiler picked that template. First the
// exact contract, then its dynamic-M buckets: the smallest that holds M;
// above 16 the larger ones too (a kernel planned for more rows is still far
// ahead of the generic one); a decode M the 16-bucket only. `compiler_form`
// (the compiler's pick for an auto contract, where the JIT can tell): only
// that form's keys serve it, so a kernel compiled for a contract that asked
// for another form (a test, an A/B) never stands in for the compiler's choice.
std::vector<Candidate> specialised_candidates(const Contract &c, const std::string &compiler_form) {
  std::vector<TemplateKind> keys = {c.template_kind};
  if (c.template_kind == TemplateKind::kAuto)
    for (TemplateKind kind : {TemplateKind::kGemv, TemplateKind::kMma})
      if (!template_refusal(c, kind) && (compiler_form.empty() || compiler_form == template_name(kind)))
        keys.push_back(kind);
  std::vector<Candidate> out;
  for (TemplateKind kind : keys) {
    Contract exact = c;
    exact.template_kind = kind;
    out.push_back({exact, ""});
  }
  if (c.template_kind == TemplateKind::kGemv || c.template_kind == TemplateKind::kMma) {
    Contract left_to_compiler = c;
    left_to_compiler.template_kind = TemplateKind::kAuto;
    out.push_back({left_to_compiler, "", template_name(c.template_kind)});
  }
  for (TemplateKind kind : keys)
    for (int64_t b : kBuckets) {
      if (c.m_max > b) continue;
      if (kind == TemplateKind::kGemv && b > kGemvMaxM) break;
      if (!(c.m_dynamic && c.m_max == b))
        out.push_back({as_bucket(c, kind, b), " (dynamic-M bucket, m_max " + std::to_string(b) + ")"});
      if (c.m_max <= kGemvMaxM) break;  // decode: the 16-bucket only
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

StatusOr<Resolution> Resolver::lookup(const Contract &candidate, Mode mode, const Describe &describe,
                                      const std::string &form) {
  const std::string key = contract_key(candidate);
  // A miss names the template the key does, if any.
  const std::string what = describe(candidate.template_kind == TemplateKind::kAuto ? ""
                                                                                    : template_name(candidate.template_kind));
  std::string damaged;  // bundle entries passed over, for the miss message
  {
    std::shared_lock lock(mu_);
    for (size_t i = 0; i < bundles_.size(); ++i) {
      const Bundle *bundle = bundles_[i].get();
      if (!bundle->contains(key)) continue;
      // Checked even to explain: an entry that fails its checksum or does
      // not decode is never named as the one that would serve.
      auto kb = bundle->find(key);
      if (kb.ok() && !form.empty() && form_of(*kb) != form) continue;  // another form than asked
      if (kb.ok()) {
        const std::string where =
            describe(form_of(*kb)) + " from " + bundle_origins_[i] + " " + escape_input(basename_of(bundle->path()));
        return Resolution{mode == Mode::kExplain ? KernelBinary{} : std::move(*kb), where};
      }
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
      if (kb.ok()) {
        if (form.empty() || form_of(*kb) == form) {
          const std::string found = describe(form_of(*kb)) + source;
          return Resolution{std::move(*kb), found};
        }  // else another form than asked: a miss here
      } else if (kb.status().code() != StatusCode::kNotFound) {
        log::warn_once("disk cache: " + kb.status().message());
      }
    }
  }
  return not_found(what + ": not in " + std::to_string(bundle_count()) + " bundle(s) or the disk cache" + damaged +
                   unread);
}

// What the JIT would compile `candidate` to, named as explanations do
// ("specialised mma"), where the hook can say without compiling.
std::string Resolver::jit_label(const JitHook &hook, const Contract &candidate, const Describe &describe) const {
  std::string form;
  if (hook.form)
    if (auto f = hook.form(candidate); f.ok()) form = *f;
  return describe(form);
}

StatusOr<Resolution> Resolver::jit(const Contract &candidate, Mode mode, const Describe &describe) {
  JitHook hook;
  {
    std::shared_lock lock(mu_);
    hook = jit_;
  }
  GATEJIT_RETURN_IF_ERROR(jit_usable(hook));
  if (mode == Mode::kExplain)
    return Resolution{{}, jit_label(hook, candidate, describe) + " compiled by the JIT (not in any bundle or the cache)"};
  const std::string key = contract_key(candidate);
  log::info("JIT compile " + canonical_text(candidate));
  DiskCache *dc = options_.cache.read_only ? nullptr : cache();
  if (!dc) {
    auto kb = hook.compile(candidate);
    if (!kb.ok()) return kb.status();
    const std::string what = describe(form_of(*kb));
    return Resolution{std::move(*kb), what + " compiled by the JIT (not cached)"};
  }
  bool hit = false;
  Status stored;
  auto kb = dc->get_or_compile(cache_key(key, hook.fingerprint), key, hook.fingerprint,
                               [&] { return hook.compile(candidate); }, &hit, &stored);
  if (!kb.ok()) return kb.status();
  const std::string what = describe(form_of(*kb));
  // Recorded once the entry is on disk, so a runtime without the compiler can find it.
  if (hit || stored.ok())
    if (Status s = record_toolchain(*dc, hook.fingerprint); !s.ok()) log::warn_once("disk cache: " + s.message());
  if (hit) return Resolution{std::move(*kb), what + " from the disk cache (compiled by another process)"};
  return Resolution{std::move(*kb), what + " compiled by the JIT" +
                                        (stored.ok() ? "" : " (not stored in the disk cache: " + stored.message() + ")")};
}

std::string Resolver::compiler_form(const Contract &c) const {
  if (c.template_kind != TemplateKind::kAuto) return "";
  JitHook hook;
  {
    std::shared_lock lock(mu_);
    hook = jit_;
  }
  // Only a compiler that may build the kernel decides: without one, a
  // kernel of either form beats the generic.
  if (!hook.form || !jit_usable(hook).ok()) return "";
  auto form = hook.form(c);
  return form.ok() ? *form : "";
}

Status Resolver::jit_usable(const JitHook &hook) const {
  if (!hook.compile) return not_found("JIT not attached (the compiler library is not linked in)");
  if (options_.disable_jit) return not_found("JIT disabled (GATEJIT_DISABLE_JIT=1, GATEJIT_JIT=off or disable_jit)");
  return Status::Ok();
}

// The specialised kernel from its finished job; else the generic kernel from
// a bundle or the cache while the job compiles (or after it failed); else,
// with nothing loadable meanwhile, the job waited for, as sync mode would.
StatusOr<Resolution> Resolver::jit_in_background(const Contract &candidate, Mode mode, const Describe &describe,
                                                 const Contract &c) {
  std::string what;
  {
    std::shared_lock lock(mu_);
    GATEJIT_RETURN_IF_ERROR(jit_usable(jit_));
    what = jit_label(jit_, candidate, describe);
  }
  const std::string key = contract_key(candidate);
  auto compile = [this, candidate, describe]() -> StatusOr<BackgroundResult> {
    auto r = jit(candidate, Mode::kResolve, describe);
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
  const std::string generic_what = "generic (" + note + ")";
  auto fallback = lookup(generic_contract_for(c), mode, [&](const std::string &) { return generic_what; });
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
  if (Status s = check_requested_template(c); !s.ok()) return s;
  // The generic kernel where the contract asks for it or no specialised
  // template can serve it; else the specialised kernel, whichever form.
  std::optional<std::string> refusal;
  if (c.template_kind == TemplateKind::kGeneric) refusal = "requested by the contract";
  else if (c.template_kind == TemplateKind::kAuto) refusal = specialised_refusal(c);
  std::vector<std::string> misses;
  if (!refusal) {
    const std::vector<Candidate> candidates = specialised_candidates(c, compiler_form(c));
    for (const Candidate &candidate : candidates) {
      const std::string detail = candidate.detail;
      auto r = lookup(
          candidate.contract, mode, [&](const std::string &form) { return specialised_label(form, detail); },
          candidate.form);
      if (r.ok()) return r;
      misses.push_back(r.status().message());
    }
    const Describe specialised = [](const std::string &form) { return specialised_label(form, ""); };
    auto r = background_ ? jit_in_background(candidates.front().contract, mode, specialised, c)
                         : jit(candidates.front().contract, mode, specialised);
    if (r.ok()) return r;
    if (r.status().code() != StatusCode::kNotFound) return r.status();  // a real compile error
    misses.push_back(r.status().message());
  }
  const Contract generic = generic_contract_for(c);
  const std::string what = "generic (" + refusal.value_or("no specialised kernel available") + ")";
  const Describe generic_label = [&](const std::string &) { return what; };
  auto r = lookup(generic, mode, generic_label);
  if (r.ok()) return r;
  misses.push_back(r.status().message());
  r = jit(generic, mode, generic_label);
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
  if (options_.recorder && check_requested_template(c).ok()) options_.recorder->record(c);
  return run(c, Mode::kResolve);
}

StatusOr<std::string> Resolver::explain(const Contract &c) {
  auto r = run(c, Mode::kExplain);
  if (!r.ok()) return r.status();
  return r->explanation;
}

}  // namespace gatejit
