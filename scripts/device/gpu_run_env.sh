# Sourced by the scripts that run on a GPU machine (scripts/gpu_validate.sh, scripts/device/*.sh), with `run_dir`
# (a folder made by scripts/prepare_validation.sh) and `deadline` (seconds for the whole script) set:
#   left             the seconds left before the deadline (0 once past it)
#   bounded SECS CMD...  CMD with a timeout of min(SECS, time left); skipped (exit 124) when under 5 s are left
#   cuda             the prepared dlsim-cuda; LD_LIBRARY_PATH finds cuDNN and cuBLAS in the Python wheels that
#                    PyTorch brought (namespace packages: __path__, not __file__) and yaml-cpp, ONNX and protobuf
#                    in run_dir/lib
left() { local l=$((deadline - SECONDS)); echo $((l < 0 ? 0 : l)); }
bounded() {
  local t=$1; shift
  local l; l=$(left)
  (( l < 5 )) && { echo "skipped (deadline): $*"; return 124; }
  timeout $((t < l ? t : l)) "$@"
}
libs=$(python3 -c 'import nvidia.cudnn, nvidia.cublas; print(list(nvidia.cudnn.__path__)[0]+"/lib:"+list(nvidia.cublas.__path__)[0]+"/lib")' 2>/dev/null)
export LD_LIBRARY_PATH=${libs}:$run_dir/lib:${LD_LIBRARY_PATH:-}
cuda=$run_dir/dlsim-cuda
