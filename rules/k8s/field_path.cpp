#include "rules/k8s/field_path.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <new>
#include <vector>

namespace gpuguard {

// One step of a path. The name's characters follow the struct in the same
// allocation, so a segment costs exactly one allocation whatever its length.
// The count is atomic because a path may be copied on several threads (the
// webhook judges requests concurrently); segments are never modified.
struct FieldPath::Segment {
  const Segment* parent;  // owned: one reference held by this segment
  mutable std::atomic<std::size_t> references;
  std::size_t index;
  std::size_t nameSize;
  Kind kind;

  std::string_view name() const { return {reinterpret_cast<const char*>(this + 1), nameSize}; }
};

FieldPath::FieldPath(const FieldPath& other) noexcept : last_(other.last_) { retain(last_); }

FieldPath::FieldPath(FieldPath&& other) noexcept : last_(other.last_) { other.last_ = nullptr; }

FieldPath& FieldPath::operator=(const FieldPath& other) noexcept {
  retain(other.last_);  // first: `other` may be *this
  release(last_);
  last_ = other.last_;
  return *this;
}

FieldPath& FieldPath::operator=(FieldPath&& other) noexcept {
  if (this != &other) {
    release(last_);
    last_ = other.last_;
    other.last_ = nullptr;
  }
  return *this;
}

FieldPath::~FieldPath() { release(last_); }

void FieldPath::retain(const Segment* s) noexcept {
  if (s) s->references.fetch_add(1, std::memory_order_relaxed);
}

// Iterative, not recursive: a long path must not exhaust the stack when freed.
void FieldPath::release(const Segment* s) noexcept {
  while (s && s->references.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    const Segment* parent = s->parent;
    s->~Segment();
    ::operator delete(const_cast<Segment*>(s));
    s = parent;
  }
}

FieldPath FieldPath::extended(Kind kind, std::string_view name, std::size_t index) const {
  void* memory = ::operator new(sizeof(Segment) + name.size());
  retain(last_);
  Segment* s = new (memory) Segment{last_, 1, index, name.size(), kind};
  name.copy(reinterpret_cast<char*>(s + 1), name.size());
  return FieldPath(s);
}

FieldPath FieldPath::field(std::string_view name) const { return extended(Kind::Field, name, 0); }
FieldPath FieldPath::index(std::size_t i) const { return extended(Kind::Index, {}, i); }
FieldPath FieldPath::key(std::string_view k) const { return extended(Kind::Key, k, 0); }

namespace {

// The segments of a path, root first.
template <typename Segment>
std::vector<const Segment*> rootFirst(const Segment* last) {
  std::vector<const Segment*> out;
  for (const Segment* s = last; s; s = s->parent) out.push_back(s);
  return {out.rbegin(), out.rend()};
}

}  // namespace

std::string FieldPath::apiPath() const {
  std::string out;
  for (const Segment* s : rootFirst(last_)) {
    switch (s->kind) {
      case Kind::Field:
        if (!out.empty()) out += '.';
        out += s->name();
        break;
      case Kind::Index:
        out += '[';
        out += std::to_string(s->index);
        out += ']';
        break;
      case Kind::Key:
        out += '[';
        out += s->name();
        out += ']';
        break;
    }
  }
  return out;
}

std::string FieldPath::jsonPointer() const {
  std::string out;
  for (const Segment* s : rootFirst(last_)) {
    out += '/';
    out += s->kind == Kind::Index ? std::to_string(s->index) : escapeJsonPointerToken(s->name());
  }
  return out;
}

std::vector<FieldPath::Step> FieldPath::segments() const {
  std::vector<Step> out;
  for (const Segment* s : rootFirst(last_)) out.push_back({s->kind, s->name(), s->index});
  return out;
}

namespace {

// [A-Za-z][A-Za-z0-9_]*: a field name the API server's paths write bare.
bool isIdentifier(std::string_view s) {
  auto letter = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); };
  if (s.empty() || !letter(s.front())) return false;
  return std::all_of(s.begin(), s.end(), [&](char c) { return letter(c) || (c >= '0' && c <= '9') || c == '_'; });
}

}  // namespace

FieldPath FieldPath::fromPointer(std::string_view pointer, const nlohmann::json& root) {
  std::vector<std::string> tokens;
  for (JsonPointerTokens reader(pointer); !reader.done();) tokens.push_back(reader.next());
  return fromTokens(tokens, root);
}

std::string FieldPath::tokenOf(const Step& step) {
  return step.kind == Kind::Index ? std::to_string(step.index) : std::string(step.name);
}

FieldPath FieldPath::fromTokens(const std::vector<std::string>& tokens, const nlohmann::json& root) {
  FieldPath path;
  const nlohmann::json* node = &root;
  for (const std::string& token : tokens) {
    if (node && node->is_array()) {
      std::size_t index = 0;
      std::from_chars(token.data(), token.data() + token.size(), index);
      path = path.index(index);
      node = index < node->size() ? &(*node)[index] : nullptr;
      continue;
    }
    path = isIdentifier(token) ? path.field(token) : path.key(token);
    const nlohmann::json* next = nullptr;
    if (node && node->is_object()) {
      const auto it = node->find(token);
      if (it != node->end()) next = &*it;
    }
    node = next;
  }
  return path;
}

const nlohmann::json* stepInto(const nlohmann::json& node, const FieldPath::Step& step) {
  if (step.kind == FieldPath::Step::Kind::Index) {
    return node.is_array() && step.index < node.size() ? &node[step.index] : nullptr;
  }
  if (!node.is_object()) return nullptr;
  const auto it = node.find(step.name);
  return it != node.end() ? &*it : nullptr;
}

FieldPath PathTrail::toFieldPath() const {
  std::size_t depth = 0;
  for (const PathTrail* t = this; t->kind_ != Kind::Root; t = t->parent_) ++depth;
  // The steps root first; the walks' trails are a few dozen steps at most, so
  // they fit on the stack without a heap allocation per path made.
  std::array<const PathTrail*, 32> onStack;
  std::vector<const PathTrail*> onHeap;
  const PathTrail** steps = onStack.data();
  if (depth > onStack.size()) {
    onHeap.resize(depth);
    steps = onHeap.data();
  }
  std::size_t i = depth;
  for (const PathTrail* t = this; t->kind_ != Kind::Root; t = t->parent_) steps[--i] = t;
  FieldPath path;
  for (i = 0; i < depth; ++i) {
    const PathTrail& t = *steps[i];
    switch (t.kind_) {
      case Kind::Field: path = path.field(t.name_); break;
      case Kind::Index: path = path.index(t.index_); break;
      case Kind::Key: path = path.key(t.name_); break;
      case Kind::Root: break;
    }
  }
  return path;
}

}  // namespace gpuguard
