// multi_tensor_apply's launches (workloads/multi_tensor_apply.h) against the rule's cases and against the launches
// validate/torch/membound_kernels.py computes for torchvision's VGG-16 and AlexNet (whose grids the H200's profiled
// steps matched launch for launch, results/fidelity/membound-kernels.md).
#include <catch2/catch.hpp>

#include <numeric>
#include <stdexcept>

#include "workloads/multi_tensor_apply.h"

using namespace dlsim;

namespace {

std::vector<int64_t> grids(const std::vector<MultiTensorLaunch>& v) {
  std::vector<int64_t> out;
  for (const MultiTensorLaunch& l : v) out.push_back(l.blocks);
  return out;
}

}  // namespace

TEST_CASE("multi_tensor_apply: a launch at the list count's tensor limit, the last tensor's chunks all in") {
  const std::vector<int64_t> small(200, 100);
  // one list: 110 tensors a launch; three lists: 48
  const auto one = multi_tensor_launches(small, 1);
  REQUIRE(one.size() == 2);
  CHECK(one[0].tensors == 110);
  CHECK(one[0].closed_by == 109);
  CHECK(one[1].tensors == 90);
  CHECK(one[1].closed_by == 199);
  CHECK(one[1].elements == 9000);
  CHECK(grids(multi_tensor_launches(small, 3)) == std::vector<int64_t>{48, 48, 48, 48, 8});
  CHECK(multi_tensor_launches(small, 2).size() == 4);  // 64, 64, 64, 8
  CHECK(multi_tensor_max_tensors(4) == 36);
  CHECK(multi_tensor_max_tensors(5) == 30);
  CHECK_THROWS_AS(multi_tensor_max_tensors(0), std::invalid_argument);
  CHECK_THROWS_AS(multi_tensor_max_tensors(6), std::invalid_argument);
}

TEST_CASE("multi_tensor_apply: 320 blocks cut a tensor, which is the next launch's first, and empty tensors are skipped") {
  // 1.5 launches' worth of chunks, then a tensor of 10 elements, with empty tensors around
  const std::vector<int64_t> v{0, 480 * kMultiTensorChunk + 7, 0, 10, 0};
  const auto l = multi_tensor_launches(v, 2);
  REQUIRE(l.size() == 2);
  CHECK(l[0] == MultiTensorLaunch{320, 320 * kMultiTensorChunk, kMultiTensorChunk, 1, 1});
  // the rest of the big tensor (160 full chunks and one of 7) and the small one
  CHECK(l[1] == MultiTensorLaunch{162, 160 * kMultiTensorChunk + 7 + 10, kMultiTensorChunk, 2, 3});
  CHECK(multi_tensor_launches({0, 0}, 1).empty());
  CHECK(multi_tensor_launches({}, 1).empty());
}

TEST_CASE("multi_tensor_apply: a tensor that ends exactly on a full table starts no launch of its own") {
  const auto l = multi_tensor_launches({320 * kMultiTensorChunk, 5}, 1);
  REQUIRE(l.size() == 2);
  CHECK(l[0].tensors == 1);
  CHECK(l[1] == MultiTensorLaunch{1, 5, 5, 1, 1});
}

TEST_CASE("multi_tensor_apply: torchvision's VGG-16 and AlexNet as membound_kernels.py cuts them") {
  // torchvision 0.14's parameters, in parameters() order (membound_kernels.py's parameter_numels)
  const std::vector<int64_t> vgg16{1728,    64,   36864,   64,  73728,   128,  147456,    128,  294912, 256,  589824,
                                   256,     589824, 256,   1179648, 512, 2359296, 512,   2359296, 512,    2359296, 512,
                                   2359296, 512,  2359296, 512,   102760448, 4096, 16777216, 4096, 4096000, 1000};
  const std::vector<int64_t> alexnet{23232, 64,       307200, 192,      663552, 384,     884736, 256,
                                     589824, 256, 37748736, 4096, 16777216, 4096, 4096000, 1000};
  for (int lists = 1; lists <= 3; ++lists) {
    INFO("lists " << lists);
    const auto v = multi_tensor_launches(vgg16, lists);
    CHECK(grids(v) == std::vector<int64_t>{320, 320, 320, 320, 320, 320, 211});
    CHECK(v.front().tensors == 27);
    CHECK(v.front().elements == 19892032);
    CHECK(v.back().tensors == 4);
    CHECK(v.back().elements == 13669352);
    int64_t total = 0;
    for (const MultiTensorLaunch& l : v) total += l.elements;
    CHECK(total == std::accumulate(vgg16.begin(), vgg16.end(), int64_t{0}));
    const auto a = multi_tensor_launches(alexnet, lists);
    CHECK(grids(a) == std::vector<int64_t>{320, 320, 303});
    CHECK(a[1].tensors == 3);
    CHECK(a[2].elements == 19698664);
  }
}

TEST_CASE("multi_tensor_apply: each launch charged to the tensor that closed it") {
  const std::vector<int64_t> v{0, 480 * kMultiTensorChunk + 7, 0, 10, 0};
  const auto c = multi_tensor_charges(v, 2, 12);  // 12 bytes an element: three fp32 tensors moved
  REQUIRE(c.size() == v.size());
  CHECK(c[0].launches == 0);
  CHECK(c[1].launches == 1);
  CHECK(c[1].chunk_bytes == kMultiTensorChunk * 12);
  CHECK(c[3].launches == 1);
  CHECK(c[3].chunk_bytes == kMultiTensorChunk * 12);
  CHECK(c[4].launches == 0);
}
