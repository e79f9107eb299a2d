// Which backends encode tensor maps, and what a caller hears where none
// can: the HIP backend never does (no gfx950 kernel takes them); the CUDA
// backend says why when the driver is missing (the runtime asks when it
// loads a kernel that takes them, before any launch or graph capture). On the GPU machine the CUDA
// path itself runs in every TMA kernel's launch (tests/gpu).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "device_backend.h"

namespace gatejit {
namespace {

using testing::HasSubstr;

TEST(TensorMapBackend, HipHasNoneAndSaysSo) {
  DeviceBackend &hip = hip_backend();
  Status s = hip.tensor_maps_available();
  ASSERT_FALSE(s.ok());
  TensorMap map{};
  Status encode = hip.encode_tensor_map({"weight", &map, 8, 64, 64, 64, 8}, &map);
  ASSERT_FALSE(encode.ok());
  // Whether or not the HIP library is here: the backend has none.
  EXPECT_EQ(s.code(), StatusCode::kUnsupported);
  EXPECT_THAT(s.message(), HasSubstr("tensor maps: the hip backend has none"));
  EXPECT_EQ(encode.message(), s.message());
}

TEST(TensorMapBackend, CudaWithoutDriverNamesTheLibrary) {
  DeviceBackend &cuda = cuda_backend();
  if (cuda.available().ok()) GTEST_SKIP() << "a CUDA driver is present: the GPU suite covers the encoding";
  TensorMap map{};
  Status s = cuda.encode_tensor_map({"hidden", &map, 8, 64, 64, 64, 8}, &map);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kDeviceError);
  EXPECT_THAT(s.message(), HasSubstr("libcuda"));
  EXPECT_EQ(cuda.tensor_maps_available().message(), s.message());
}

}  // namespace
}  // namespace gatejit
