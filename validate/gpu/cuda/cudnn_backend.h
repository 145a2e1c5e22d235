#pragma once
// cuDNN's backend (graph) API, cudnnBackend* of cudnn.h, behind a thin interface: the real one forwards to
// cuDNN, a test's fake records what was set and plays cuDNN's answers (cudnn_graph_conv_test.cc), so that the
// descriptors the graph path builds are checked without a GPU. BackendDesc owns one descriptor.
#include <cudnn.h>

#include <cstdint>
#include <string>
#include <vector>

namespace dlsim::cuda {

class CudnnBackend {
 public:
  virtual ~CudnnBackend() = default;
  virtual cudnnStatus_t create(cudnnBackendDescriptorType_t type, cudnnBackendDescriptor_t* d) = 0;
  virtual cudnnStatus_t destroy(cudnnBackendDescriptor_t d) = 0;
  virtual cudnnStatus_t set(cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t name,
                            cudnnBackendAttributeType_t type, int64_t count, const void* values) = 0;
  virtual cudnnStatus_t get(cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t name,
                            cudnnBackendAttributeType_t type, int64_t requested, int64_t* count, void* values) = 0;
  virtual cudnnStatus_t finalize(cudnnBackendDescriptor_t d) = 0;
  virtual cudnnStatus_t execute(cudnnHandle_t h, cudnnBackendDescriptor_t plan, cudnnBackendDescriptor_t pack) = 0;
};

// The one that calls cuDNN.
CudnnBackend& cudnn_backend();

// One backend descriptor, destroyed with its owner. Failures throw CudaError naming the attribute and `ctx`.
class BackendDesc {
 public:
  BackendDesc(CudnnBackend& api, cudnnBackendDescriptorType_t type, std::string ctx);
  ~BackendDesc();
  BackendDesc(BackendDesc&& o) noexcept;
  BackendDesc& operator=(BackendDesc&& o) noexcept;
  BackendDesc(const BackendDesc&) = delete;
  BackendDesc& operator=(const BackendDesc&) = delete;

  cudnnBackendDescriptor_t get() const { return d_; }
  void set(cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type, int64_t count, const void* values);
  void set_int64s(cudnnBackendAttributeName_t name, const std::vector<int64_t>& v) {
    set(name, CUDNN_TYPE_INT64, static_cast<int64_t>(v.size()), v.data());
  }
  void set_desc(cudnnBackendAttributeName_t name, const BackendDesc& d) {
    const cudnnBackendDescriptor_t p = d.get();
    set(name, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &p);
  }
  void finalize();
  cudnnStatus_t try_finalize();  // the status, without throwing (a plan that cuDNN does not support)
  // Reads an attribute; returns the element count cuDNN reports. Throws on failure.
  int64_t get(cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type, int64_t requested, void* values) const;
  CudnnBackend& api() const { return *api_; }

 private:
  CudnnBackend* api_;
  cudnnBackendDescriptor_t d_ = nullptr;
  std::string ctx_;
};

}  // namespace dlsim::cuda
