#include "validate/gpu/cuda/cudnn_backend.h"

#include <utility>

#include "validate/gpu/cuda/cuda_check.h"

namespace dlsim::cuda {

namespace {

class RealBackend final : public CudnnBackend {
 public:
  cudnnStatus_t create(cudnnBackendDescriptorType_t type, cudnnBackendDescriptor_t* d) override {
    return cudnnBackendCreateDescriptor(type, d);
  }
  cudnnStatus_t destroy(cudnnBackendDescriptor_t d) override { return cudnnBackendDestroyDescriptor(d); }
  cudnnStatus_t set(cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type,
                    int64_t count, const void* values) override {
    return cudnnBackendSetAttribute(d, name, type, count, values);
  }
  cudnnStatus_t get(cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type,
                    int64_t requested, int64_t* count, void* values) override {
    return cudnnBackendGetAttribute(d, name, type, requested, count, values);
  }
  cudnnStatus_t finalize(cudnnBackendDescriptor_t d) override { return cudnnBackendFinalize(d); }
  cudnnStatus_t execute(cudnnHandle_t h, cudnnBackendDescriptor_t plan, cudnnBackendDescriptor_t pack) override {
    return cudnnBackendExecute(h, plan, pack);
  }
};

}  // namespace

CudnnBackend& cudnn_backend() {
  static RealBackend real;
  return real;
}

BackendDesc::BackendDesc(CudnnBackend& api, cudnnBackendDescriptorType_t type, std::string ctx)
    : api_(&api), ctx_(std::move(ctx)) {
  const cudnnStatus_t st = api_->create(type, &d_);
  if (st != CUDNN_STATUS_SUCCESS)  // the message is built only on failure: variant packs are made per launch
    check(st, "cudnnBackendCreateDescriptor", ctx_ + ", descriptor type " + std::to_string(type));
}

BackendDesc::~BackendDesc() {
  if (d_) api_->destroy(d_);  // cannot throw here; a failure would only leak the descriptor
}

BackendDesc::BackendDesc(BackendDesc&& o) noexcept : api_(o.api_), d_(std::exchange(o.d_, nullptr)), ctx_(std::move(o.ctx_)) {}

BackendDesc& BackendDesc::operator=(BackendDesc&& o) noexcept {
  if (this != &o) {
    if (d_) api_->destroy(d_);
    api_ = o.api_;
    d_ = std::exchange(o.d_, nullptr);
    ctx_ = std::move(o.ctx_);
  }
  return *this;
}

void BackendDesc::set(cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type, int64_t count,
                      const void* values) {
  const cudnnStatus_t st = api_->set(d_, name, type, count, values);
  if (st != CUDNN_STATUS_SUCCESS) check(st, "cudnnBackendSetAttribute", ctx_ + ", attribute " + std::to_string(name));
}

void BackendDesc::finalize() { check(api_->finalize(d_), "cudnnBackendFinalize", ctx_); }

cudnnStatus_t BackendDesc::try_finalize() { return api_->finalize(d_); }

int64_t BackendDesc::get(cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type, int64_t requested,
                         void* values) const {
  int64_t n = 0;
  const cudnnStatus_t st = api_->get(d_, name, type, requested, &n, values);
  if (st != CUDNN_STATUS_SUCCESS) check(st, "cudnnBackendGetAttribute", ctx_ + ", attribute " + std::to_string(name));
  return n;
}

}  // namespace dlsim::cuda
