#include "rules/serving/shell_words.h"

#include "rules/serving/launch_env.h"
#include "text/templated.h"

#include <algorithm>
#include <array>
#include <iterator>
#include <tuple>
#include <unordered_map>
#include <utility>

#include <nlohmann/json.hpp>

namespace gpuguard {

using nlohmann::json;

bool isDynamicWord(std::string_view s) { return s.find('$') != std::string_view::npos || text::looksTemplated(s); }

std::string_view commandBaseName(std::string_view s) {
  auto slash = s.rfind('/');
  return slash == std::string_view::npos ? s : s.substr(slash + 1);
}

namespace {

// Scripts longer than this are not read (no real launch script is).
constexpr std::size_t kMaxScript = 256 * 1024;

using Token = ShellWord;
using Command = ShellCommand;

bool isShell(std::string_view s) {
  const std::string_view b = commandBaseName(s);
  return b == "sh" || b == "bash" || b == "dash" || b == "ash" || b == "zsh" || b == "ksh";
}

// Splits a shell script into simple commands (`;`, `&&`, `||`, `|`, `&`,
// newlines and parentheses separate them) of words with quotes removed.
// Expansions are kept as written and mark the word dynamic. Here-document
// bodies (POSIX "Here-Document": the lines after `<<WORD` up to WORD) are
// skipped: they are data fed to a command, not commands. Each command is
// tagged with the branches it sits in (if/elif/else, case, `||`), so that a
// reader can tell launches of which at most one runs.
class ScriptSplitter {
 public:
  ScriptSplitter(std::string_view script, const FieldPath& path) : s_(script), path_(path) {}

  std::pair<std::vector<Command>, std::vector<ShellBranchPath>> split() && {
    for (i_ = 0; i_ < s_.size(); ++i_) take(s_[i_]);
    endCommand();
    if (commands_.back().empty()) commands_.pop_back();
    return {std::move(commands_), std::move(branches_)};
  }

 private:
  // An open construct of which at most one branch runs.
  struct Frame {
    enum class Kind { If, Case, OrList } kind;
    ShellBranch at;
  };

  struct HereDocument {
    std::string delimiter;
    bool stripTabs = false;  // <<-: leading tabs of body lines and of the delimiter line are removed
  };

  char next() const { return i_ + 1 < s_.size() ? s_[i_ + 1] : '\0'; }

  void take(char c) {
    if (c == '\\') {
      escaped();
    } else if (c == '\'') {
      inWord_ = true;
      for (++i_; i_ < s_.size() && s_[i_] != '\''; ++i_) word_.text += s_[i_];
    } else if (c == '"') {
      doubleQuoted();
    } else if (c == '$') {
      expansion();
    } else if (c == '`') {
      inWord_ = true;
      word_.dynamic = true;
      word_.text += c;
      for (++i_; i_ < s_.size() && s_[i_] != '`'; ++i_) word_.text += s_[i_];
      word_.text += '`';
    } else if (c == '#' && !inWord_) {
      while (i_ < s_.size() && s_[i_] != '\n') ++i_;
      if (i_ < s_.size()) newline();
    } else if (c == '<' && next() == '<') {
      hereDocumentOperator();
    } else if (c == ' ' || c == '\t' || c == '\r' || c == '<' || c == '>') {
      endWord();
    } else {
      takeOperatorOrCharacter(c);
    }
  }

  void takeOperatorOrCharacter(char c) {
    if (c == '\n') {
      newline();
    } else if (c == '|' && next() == '|') {
      ++i_;
      orOperator();
    } else if (c == '&' && next() == '&') {
      ++i_;
      endCommand();
      listContinues_ = true;
    } else if (c == ';' && next() == ';') {
      ++i_;
      endCommand();
      nextCaseItem();
    } else if (c == ';' || c == '&' || c == '|' || c == '(' || c == ')') {
      endCommand();
      if (c == ';' || c == '&' || c == ')') closeOrList();
      listContinues_ = c == '|';
    } else {
      word_.text += c;
      inWord_ = true;
    }
  }

  void escaped() {
    if (i_ + 1 < s_.size() && s_[i_ + 1] == '\n') {
      ++i_;  // line continuation
    } else if (i_ + 1 < s_.size()) {
      word_.text += s_[++i_];
      inWord_ = true;
    }
  }

  void doubleQuoted() {
    inWord_ = true;
    for (++i_; i_ < s_.size() && s_[i_] != '"'; ++i_) {
      if (s_[i_] == '\\' && i_ + 1 < s_.size() && std::string_view("\"\\$`\n").find(s_[i_ + 1]) != std::string_view::npos) {
        if (s_[i_ + 1] != '\n') word_.text += s_[i_ + 1];
        ++i_;
      } else {
        if (s_[i_] == '$' || s_[i_] == '`') word_.dynamic = true;
        word_.text += s_[i_];
      }
    }
  }

