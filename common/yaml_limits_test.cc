#include "common/yaml_limits.h"

#include <catch2/catch.hpp>

#include <string>

#include "common/config_error.h"
#include "common/yaml_reader.h"

using namespace dlsim;

namespace {
// The error parse_yaml_text gives for `text`; fails the test when there is none.
ConfigError refusal(const std::string& text) {
  try {
    parse_yaml_text(text, "in.yaml");
  } catch (const ConfigError& e) {
    return e;
  }
  FAIL("accepted: " << text.substr(0, 80));
  return ConfigError("", 0, "", "");
}
}  // namespace

TEST_CASE("an alias inside the node it names is a cycle, refused with its line and key path") {
  // Issue 27: these 11 bytes segfaulted every loader (yaml-cpp builds a cyclic graph; every walk recursed).
  const ConfigError direct = refusal("a: &o [*o]\n");
  CHECK(direct.file() == "in.yaml");
  CHECK(direct.line() == 1);
  CHECK(direct.key() == "a[0]");
  CHECK(direct.message() ==
        "the alias *o stands for the node anchored &o at line 1, which holds the alias: a cycle, which no dlsim input "
        "can be");
  // Through mappings and lists, in block style: the alias's own line and where it sits.
  const ConfigError deep = refusal("model: resnet50\nroot: &r\n  child:\n    - x\n    - {y: *r}\n");
  CHECK(deep.line() == 5);
  CHECK(deep.key() == "root.child[1].y");
  CHECK_THAT(deep.message(), Catch::Contains("anchored &r at line 2"));
  // A mapping anchored and named inside itself, the document's root, a key in a key's place.
  CHECK_THAT(refusal("&m {a: *m}\n").what(), Catch::Contains("a cycle"));
  CHECK_THAT(refusal("&top\n- *top\n").what(), Catch::Contains("a cycle"));
  const ConfigError key = refusal("a: &k {*k : 1}\n");
  CHECK(key.key() == "a");
  CHECK_THAT(key.message(), Catch::Contains("a cycle"));
  CHECK_THAT(refusal("a: &k {[x, {y: *k}]: 1}\n").what(), Catch::Contains("a cycle"));
  // A name anchored again: an alias means the latest anchor of the name, here the open one.
  CHECK_THAT(refusal("a: &o [1]\nb: &o [*o]\n").what(), Catch::Contains("in.yaml:2: 'b[0]'"));
  // The same as JSON (config.json is read as YAML): a JSON file may hold YAML's anchors too.
  CHECK_THAT(refusal("{\"model_type\": &t [*t]}").what(), Catch::Contains("a cycle"));
}

TEST_CASE("aliases of a node that has closed are trees, read and counted as expanded") {
  const YAML::Node ok = parse_yaml_text("a: &o [1, 2]\nb: [*o, *o]\nc: {k: *o}\n", "ok.yaml");
  CHECK(ok["b"][1][1].as<int>() == 2);
  CHECK(ok["c"]["k"][0].as<int>() == 1);
  // The count is exact: levels of ten aliases of the level below. l0 is 11 nodes, l1 111, ..., l4 111,111; with
  // the root mapping and the five keys, 123,461 nodes, within the limit. l5 (1,111,111 nodes) passes it at its
  // eighth alias (123,463 + 8 x 111,111), on its line.
  std::string text = "l0: &l0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i <= 4; ++i) {
    text += "l" + std::to_string(i) + ": &l" + std::to_string(i) + " [";
    for (int k = 0; k < 10; ++k) text += (k ? ", *l" : "*l") + std::to_string(i - 1);
    text += "]\n";
  }
  CHECK_NOTHROW(parse_yaml_text(text, "fine.yaml"));
  const ConfigError e = refusal(text + "l5: &l5 [*l4, *l4, *l4, *l4, *l4, *l4, *l4, *l4, *l4, *l4]\n");
  CHECK(e.line() == 6);
  CHECK(e.key() == "l5[7]");
  CHECK(e.message() == "the document stands for more than 1000000 nodes once its aliases (*name) are expanded: refused");
}

