// The kernel ABI as data (kernel_abi.h): names, validation, and the launch
// packing that walks a declared list (launch_args.h), on the host.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "gatejit/kernel_abi.h"
#include "launch_args.h"

namespace gatejit {
namespace {

using ::testing::HasSubstr;

TEST(KernelAbi, ClassicListIsTheElevenArgumentsThenTheTensorMaps) {
  const std::vector<AbiArg> plain = classic_abi(false);
  ASSERT_EQ(plain.size(), 11u);
  EXPECT_EQ(abi_text(plain),
            "ptr hidden, ptr weight, ptr attn, ptr out, i64 m, i64 n, i64 k, i64 ld_hidden, i64 ld_weight, "
            "i64 ld_attn, i64 ld_out");
  const std::vector<AbiArg> tma = classic_abi(true);
  ASSERT_EQ(tma.size(), 13u);
  EXPECT_EQ(tma[11], (AbiArg{AbiArgKind::kTensorMap, AbiValue::kWeight}));
  EXPECT_EQ(tma[12], (AbiArg{AbiArgKind::kTensorMap, AbiValue::kHidden}));
  EXPECT_TRUE(validate_abi(plain, false).ok());
  EXPECT_TRUE(validate_abi(tma, true).ok());
}

TEST(KernelAbi, NamesRoundTripAndUnknownOnesAreRefusedNamingThem) {
  for (AbiArgKind k : {AbiArgKind::kPointer, AbiArgKind::kScalar, AbiArgKind::kTensorMap}) {
    auto parsed = parse_abi_kind(abi_kind_name(k));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, k);
  }
  for (const AbiArg &a : classic_abi(false)) {
    auto parsed = parse_abi_value(abi_value_name(a.value));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, a.value);
  }
  auto bad_kind = parse_abi_kind("texture");
  ASSERT_FALSE(bad_kind.ok());
  EXPECT_THAT(bad_kind.status().message(), HasSubstr("'texture'"));
  auto bad_value = parse_abi_value("scale");
  ASSERT_FALSE(bad_value.ok());
  EXPECT_THAT(bad_value.status().message(), HasSubstr("'scale'"));
  EXPECT_EQ(abi_arg_bytes(AbiArgKind::kTensorMap), 128u);
  EXPECT_EQ(abi_arg_bytes(AbiArgKind::kScalar), 8u);
}

TEST(KernelAbi, IllFormedListsAreRefusedNamingTheEntry) {
  struct Bad {
    std::vector<AbiArg> args;
    bool maps_allowed;
    const char *says;
  };
  const std::vector<Bad> bad = {
      {{{AbiArgKind::kScalar, AbiValue::kAttn}}, false, "abi[0] = scalar attn"},
      {{{AbiArgKind::kPointer, AbiValue::kHidden}, {AbiArgKind::kPointer, AbiValue::kM}}, false, "abi[1] = pointer m"},
      {{{AbiArgKind::kTensorMap, AbiValue::kWeight}}, false, "only CUDA kernels with tensor map boxes"},
      {{{AbiArgKind::kTensorMap, AbiValue::kOut}}, true, "of hidden and weight only"},
      {{{AbiArgKind::kPointer, AbiValue::kOut}, {AbiArgKind::kPointer, AbiValue::kOut}}, false, "declared twice"},
      {std::vector<AbiArg>(kMaxAbiArgs + 1, AbiArg{}), false, "at most 16"},
      // An fp8 weight's scales are a pointer, never a scalar or a tensor map.
      {{{AbiArgKind::kScalar, AbiValue::kWeightScale}}, false, "abi[0] = scalar weight_scale"},
      {{{AbiArgKind::kTensorMap, AbiValue::kWeightScale}}, true, "tensor_map weight_scale"},
      {{{AbiArgKind::kTensorMap, AbiValue::kWeightScale}}, false, "tensor_map weight_scale"},
      {{{AbiArgKind::kPointer, AbiValue::kWeightScale}, {AbiArgKind::kPointer, AbiValue::kWeightScale}}, false,
       "declared twice"},
      {{{AbiArgKind::kPointer, AbiValue::kWeight}, {AbiArgKind::kScalar, AbiValue::kWeightScale}}, false,
       "abi[1] = scalar weight_scale"},
  };
  for (const Bad &b : bad) {
    const Status s = validate_abi(b.args, b.maps_allowed);
    ASSERT_FALSE(s.ok()) << b.says;
    EXPECT_THAT(s.message(), HasSubstr(b.says));
  }
}

