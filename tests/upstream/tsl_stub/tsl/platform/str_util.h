#pragma once
// Stub of tsl/platform/str_util.h: bfc_allocator.cc includes it but calls nothing from it.