TEST_CASE("nesting is bounded: a hundred levels read, one more is refused at once, whatever the depth") {
  auto flow = [](int depth) { return "a: " + std::string(static_cast<size_t>(depth), '[') + std::string(static_cast<size_t>(depth), ']') + "\n"; };
  // The root mapping is one level: 99 lists inside it make 100.
  CHECK_NOTHROW(parse_yaml_text(flow(kMaxYamlNesting - 1), "ok.yaml"));
  const ConfigError e = refusal(flow(kMaxYamlNesting));
  CHECK(e.line() == 1);
  CHECK(e.key() == "a[0][0][0][0][0]...[0][0]");  // 99 steps, the middle elided
  CHECK(e.message() == "lists and mappings nested more than 100 deep: refused (no dlsim input needs more than a few levels)");
  // 100,000 levels (issue 27's probe): refused as quickly, before yaml-cpp's parser recursion goes deep.
  CHECK_THAT(refusal(flow(100000)).what(), Catch::Contains("nested more than 100 deep"));
  std::string block;
  for (int i = 0; i < 100000; ++i) block += "- ";
  CHECK_THAT(refusal(block + "x\n").what(), Catch::Contains("nested more than 100 deep"));
  std::string maps;
  for (int i = 0; i < 100000; ++i) maps += "{a: ";
  CHECK_THAT(refusal(maps).what(), Catch::Contains("nested more than 100 deep"));
}

TEST_CASE("keys are names, strings one line of printable text, prose may break lines") {
  const YAML::Node listed = parse_yaml_text("{[a, b]: 1}\n", "k.yaml");
  CHECK_THROWS_WITH(YamlMap(listed, "k.yaml").check_keys({"a"}), "k.yaml:1: a key must be a name, got a list");
  const YAML::Node mapped = parse_yaml_text("pool: {? {x: 1} : 2}\n", "k.yaml");
  CHECK_THROWS_WITH(YamlMap(mapped["pool"], "k.yaml", "pool").check_keys({"name"}),
                    "k.yaml:1: 'pool': a key must be a name, got a mapping");
  CHECK_THROWS_WITH(YamlMap(parse_yaml_text("\"a\\tb\": 1\n", "k.yaml"), "k.yaml").check_keys({"a"}),
                    "k.yaml:1: a control character (U+0009) in a key");

  const YAML::Node doc = parse_yaml_text("name: \"two\\nlines\"\nnote: |\n  two\n  lines\nbell: \"\\a\"\n", "s.yaml");
  const YamlMap m(doc, "s.yaml");
  CHECK_THROWS_WITH(m.get_string("name"),
                    "s.yaml:1: 'name': a control character (U+000A) in a name or value: it must be one line of "
                    "printable text");
  CHECK_THROWS_WITH(m.get_string("note"), Catch::Contains("U+000A"));
  CHECK(m.get_text("note") == "two\nlines\n");
  CHECK_THROWS_WITH(m.get_text("bell"), "s.yaml:5: 'bell': a control character (U+0007) in a text: only line breaks "
                                        "and tabs may be in one");
  CHECK(YamlMap(parse_yaml_text("name: résumé-1\n", "u.yaml"), "u.yaml").get_string("name") == "résumé-1");
}

TEST_CASE("numbers are finite, booleans one of the spellings the error lists") {
  const YamlMap m(parse_yaml_text("a: nan\nb: .inf\nc: -inf\nd: 1e999\ne: 2.5\nf: NaN\n", "n.yaml"), "n.yaml");
  CHECK_THROWS_WITH(m.get_double("a"), "n.yaml:1: 'a': expected a finite number, got 'nan'");
  CHECK_THROWS_WITH(m.get_double("b"), "n.yaml:2: 'b': expected a number, got '.inf'");
  CHECK_THROWS_WITH(m.get_double("c"), "n.yaml:3: 'c': expected a finite number, got '-inf'");
  CHECK_THROWS_WITH(m.get_double("d"), "n.yaml:4: 'd': expected a finite number, got '1e999'");
  CHECK(m.get_double("e") == 2.5);
  CHECK_THROWS_WITH(m.get_double("f"), Catch::Contains("expected a finite number"));
  const YamlMap b(parse_yaml_text("a: yes\nb: False\nc: on\n", "b.yaml"), "b.yaml");
  CHECK(b.get_bool("a"));
  CHECK_FALSE(b.get_bool("b"));
  CHECK_THROWS_WITH(b.get_bool("c"), "b.yaml:3: 'c': expected a boolean (true, True, yes, false, False, no), got 'on'");
}

TEST_CASE("a file that is a folder is named as one") {
  CHECK_THROWS_WITH(load_yaml_file(DLSIM_SOURCE_DIR), std::string(DLSIM_SOURCE_DIR) + ": is a folder, not a file");
  CHECK_THROWS_WITH(load_yaml_file(std::string(DLSIM_SOURCE_DIR) + "/no-such.yaml"), Catch::Contains("cannot open: No such file or directory"));
}
