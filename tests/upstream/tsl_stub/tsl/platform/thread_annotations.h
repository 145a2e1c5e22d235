#pragma once
// Stub: Clang's thread-safety annotations, which GCC does not check.
#define TF_EXCLUSIVE_LOCKS_REQUIRED(...)
#define TF_GUARDED_BY(x)
#define TF_NO_THREAD_SAFETY_ANALYSIS
