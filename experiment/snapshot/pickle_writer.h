#pragma once
// Python's pickle format (protocol 2), for the values JSON has: dict, list, str, int, float, bool, None. Written
// so that files meant for Python tools (PyTorch's memory snapshot, read by torch.cuda._memory_viz and
// pytorch.org/memory_viz) come straight from C++; Debian has no C++ pickle library. Only the opcodes a protocol-2
// unpickler needs for these types are used, and no memo: nothing is shared, so nothing needs a back-reference.
#include <nlohmann/json.hpp>

#include <string>

namespace dlsim {

// The pickled bytes of `v`: a JSON object becomes a dict with str keys, an array a list, integers Python ints
// (any size nlohmann holds), floats Python floats. Deterministic: objects keep nlohmann's key order (sorted).
std::string to_pickle(const nlohmann::json& v);

}  // namespace dlsim
