// The C++ wrapper: RAII over the handle, statuses become gatejit::Error with
// the code and the runtime's message.
#include <gtest/gtest.h>

#include "gatejit/gatejit.hpp"

namespace {

TEST(CppWrapper, ErrorsCarryCodeAndMessage) {
  gatejit_runtime_options_t o = GATEJIT_RUNTIME_OPTIONS_INIT;
  o.disable_cache = 1;
  gatejit::Runtime rt(&o);
  try {
    rt.explain(R"({"m": 1, "n": 1536, "k": 0})");
    FAIL() << "an invalid contract was explained";
  } catch (const gatejit::Error &e) {
    EXPECT_EQ(e.code(), GATEJIT_INVALID_ARGUMENT);
    EXPECT_NE(std::string(e.what()).find("k = 0"), std::string::npos) << e.what();
  }
  EXPECT_THROW(rt.load_bundle("/nonexistent/b.gjb"), gatejit::Error);
  gatejit::Runtime moved = std::move(rt);
  EXPECT_NE(moved.handle(), nullptr);
  EXPECT_EQ(rt.handle(), nullptr);
}

TEST(CppWrapper, ConstructionFailureThrows) {
  gatejit_runtime_options_t o = GATEJIT_RUNTIME_OPTIONS_INIT;
  o.bundle_path = "/nonexistent/kernels.gjb";
  EXPECT_THROW(gatejit::Runtime rt(&o), gatejit::Error);
}

}  // namespace