  void expansion() {
    inWord_ = true;
    word_.dynamic = true;
    if (i_ + 1 < s_.size() && (s_[i_ + 1] == '(' || s_[i_ + 1] == '{')) {
      word_.text += '$';
      ++i_;
      takeGroup(s_[i_], s_[i_] == '(' ? ')' : '}');
    } else {
      word_.text += '$';
    }
  }

  // Appends s[i..] up to the bracket closing the one at s[i] ($( ... ), ${ ... }).
  void takeGroup(char open, char close) {
    int depth = 0;
    for (; i_ < s_.size(); ++i_) {
      word_.text += s_[i_];
      if (s_[i_] == open) ++depth;
      else if (s_[i_] == close && --depth == 0) return;
    }
  }

  // At the first `<` of `<<`: reads the delimiter word (quotes removed) of
  // `<<WORD` or `<<-WORD`; its body starts on the next line. `<<<` (bash's
  // here-string) takes one word on the same line: an ordinary word.
  void hereDocumentOperator() {
    endWord();
    ++i_;
    if (next() == '<') {
      ++i_;
      return;
    }
    HereDocument doc;
    if (next() == '-') {
      doc.stripTabs = true;
      ++i_;
    }
    while (next() == ' ' || next() == '\t') ++i_;
    constexpr std::string_view kWordEnds = " \t\r\n;&|()<>";
    for (char c = next(); c != '\0' && kWordEnds.find(c) == std::string_view::npos; c = next()) {
      ++i_;
      if (c == '\'' || c == '"') {
        for (++i_; i_ < s_.size() && s_[i_] != c; ++i_) doc.delimiter += s_[i_];
      } else if (c == '\\' && i_ + 1 < s_.size()) {
        doc.delimiter += s_[++i_];
      } else {
        doc.delimiter += c;
      }
    }
    if (!doc.delimiter.empty()) pendingHereDocuments_.push_back(std::move(doc));
  }

  // At a newline outside quotes: the command ends, and the bodies of the
  // here-documents opened on this line follow.
  void newline() {
    endCommand();
    if (!listContinues_) closeOrList();
    for (const HereDocument& doc : pendingHereDocuments_) skipHereDocumentBody(doc);
    pendingHereDocuments_.clear();
  }

  // From the newline at i: skips the body lines and the delimiter line,
  // leaving i at the newline that ends it (or at the end of the script).
  void skipHereDocumentBody(const HereDocument& doc) {
    while (i_ < s_.size()) {
      const std::size_t begin = i_ + 1;
      std::size_t end = s_.find('\n', begin);
      if (end == std::string_view::npos) end = s_.size();
      std::string_view line = s_.substr(begin, end - begin);
      if (doc.stripTabs) line.remove_prefix(std::min(line.find_first_not_of('\t'), line.size()));
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      i_ = end;
      if (line == doc.delimiter) return;
    }
  }

  void endWord() {
    if (inWord_) {
      if (commands_.back().empty()) reservedWord(word_.text);
      word_.path = path_;
      commands_.back().push_back(std::move(word_));
      listContinues_ = false;
    }
    word_ = Token{};
    inWord_ = false;
  }

  // Whether a command ended (not an empty one).
  bool endCommand() {
    endWord();
    if (commands_.back().empty()) return false;
    branches_.emplace_back();
    for (const Frame& f : frames_) branches_.back().push_back(f.at);
    commands_.emplace_back();
    return true;
  }

  // A reserved word opening a command: where the commands after it run.
  // The word itself stays in the command (the launch readers scan past it).
  void reservedWord(std::string_view w) {
    if (w == "if" || w == "case") {
      closeOrList();
      const Frame::Kind kind = w == "if" ? Frame::Kind::If : Frame::Kind::Case;
      if (frames_.size() < kMaxNesting) frames_.push_back({kind, {constructs_++, 0}});
    } else if (w == "elif" || w == "else") {
      closeOrList();
      if (!frames_.empty() && frames_.back().kind == Frame::Kind::If) ++frames_.back().at.branch;
    } else if (w == "fi" || w == "esac") {
      closeOrList();
      if (!frames_.empty() && frames_.back().kind != Frame::Kind::OrList) frames_.pop_back();
    } else if (w == "then" || w == "do" || w == "done" || w == "{" || w == "}") {
      closeOrList();
    }
  }

