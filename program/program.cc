#include "program/program.h"

namespace dlsim {

const char* to_string(CmdKind k) {
  switch (k) {
    case CmdKind::Launch: return "launch";
    case CmdKind::Alloc: return "alloc";
    case CmdKind::Free: return "free";
    case CmdKind::CopyOut: return "copy_out";
    case CmdKind::CopyIn: return "copy_in";
    case CmdKind::RecordEvent: return "record_event";
    case CmdKind::WaitEvent: return "wait_event";
    case CmdKind::SyncEvent: return "sync_event";
    case CmdKind::RecordStream: return "record_stream";
    case CmdKind::HostCompute: return "host_compute";
  }
  return "?";
}

}  // namespace dlsim
