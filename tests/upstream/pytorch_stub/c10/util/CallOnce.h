#pragma once
// Stand-in for c10/util/CallOnce.h (upstream replay).
#include <mutex>
namespace c10 {
using once_flag = std::once_flag;
using std::call_once;
}  // namespace c10