// Each slot points at the value its declaration names, in the declared
// order, whatever that order is.
TEST(KernelAbi, PackingFollowsTheDeclaredOrder) {
  int h = 0, w = 0, a = 0, o = 0;
  LaunchValues v{&h, &w, &a, &o, 3, 1536, 7168, 7200, 7168, 1600, 1601};
  const std::vector<AbiArg> abi = {{AbiArgKind::kScalar, AbiValue::kLdOut},
                                   {AbiArgKind::kPointer, AbiValue::kOut},
                                   {AbiArgKind::kScalar, AbiValue::kM},
                                   {AbiArgKind::kPointer, AbiValue::kHidden},
                                   {AbiArgKind::kTensorMap, AbiValue::kHidden},
                                   {AbiArgKind::kTensorMap, AbiValue::kWeight},
                                   {AbiArgKind::kScalar, AbiValue::kLdHidden}};
  const LaunchSlots slots = pack_launch_args(abi, v);
  EXPECT_EQ(*static_cast<int64_t *>(slots[0]), 1601);
  EXPECT_EQ(*static_cast<void **>(slots[1]), &o);
  EXPECT_EQ(*static_cast<int64_t *>(slots[2]), 3);
  EXPECT_EQ(*static_cast<void **>(slots[3]), &h);
  EXPECT_EQ(slots[4], static_cast<void *>(&v.hidden_map));
  EXPECT_EQ(slots[5], static_cast<void *>(&v.weight_map));
  EXPECT_EQ(*static_cast<int64_t *>(slots[6]), 7200);
  EXPECT_TRUE(declares_tensor_map(abi, AbiValue::kWeight));
  EXPECT_FALSE(declares_tensor_map(classic_abi(false), AbiValue::kWeight));
  // The classic list: the 11 values in their order.
  const LaunchSlots classic = pack_launch_args(classic_abi(false), v);
  const std::vector<void *> want = {&v.hidden, &v.weight, &v.attn,      &v.out,       &v.m,      &v.n,
                                    &v.k,      &v.ld_hidden, &v.ld_weight, &v.ld_attn, &v.ld_out};
  EXPECT_EQ(std::vector<void *>(classic.begin(), classic.begin() + want.size()), want);
  EXPECT_EQ(classic[want.size()], nullptr);  // nothing past the declared list
}

// An fp8 weight's scales: one more pointer after the classic list (and after
// the tensor maps), packed from LaunchValues::weight_scale.
TEST(KernelAbi, GateAbiAppendsTheWeightScalePointer) {
  EXPECT_EQ(gate_abi(false, false), classic_abi(false));
  EXPECT_EQ(gate_abi(true, false), classic_abi(true));
  for (bool maps : {false, true}) {
    const std::vector<AbiArg> abi = gate_abi(maps, true);
    ASSERT_EQ(abi.size(), classic_abi(maps).size() + 1);
    EXPECT_EQ(std::vector<AbiArg>(abi.begin(), abi.end() - 1), classic_abi(maps));
    EXPECT_EQ(abi.back(), (AbiArg{AbiArgKind::kPointer, AbiValue::kWeightScale}));
    EXPECT_TRUE(validate_abi(abi, maps).ok()) << validate_abi(abi, maps).message();
  }
  EXPECT_EQ(abi_text(gate_abi(false, true)),
            "ptr hidden, ptr weight, ptr attn, ptr out, i64 m, i64 n, i64 k, i64 ld_hidden, i64 ld_weight, "
            "i64 ld_attn, i64 ld_out, ptr weight_scale");
  auto parsed = parse_abi_value("weight_scale");
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  EXPECT_EQ(*parsed, AbiValue::kWeightScale);
  EXPECT_STREQ(abi_value_name(AbiValue::kWeightScale), "weight_scale");
  EXPECT_THAT(parse_abi_value("weight_scales").status().message(), HasSubstr("weight_scale"));

  int h = 0, w = 0, a = 0, o = 0;
  float scales[4] = {};
  LaunchValues v{&h, &w, &a, &o, 3, 1536, 7168, 7168, 7168, 1536, 1536};
  v.weight_scale = scales;
  const std::vector<AbiArg> abi = gate_abi(false, true);
  const LaunchSlots slots = pack_launch_args(abi, v);
  EXPECT_EQ(slots[11], static_cast<void *>(&v.weight_scale));
  EXPECT_EQ(*static_cast<void **>(slots[11]), static_cast<void *>(scales));
  EXPECT_EQ(*static_cast<void **>(slots[1]), &w);
  EXPECT_EQ(slots[12], nullptr);  // nothing past the declared list
  // A list that puts the scales first gets them first.
  const LaunchSlots first = pack_launch_args({{AbiArgKind::kPointer, AbiValue::kWeightScale}}, v);
  EXPECT_EQ(*static_cast<void **>(first[0]), static_cast<void *>(scales));
}

}  // namespace
}  // namespace gatejit
