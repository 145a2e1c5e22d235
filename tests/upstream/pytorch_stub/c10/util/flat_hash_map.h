#pragma once
// Stand-in for c10/util/flat_hash_map.h (upstream replay): the standard unordered containers. The allocator's
// decisions never depend on their iteration order for the traces replayed (no cross-stream events, no graphs).
#include <unordered_map>
#include <unordered_set>
namespace ska {
template <typename K, typename V, typename H = std::hash<K>>
using flat_hash_map = std::unordered_map<K, V, H>;
template <typename K, typename H = std::hash<K>>
using flat_hash_set = std::unordered_set<K, H>;
}  // namespace ska
