# Sourced by scripts/test.sh --sanitize and scripts/fuzz.sh: the one sanitizer build, so that the two scripts
# configure build-asan/ identically and the fuzz step reuses what the tests built. clang (libFuzzer needs it),
# ASan + UBSan with any report fatal, the libFuzzer targets too (-DDLSIM_FUZZ=ON); -O1 with line tables: faster
# tests and fuzzing than -O0, and symbolised file:line in every sanitizer report.
sanitize_build_dir=build-asan
sanitize_cmake_args=(
  -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=None "-DCMAKE_CXX_FLAGS=-O1 -gline-tables-only"
  -DDLSIM_SANITIZE=ON -DDLSIM_FUZZ=ON -DDLSIM_WITH_CUDA=OFF -DDLSIM_BUILD_BENCHMARKS=OFF
)
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
