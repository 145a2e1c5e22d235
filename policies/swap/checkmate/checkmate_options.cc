#include "policies/swap/checkmate/checkmate_options.h"

#include "common/config_error.h"

namespace dlsim {

const ParamBindings<CheckmateOptions>& CheckmateOptions::parameters() {
  using O = CheckmateOptions;
  static const auto b = ParamBindings<O>()
      .add_all(&O::limit, MemoryLimit::parameters())
      .add("time_limit_s", &O::time_limit_s,
           "CBC's time limit in seconds of elapsed time (the best plan found by then, with its gap); on a coarse graph "
           "the whole plan's, its solves and the baselines' plans included",
           ParamCheck::in_range(0.01, 86400))
      .add("max_ops", &O::max_ops,
           "the most ops of a graph the MILP is built for op by op: a larger graph is solved on a coarse graph of "
           "coarse_nodes nodes (coarsen: auto) or refused (coarsen: never)",
           ParamCheck::in_range(1, 100000))
      .add("coarse_nodes", &O::coarse_nodes,
           "the most nodes of the coarse graph: contiguous segments of the issue order, each re-run whole (the MILP "
           "grows with the square of its nodes; 40 solves in seconds to a minute here)",
           ParamCheck::in_range(2, 100000))
      .add_choice("coarsen", &O::coarsen,
                  ParamChoices<CheckmateCoarsen>{{"auto", CheckmateCoarsen::Auto}, {"always", CheckmateCoarsen::Always},
                                                 {"never", CheckmateCoarsen::Never}},
                  "auto (a graph above max_ops is coarsened), always (every graph is, into segments of one op when it "
                  "has at most coarse_nodes ops) or never (a graph above max_ops is an error)")
      .add("solver_nodes", &O::solver_nodes,
           "on a coarse graph, CBC stops after this many branch-and-bound nodes (0: none), so that the plan is the "
           "same on any machine that does not reach time_limit_s first",
           ParamCheck::in_range(0, 100000000))
      .add_choice("solve", &O::lp_rounding, ParamChoices<bool>{{"milp", false}, {"lp-rounding", true}},
                  "milp (the exact MILP, stopped at the time limit) or lp-rounding (the LP relaxation, rounded)")
      .add("swap", &O::swap,
           "the MILP may also copy values to host memory and back over the link, beside recomputing them")
      .add("compare_baselines", &O::compare_baselines,
           "set the plan beside dtr's, capuchin's and checkpoint's at the same budget and run theirs when it is better "
           "(the report's `baselines` and `baseline_chosen`)")
      .add("model_file", &O::model_file,
           "also write the MILP in CPLEX LP format to this file, for another solver or a look (empty: no file)")
      .rule([](const O& o) {
        if (o.swap && o.lp_rounding)
          throw ConfigError("", 0, "swap", "swap: true is solved by the exact MILP only; use solve: milp (the rounding "
                                           "keeps or re-runs values, it has no rule for copies)");
        if (o.swap && o.coarsen == CheckmateCoarsen::Always)
          throw ConfigError("", 0, "swap",
                            "swap: true is solved on the op-level graph only; use coarsen: auto or never");
      });
  return b;
}

}  // namespace dlsim
