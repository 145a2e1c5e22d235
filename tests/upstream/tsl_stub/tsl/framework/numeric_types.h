#pragma once
// Stub: allocator.h includes TSL's numeric types (Eigen's half, bfloat16) for typed allocation helpers the BFC
// allocator does not use.
