#pragma once
// Stub of tsl/platform/macros.h.
#define TF_MUST_USE_RESULT [[nodiscard]]
#define TF_PREDICT_FALSE(x) (x)
#define TF_PREDICT_TRUE(x) (x)