  // `a || b`: b runs only when a fails. The command before the operator
  // joins the list's first branch.
  void orOperator() {
    const bool ended = endCommand();
    listContinues_ = true;
    if (frames_.empty() || frames_.back().kind != Frame::Kind::OrList) {
      if (frames_.size() >= kMaxNesting) return;
      frames_.push_back({Frame::Kind::OrList, {constructs_++, 0}});
      if (ended) branches_.back().push_back(frames_.back().at);
    }
    ++frames_.back().at.branch;
  }

  void closeOrList() {
    if (!frames_.empty() && frames_.back().kind == Frame::Kind::OrList) frames_.pop_back();
  }

  // `;;` ends a case item: the next item is another branch.
  void nextCaseItem() {
    closeOrList();
    if (!frames_.empty() && frames_.back().kind == Frame::Kind::Case) ++frames_.back().at.branch;
  }

  // Deeper nesting than any launch script: further constructs are not tracked.
  static constexpr std::size_t kMaxNesting = 32;

  std::string_view s_;
  const FieldPath& path_;
  std::size_t i_ = 0;
  std::vector<Command> commands_ = std::vector<Command>(1);
  std::vector<ShellBranchPath> branches_;
  std::vector<Frame> frames_;
  std::vector<HereDocument> pendingHereDocuments_;
  unsigned constructs_ = 0;
  bool listContinues_ = false;  // after `&&`, `||` or `|`: a newline does not end the and-or list
  Token word_;
  bool inWord_ = false;
};


std::vector<Token> listTokens(const json& list, const FieldPath& path, const EnvValues& env) {
  std::vector<Token> out;
  if (!list.is_array()) return out;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const json& v = list[i];
    Token t;
    if (v.is_string()) t.text = expandEnvReferences(v.get<std::string>(), env);
    else if (v.is_number_integer() || v.is_number_unsigned()) t.text = v.dump();
    else continue;
    t.dynamic = isDynamicWord(t.text);
    t.path = path.index(i);
    out.push_back(std::move(t));
  }
  return out;
}

// --- what argv runs: wrappers, then a shell's options -----------------------

// How a wrapper's options are written: the short and long ones that take a
// value (attached, or as the next word), and the short ones that change what
// runs in a way we do not follow (env -S splits a string into words).
struct WrapperSyntax {
  std::string_view shortWithValue;
  std::span<const std::string_view> longWithValue;
  std::string_view unreadable;
};

// The index of the first word after a wrapper's options (`--` consumed);
// argv.size() when an unreadable option is among them.
std::size_t afterWrapperOptions(const ShellCommand& argv, std::size_t i, const WrapperSyntax& syntax) {
  for (; i < argv.size(); ++i) {
    const std::string_view w = argv[i].text;
    if (w == "--") return i + 1;
    if (w == "-") continue;  // env: the same as -i
    if (w.size() < 2 || w[0] != '-') return i;
    if (w[1] == '-') {  // --long, --long=value or --long value
      if (std::ranges::find(syntax.longWithValue, w) != syntax.longWithValue.end()) ++i;
      if (w.starts_with("--split-string") && !syntax.unreadable.empty()) return argv.size();
      continue;
    }
    for (std::size_t k = 1; k < w.size(); ++k) {
      if (syntax.unreadable.find(w[k]) != std::string_view::npos) return argv.size();
      if (syntax.shortWithValue.find(w[k]) == std::string_view::npos) continue;
      if (k + 1 == w.size()) ++i;  // `-u NAME`: the value is the next word (else the rest of this one)
      break;
    }
  }
  return argv.size();
}

}  // namespace

// The program argv runs past the wrappers that exec their operands:
// `env [-i] [-u NAME] [NAME=VALUE]... PROGRAM`, `tini [-s -g -p SIG] -- PROGRAM`,
// `dumb-init [-c] [-r s:r] -- PROGRAM` (their --help; coreutils env(1)).
// Wrappers may nest (`tini -- env A=1 bash -c ...`). env -S splits a
// string we do not read: then argv runs nothing we can see (argv.size()).
std::size_t wrappedProgram(const ShellCommand& argv) {
  static constexpr std::array<std::string_view, 2> kEnvLong{"--unset", "--chdir"};
  static constexpr std::array<std::string_view, 1> kDumbInitLong{"--rewrite"};
  static constexpr WrapperSyntax kEnv{"uC", kEnvLong, "S"};
  static constexpr WrapperSyntax kTini{"pe", {}, {}};
  static constexpr WrapperSyntax kDumbInit{"r", kDumbInitLong, {}};
  std::size_t i = 0;
  for (int wrappers = 0; i < argv.size() && wrappers < 8; ++wrappers) {
    const std::string_view name = commandBaseName(argv[i].text);
    if (name == "env") {
      i = afterWrapperOptions(argv, i + 1, kEnv);
      while (i < argv.size() && argv[i].text.find('=') != std::string::npos && argv[i].text[0] != '=') ++i;
    } else if (name == "tini" || name == "tini-static") {
      i = afterWrapperOptions(argv, i + 1, kTini);
    } else if (name == "dumb-init") {
      i = afterWrapperOptions(argv, i + 1, kDumbInit);
    } else {
      break;
    }
  }
  return i;
}

