// What a bucket knows about its measurements without reading them:
// control.min/max (element-wise) and the schema whose change closes a
// bucket (doc/REFERENCE.md, Bucketing: rule 5, schema change).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/value.hpp"

namespace tscoll {

// Folds a measurement into a running minimum or maximum. Objects merge field
// by field and arrays element by element, recursively; any other pair keeps
// the smaller (or larger) value in MongoDB's order.
void fold_min(Value &summary, const Value &v);
void fold_max(Value &summary, const Value &v);
// The same for the values of one field, in measurement order: as folding
// the measurements they come from.
void fold_min(Value &summary, const std::string &field, const std::vector<Value> &values);
void fold_max(Value &summary, const std::string &field, const std::vector<Value> &values);

// The type class of every field seen so far, per nesting level.
class Schema {
  public:
    // How `measurement` (an object) meets the fields seen so far: it
    // conflicts with one (another type class), or agrees with all of them
    // and either names only fields seen (Known) or some new ones (New).
    enum class Fit { Conflict, Known, New };
    Fit fit(const Value &measurement) const;
    bool compatible(const Value &measurement) const { return fit(measurement) != Fit::Conflict; }
    // Records the measurement's fields; call only when compatible. A Known
    // measurement adds nothing: its callers skip the walk.
    void add(const Value &measurement);
    // Records one field's values, in measurement order, as adding the
    // measurements they come from would (once a measurement was added).
    void add_field(const std::string &name, const std::vector<Value> &values);
    // Equal for equal schemas, whatever order their fields were seen in.
    uint64_t fingerprint() const { return fingerprint(root_); }

  private:
    struct Node {
        int type_class = -1;                               // -1: not seen
        std::vector<std::pair<std::string, Node>> fields;  // objects
        std::vector<Node> elements;                        // arrays
    };
    // The node of field `key`, tried first at position `hint`; or nullptr.
    // (Node or const Node.)
    template <typename N>
    static N *child(N &node, size_t hint, const std::string &key);
    static Fit fit(const Node &node, const Value &v);
    static uint64_t fingerprint(const Node &node);
    static void add(Node &node, const Value &v);
    Node root_;
};

}  // namespace tscoll
