// yaml_to_json_builder.h's Builder: placing each node in its parent and
// recording where it was written, maps and sequences, anchors and aliases,
// and go-yaml's merge keys ("<<").
#include <algorithm>
#include <charconv>
#include <string>
#include <utility>

#include "yaml/yaml_to_json_builder.h"

namespace gpuguard::yaml::detail::builder {

void Builder::registerAnchor(YAML::anchor_t anchor) {
  if (!anchor) return;
  if (anchors_.size() <= anchor) anchors_.resize(anchor + 1);
  anchors_[anchor] = AnchorRecord{};
  anchors_[anchor].name = std::move(pendingAnchorName_);
  pendingAnchorName_.clear();
}

void Builder::setKey(Frame& f, std::string key, Position keyPos) {
  f.key = std::move(key);
  f.keyPos = keyPos;
  f.expectKey = false;
  f.keyIsMerge = false;
  ptr_.resize(f.ptrLen);
  ptr_ += '/';
  appendJsonPointerToken(ptr_, f.key);
}

void Builder::setMergeKey(Frame& f, Position keyPos) {
  f.keyPos = keyPos;
  f.expectKey = false;
  f.keyIsMerge = true;
  --decodes_;  // go-yaml never decodes the "<<" key itself
}

ChildIndex& Builder::childIndex(Frame& f) {
  if (!f.children) {
    f.children = std::make_unique<ChildIndex>();
    indexEntries(*f.children, log_, f.ptrLen, f.logStart, log_.size());
  }
  return *f.children;
}

void Builder::closeOpenChild(ChildIndex& index) const {
  if (!index.open) return;
  index.open = false;
  if (index.openBegin < log_.size()) index.ranges[index.openToken].push_back({index.openBegin, log_.size()});
}

void Builder::indexEntries(ChildIndex& index, const std::vector<LogEntry>& log, std::size_t ptrLen, std::size_t begin,
                           std::size_t end) {
  std::vector<ChildIndex::Range>* ranges = nullptr;
  std::string_view current;
  for (std::size_t i = begin; i < end; ++i) {
    if (!log[i].live) continue;
    const std::string_view p = log[i].pointer;
    if (p.size() <= ptrLen) continue;  // the map itself
    const std::string_view token = p.substr(ptrLen + 1, p.find('/', ptrLen + 1) - (ptrLen + 1));
    if (ranges && token == current) {  // dead entries in between stay dead
      ranges->back().end = i + 1;
      continue;
    }
    ranges = &index.ranges[std::string(token)];
    ranges->push_back({i, i + 1});
    current = token;
  }
}

void Builder::killSubtree(Frame& f, std::string_view key) {
  ChildIndex& index = childIndex(f);
  closeOpenChild(index);
  std::string token;
  appendJsonPointerToken(token, key);
  const auto it = index.ranges.find(token);
  if (it == index.ranges.end()) return;
  // Every entry of a range is the child or below it: all go.
  for (const ChildIndex::Range& r : it->second)
    for (std::size_t i = r.begin; i < std::min(r.end, log_.size()); ++i) log_[i].live = false;
  index.ranges.erase(it);
}

void Builder::reportDuplicate(Frame& f, const std::string& key) {
  ChildIndex& index = childIndex(f);
  closeOpenChild(index);
  std::string pointer = pointerOf(f);
  pointer += '/';
  appendJsonPointerToken(pointer, key);
  int firstLine = 0;
  const auto it = index.ranges.find(pointer.substr(f.ptrLen + 1));
  // The last live entry of the key itself (the child's own node; the ones
  // below it have longer pointers).
  if (it != index.ranges.end())
    for (auto r = it->second.rbegin(); r != it->second.rend() && firstLine == 0; ++r)
      for (std::size_t i = std::min(r->end, log_.size()); i-- > r->begin;)
        if (log_[i].live && log_[i].pointer.size() == pointer.size()) {
          firstLine = log_[i].origin.keyPosition.line;
          break;
        }
  std::string message = "mapping key \"" + key + "\" already defined" +
                        (firstLine > 0 ? " at line " + std::to_string(firstLine) : std::string()) +
                        (lim_.rejectDuplicateKeys ? "" : "; kubectl keeps the last value");
  if (lim_.rejectDuplicateKeys) fail(f.keyPos, std::move(message));
  doc_->warnings.push_back(ParseWarning{f.keyPos, std::move(message), std::move(pointer), ParseWarning::Kind::DuplicateKey});
}

json* Builder::mapSlot(Frame& f) {
  auto& obj = f.value->get_ref<json::object_t&>();
  auto [it, inserted] = obj.try_emplace(std::move(f.key));
  if (!inserted) {
    bool explicitBefore = !f.hadMerge || f.explicitKeys->count(it->first) > 0;
    if (explicitBefore) reportDuplicate(f, it->first);
    killSubtree(f, it->first);
    it->second = nullptr;
  }
  if (f.hadMerge) f.explicitKeys->insert(it->first);
  if (f.children) {  // the child's entries, from its own, go to its range
    ChildIndex& index = *f.children;
    closeOpenChild(index);
    index.openToken.clear();
    appendJsonPointerToken(index.openToken, it->first);
    index.openBegin = log_.size();
    index.open = true;
  }
  return &it->second;
}

json* Builder::placeNode(const YAML::Mark& mark, json&& v, NodeOrigin&& origin) {
  Frame* f = top();
  if (!f) {
    doc_->value = std::move(v);
    ptr_.clear();
    addEntry(std::move(origin));
    return &doc_->value;
  }
  if (f->kind == Frame::Kind::Seq) {
    if (f->role == Frame::Role::MergeSeq) failWantMap(mark);
    auto& arr = f->value->get_ref<json::array_t&>();
    arr.push_back(std::move(v));
    ptr_.resize(f->ptrLen);
    ptr_ += '/';
    char buf[24];
    auto res = std::to_chars(buf, buf + sizeof buf, f->index++);
    ptr_.append(buf, res.ptr);
    addEntry(std::move(origin));
    return &arr.back();
  }
  if (f->keyIsMerge) failWantMap(mark);
  json* slot = mapSlot(*f);
  *slot = std::move(v);
  if (frames_.size() == 1 && ptr_ == "/items") ++rootItemsKeys_;
  origin.keyPosition = f->keyPos;
  addEntry(std::move(origin));
  f->expectKey = true;
  return slot;
}

void Builder::placeScalar(const YAML::Mark& mark, json&& v, NodeOrigin&& origin, YAML::anchor_t anchor) {
  json* slot = placeNode(mark, std::move(v), std::move(origin));
  if (anchor) recordAnchor(anchor, *slot, log_.size() - 1, ptr_, 1, 0);
  if (top() && top()->listItems) handOverItem(log_.size() - 1);
}

bool Builder::isListItems(const Frame* parent, Frame::Kind kind) const {
  return itemSink_ && kind == Frame::Kind::Seq && frames_.size() == 1 && parent == &frames_.front() &&
         parent->kind == Frame::Kind::Map && ptr_ == "/items";
}

void Builder::handOverItem(std::size_t logStart) {
  Frame& items = frames_.back();
  auto& array = items.value->get_ref<json::array_t&>();
  const std::size_t position = array.size() - 1;
  // "/items/<position>": what every pointer of the item starts with.
  const std::size_t prefix = items.ptrLen + 1 + std::to_string(position).size();
  Document item;
  item.index = doc_->index;
  item.value = std::move(array.back());
  array.back() = nullptr;
  std::vector<SourceMap::Entry> entries;
  entries.reserve(log_.size() - logStart);
  for (std::size_t i = logStart; i < log_.size(); ++i) {
    if (log_[i].live) entries.push_back(SourceMap::Entry{log_[i].pointer.substr(prefix), std::move(log_[i].origin)});
  }
  log_.resize(logStart);
  item.sources = SourceMap::fromEntries(std::move(entries));
  if (const NodeOrigin* root = item.sources.find("")) item.start = root->position;
  auto& warnings = doc_->warnings;
  for (std::size_t w = items.warningStart; w < warnings.size(); ++w) {
    item.warnings.push_back(std::move(warnings[w]));
    item.warnings.back().pointer.erase(0, prefix);
  }
  warnings.resize(items.warningStart);
  ++handedOver_;
  itemSink_->item(position, item);
}

void Builder::openContainer(const YAML::Mark& mark, Frame::Kind kind, YAML::anchor_t anchor, bool flow) {
  countDecode(mark);
  checkTabs(mark);
  registerAnchor(anchor);
  Frame* parent = top();
  if (parent && parent->kind == Frame::Kind::Map && parent->expectKey)
    fail(position(mark), std::string("invalid map key: a ") + (kind == Frame::Kind::Map ? "mapping" : "sequence") +
                             " cannot be a key (kubectl fails with \"invalid map key\")");
  if (frames_.size() + 1 > lim_.maxDepth) failTooDeep(mark);
  Frame nf;
  nf.kind = kind;
  nf.flow = flow;
  nf.anchor = anchor;
  nf.decodesAtStart = decodes_ - 1;
  nf.logStart = log_.size();
  nf.start = position(mark);
  json empty = kind == Frame::Kind::Map ? json::object() : json::array();
  if (parent && parent->kind == Frame::Kind::Map && parent->keyIsMerge) {  // "<<: {...}" / "<<: [...]"
    if (kind == Frame::Kind::Map) {
      nf.role = Frame::Role::MergeMap;
      nf.owned = std::make_unique<json>(std::move(empty));
      nf.value = nf.owned.get();
    } else {
      nf.role = Frame::Role::MergeSeq;
      --decodes_;  // go-yaml walks this sequence's items without decoding the sequence
    }
    nf.ptrLen = parent->ptrLen;
  } else if (parent && parent->kind == Frame::Kind::Seq && parent->role == Frame::Role::MergeSeq) {
    if (kind != Frame::Kind::Map) failWantMap(mark);
    nf.role = Frame::Role::MergeItem;
    nf.owned = std::make_unique<json>(std::move(empty));
    nf.value = nf.owned.get();
    nf.ptrLen = parent->ptrLen;
  } else {
    NodeOrigin origin;
    origin.position = nf.start;
    nf.value = placeNode(mark, std::move(empty), std::move(origin));
    nf.ptrLen = ptr_.size();
    if (isListItems(parent, kind)) {
      nf.listItems = true;
      nf.warningStart = doc_->warnings.size();
      ++itemSequences_;
      itemsAnchored_ = itemsAnchored_ || anchor != 0;
    }
  }
  frames_.push_back(std::move(nf));
}

std::vector<RelEntry> Builder::extractEntries(std::size_t logStart, std::size_t prefixLen) {
  std::vector<RelEntry> out;
  for (std::size_t i = logStart; i < log_.size(); ++i) {
    if (!log_[i].live) continue;
    log_[i].live = false;
    out.push_back(RelEntry{log_[i].pointer.substr(prefixLen), std::move(log_[i].origin)});
  }
  return out;
}

void Builder::closeContainer() {
  Frame f = std::move(frames_.back());
  frames_.pop_back();
  const std::size_t depth = 1 + f.maxChildDepth;
  Frame* parent = top();
  switch (f.role) {
    case Frame::Role::Normal:
      if (f.anchor) recordAnchor(f.anchor, *f.value, f.logStart, pointerOf(f), decodes_ - f.decodesAtStart, depth);
      if (parent) parent->maxChildDepth = std::max(parent->maxChildDepth, depth);
      if (parent && parent->listItems) handOverItem(f.logStart);
      return;
    case Frame::Role::MergeMap:
    case Frame::Role::MergeItem: {
      MergeSource src;
      src.value = std::move(*f.owned);
      src.entries = extractEntries(f.logStart, f.ptrLen);
      src.depth = depth;
      if (f.anchor) {
        AnchorRecord& a = anchors_[f.anchor];
        a.value = src.value;
        a.entries = src.entries;
        a.decodes = decodes_ - f.decodesAtStart;
        a.depth = depth;
        a.done = true;
      }
      if (f.role == Frame::Role::MergeItem) {
        parent->sources.push_back(std::move(src));
      } else {
        applyMerge(*parent, src);
        parent->keyIsMerge = false;
        parent->expectKey = true;
      }
      return;
    }
    case Frame::Role::MergeSeq: {
      // Step backwards as go-yaml does: earlier maps take precedence.
      for (auto it = f.sources.rbegin(); it != f.sources.rend(); ++it) applyMerge(*parent, *it);
      if (f.anchor) {
        AnchorRecord& a = anchors_[f.anchor];
        a.value = json::array();
        for (const MergeSource& s : f.sources) a.value.push_back(s.anchor ? anchors_[s.anchor].value : s.value);
        NodeOrigin o;
        o.position = f.start;
        a.entries.assign(1, RelEntry{"", std::move(o)});
        a.decodes = decodes_ - f.decodesAtStart;
        a.depth = depth;
        a.done = true;
      }
      parent->keyIsMerge = false;
      parent->expectKey = true;
      return;
    }
  }
}

void Builder::applyMerge(Frame& target, const MergeSource& src) {
  const json& sv = src.anchor ? anchors_[src.anchor].value : src.value;
  const std::vector<RelEntry>& se = src.anchor ? anchors_[src.anchor].entries : src.entries;
  auto& obj = target.value->get_ref<json::object_t&>();
  ChildIndex& index = childIndex(target);
  closeOpenChild(index);
  rootMerged_ = rootMerged_ || &target == &frames_.front();
  if (!target.hadMerge) {
    target.hadMerge = true;
    target.explicitKeys = std::make_unique<std::set<std::string, std::less<>>>();
    for (const auto& kv : obj) target.explicitKeys->insert(kv.first);
  }
  for (const auto& [k, v] : sv.get_ref<const json::object_t&>()) {
    auto [it, inserted] = obj.try_emplace(k, v);
    if (!inserted) {
      killSubtree(target, k);
      it->second = v;
    }
  }
  const std::string prefix = pointerOf(target);
  const std::size_t mergedBegin = log_.size();
  for (const RelEntry& e : se)
    if (!e.rel.empty()) log_.push_back(LogEntry{prefix + e.rel, e.origin, true});
  indexEntries(index, log_, target.ptrLen, mergedBegin, log_.size());
  if (src.depth > 0) target.maxChildDepth = std::max(target.maxChildDepth, src.depth - 1);
}

}  // namespace gpuguard::yaml::detail::builder