// The -c script of a POSIX shell or bash started as argv[shell] (bash(1)
// "OPTIONS"; POSIX sh: `sh -c [-abCefhimnuvx] [-o option]... [+...]
// command_string [command_name [argument...]]`): options are combined short
// flags after `-` or `+` (`-euxo`), each `o` or `O` taking the next word as
// its value (`-o pipefail`); bash's long options (`--login`, `--rcfile FILE`)
// come too; `--` or `-` ends them. With -c among them, the first word after
// the options is the script.
std::optional<std::size_t> shellScriptIndex(const ShellCommand& argv, std::size_t shell) {
  bool commandMode = false;
  std::size_t i = shell + 1;
  while (i < argv.size()) {
    const std::string& w = argv[i].text;
    if (w == "--" || w == "-") {
      ++i;
      break;
    }
    if (w.starts_with("--")) {
      i += (w == "--rcfile" || w == "--init-file") ? 2 : 1;
      continue;
    }
    if (w.size() < 2 || (w[0] != '-' && w[0] != '+')) break;
    std::size_t values = 0;  // words the `o`/`O` flags of this cluster take
    for (std::size_t k = 1; k < w.size(); ++k) {
      if (w[k] == 'c' && w[0] == '-') commandMode = true;
      if (w[k] == 'o' || w[k] == 'O') ++values;
    }
    i += 1 + values;
  }
  if (!commandMode || i >= argv.size()) return std::nullopt;
  return i;
}

namespace {

// Whether the list at `it` holds a string with a '$' (what expandEnvReferences changes).
bool holdsDollar(json::const_iterator it, json::const_iterator end) {
  if (it == end || !it->is_array()) return false;
  return std::any_of(it->begin(), it->end(), [](const json& v) {
    return v.is_string() && v.get_ref<const std::string&>().find('$') != std::string::npos;
  });
}

}  // namespace

ContainerCommands containerCommands(const ContainerRef& container) {
  const json& c = *container.container;
  auto command = c.find("command");
  auto args = c.find("args");
  ContainerCommands out;
  out.hasCommand = command != c.end() && command->is_array() && !command->empty();
  // Only a word with a '$' can name an env var ($(VAR)): without one the
  // env's values are not read at all.
  const bool mayExpand = holdsDollar(command, c.end()) || holdsDollar(args, c.end());
  const EnvValues env = mayExpand ? literalEnvValues(c) : EnvValues{};
  if (out.hasCommand) out.argv = listTokens(*command, container.path.field("command"), env);
  if (args != c.end()) {
    std::vector<Token> a = listTokens(*args, container.path.field("args"), env);
    out.argv.insert(out.argv.end(), std::make_move_iterator(a.begin()), std::make_move_iterator(a.end()));
  }
  // A shell runs its -c script (none when it runs no -c script).
  const ShellCommand& argv = out.argv;
  const std::size_t first = wrappedProgram(argv);
  if (argv.size() > first && isShell(argv[first].text)) {
    out.runsShell = true;
    if (const std::optional<std::size_t> at = shellScriptIndex(argv, first)) {
      if (argv[*at].text.size() <= kMaxScript) {
        std::tie(out.script, out.scriptBranches) = ScriptSplitter(argv[*at].text, argv[*at].path).split();
      }
    }
  }
  return out;
}

bool anyTwoInAlternativeBranches(const ContainerCommands& commands, std::span<const std::size_t> indexes) {
  // The branch of each construct where a given command was first seen: a
  // command in another branch of it is an alternative to that one.
  std::unordered_map<unsigned, unsigned> seenBranch;
  for (std::size_t index : indexes) {
    if (index >= commands.scriptBranches.size()) continue;
    for (const ShellBranch& b : commands.scriptBranches[index]) {
      const auto [at, fresh] = seenBranch.emplace(b.construct, b.branch);
      if (!fresh && at->second != b.branch) return true;
    }
  }
  return false;
}

}  // namespace gpuguard
