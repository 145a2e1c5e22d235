#pragma once
// Stub: see numeric_types.h.
