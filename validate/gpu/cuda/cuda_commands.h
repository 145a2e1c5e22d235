#pragma once
// dlsim-cuda's command line (devices, run, microbench), as a function so that main() only catches.
#include <ostream>
#include <string>
#include <vector>

namespace dlsim::cuda {

int main_with_args(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace dlsim::cuda
