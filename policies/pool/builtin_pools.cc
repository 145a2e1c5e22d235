// The built-in pools, in the order `dlsim list` shows them. Each register_* lives beside its pool.
#include "policies/pool/pool_policy.h"

namespace dlsim {

void register_cuda_malloc(PoolRegistry& r);      // cuda_malloc_pool.cc
void register_cnmem(PoolRegistry& r);            // cnmem_pool.cc
void register_pytorch_caching(PoolRegistry& r);  // pytorch_caching_pool.cc
void register_tf_bfc(PoolRegistry& r);           // tf_bfc_pool.cc
void register_smartpool(PoolRegistry& r);        // smartpool.cc
void register_planned(PoolRegistry& r);          // planned_pool.cc

const PoolRegistry& pool_registry() {
  static const PoolRegistry reg = [] {
    PoolRegistry r("pool");
    register_cuda_malloc(r);
    register_cnmem(r);
    register_pytorch_caching(r);
    register_tf_bfc(r);
    register_smartpool(r);
    register_planned(r);
    return r;
  }();
  return reg;
}

}  // namespace dlsim
