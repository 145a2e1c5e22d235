#include "common/yaml_limits.h"

#include <map>
#include <sstream>
#include <utility>
#include <vector>

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/mark.h>
#include <yaml-cpp/parser.h>

#include "common/config_error.h"

namespace dlsim {
namespace {

// Follows the parse events with a stack of the open lists and mappings. An alias can only name an anchor met
// before it, and a node that has closed holds nothing after it, so the document has a cycle exactly when an
// alias names an anchor whose node is still open.
class LimitsCheck final : public YAML::EventHandler {
 public:
  explicit LimitsCheck(const std::string& file) : file_(file) {}

  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnAnchor(const YAML::Mark&, const std::string& name) override { anchor_name_ = name; }
  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override { leaf(mark, anchor, "null"); }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor, const std::string& value) override {
    leaf(mark, anchor, value);
  }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    const std::string name = anchor < names_.size() ? names_[anchor] : std::string("?");
    for (const Open& o : open_)
      if (o.anchor == anchor)
        fail(mark, "the alias *" + name + " stands for the node anchored &" + name + " at line " +
                       std::to_string(o.line) + ", which holds the alias: a cycle, which no dlsim input can be");
    add_nodes(mark, anchor < sizes_.size() ? sizes_[anchor] : 1);
    child_done("*" + name);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    open(mark, anchor, false);
  }
  void OnSequenceEnd() override { close(); }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor, YAML::EmitterStyle::value) override {
    open(mark, anchor, true);
  }
  void OnMapEnd() override { close(); }

 private:
  struct Open {
    bool map = false;
    YAML::anchor_t anchor = 0;
    int line = 0;
    uint64_t nodes_before = 0;  // the count before this node: its expanded size is the count at its end less this
    uint64_t children = 0;      // nodes completed inside it; in a mapping keys and values alternate
    std::string key;            // a mapping's last key, for the path in errors
  };

  static int line_of(const YAML::Mark& m) { return m.line >= 0 ? m.line + 1 : 0; }

  // "vary.pool[2]": where the node being read sits. A node in a key's place is given by its mapping's path. A
  // path of more than 10 steps (a nesting past the limit has a hundred) keeps its first 6 and last 2.
  std::string path() const {
    std::vector<std::string> steps;
    for (const Open& o : open_) {
      if (!o.map) {
        steps.push_back("[" + std::to_string(o.children) + "]");
      } else {
        if (o.children % 2 == 0) break;  // the node is (inside) a key
        steps.push_back((steps.empty() ? "" : ".") + o.key);
      }
    }
    std::string p;
    for (size_t i = 0; i < steps.size(); ++i) {
      if (steps.size() > 10 && i == 6) {
        p += "...";
        i = steps.size() - 2;
      }
      p += steps[i];
    }
    return p;
  }

  [[noreturn]] void fail(const YAML::Mark& mark, const std::string& message) const {
    throw ConfigError(file_, line_of(mark), path(), message);
  }

  void add_nodes(const YAML::Mark& mark, uint64_t n) {
    nodes_ += n;
    if (nodes_ > kMaxYamlNodes)
      fail(mark, "the document stands for more than " + std::to_string(kMaxYamlNodes) +
                     " nodes once its aliases (*name) are expanded: refused");
  }

  void name_anchor(YAML::anchor_t anchor) {
    if (anchor == 0) return;
    if (names_.size() <= anchor) names_.resize(anchor + 1);
    names_[anchor] = anchor_name_;
  }

  void set_size(YAML::anchor_t anchor, uint64_t size) {
    if (anchor == 0) return;
    if (sizes_.size() <= anchor) sizes_.resize(anchor + 1, 1);
    sizes_[anchor] = size;
  }

  // The node that was being read in the innermost open node has ended; `text` is what a key shows in paths.
  void child_done(const std::string& text) {
    if (open_.empty()) return;
    Open& o = open_.back();
    if (o.map && o.children % 2 == 0) o.key = text;
    ++o.children;
  }

  void leaf(const YAML::Mark& mark, YAML::anchor_t anchor, const std::string& text) {
    name_anchor(anchor);
    add_nodes(mark, 1);
    set_size(anchor, 1);
    child_done(text);
  }

  void open(const YAML::Mark& mark, YAML::anchor_t anchor, bool map) {
    if (static_cast<int>(open_.size()) >= kMaxYamlNesting)
      fail(mark, "lists and mappings nested more than " + std::to_string(kMaxYamlNesting) +
                     " deep: refused (no dlsim input needs more than a few levels)");
    name_anchor(anchor);
    Open o;
    o.map = map;
    o.anchor = anchor;
    o.line = line_of(mark);
    o.nodes_before = nodes_;
    add_nodes(mark, 1);
    open_.push_back(std::move(o));
  }

  void close() {
    const Open o = std::move(open_.back());
    open_.pop_back();
    set_size(o.anchor, nodes_ - o.nodes_before);
    child_done(o.map ? "<mapping>" : "<list>");
  }

  std::string file_;
  std::vector<Open> open_;
  std::vector<uint64_t> sizes_;     // by anchor id (yaml-cpp numbers anchors from 1): the node's expanded size
  std::vector<std::string> names_;  // by anchor id: its name, for messages
  std::string anchor_name_;         // the name OnAnchor gave, for the node event that follows it
  uint64_t nodes_ = 0;
};

// The expanded size of each collection, walked once; 0 (and ok = false) past a limit or on a cycle.
class TreeWalk {
 public:
  bool ok = true;

  uint64_t size(const YAML::Node& n, int depth) {
    if (!ok) return 0;
    if (!n.IsMap() && !n.IsSequence()) return 1;
    if (depth >= kMaxYamlNesting) return refuse();
    // An alias is its anchored node (yaml-cpp shares it): a node of this position and type walked before is
    // very likely the same, and Node::is says whether it is.
    const std::pair<int, int> at{n.Mark().pos, static_cast<int>(n.Type())};
    if (const auto it = walked_.find(at); it != walked_.end())
      for (const auto& [node, size] : it->second)
        if (node.is(n)) return size;
    for (const YAML::Node& o : open_)
      if (o.is(n)) return refuse();  // a node inside itself
    open_.push_back(n);
    uint64_t total = 1;
    for (const auto& child : n) {
      total += n.IsMap() ? size(child.first, depth + 1) + size(child.second, depth + 1) : size(child, depth + 1);
      if (!ok || total > kMaxYamlNodes) {
        open_.pop_back();
        return refuse();
      }
    }
    open_.pop_back();
    walked_[at].emplace_back(n, total);
    return total;
  }

 private:
  uint64_t refuse() {
    ok = false;
    return 0;
  }

  std::vector<YAML::Node> open_;  // the collections from the root to the one being walked
  std::map<std::pair<int, int>, std::vector<std::pair<YAML::Node, uint64_t>>> walked_;
};

}  // namespace

bool within_yaml_limits(const YAML::Node& root) {
  TreeWalk walk;
  walk.size(root, 0);
  return walk.ok;
}

void check_yaml_limits(const std::string& text, const std::string& file) {
  std::istringstream in(text);
  YAML::Parser parser(in);
  LimitsCheck check(file);
  parser.HandleNextDocument(check);
}

}  // namespace dlsim
