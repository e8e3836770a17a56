#include "core/summary.hpp"

#include <functional>

#include "core/compare.hpp"

namespace tscoll {

namespace {

// Measurements of a series mostly list their fields in one order: the
// member at `hint` is tried first.
Value *find_member(Value::Object &object, size_t hint, const std::string &key) {
    if (hint < object.size() && object[hint].key == key)
        return &object[hint].value;
    for (Member &m : object)
        if (m.key == key)
            return &m.value;
    return nullptr;
}

// direction: -1 keeps minima, +1 keeps maxima.
void fold(Value &summary, const Value &v, int direction) {
    if (summary.is(Value::Kind::Object) && v.is(Value::Kind::Object)) {
        Value::Object &fields = summary.as_object();
        const Value::Object &members = v.as_object();
        for (size_t i = 0; i < members.size(); i++) {
            const Member &m = members[i];
            if (Value *existing = find_member(fields, i, m.key))
                fold(*existing, m.value, direction);
            else
                fields.push_back(m);
        }
    } else if (summary.is(Value::Kind::Array) && v.is(Value::Kind::Array)) {
        Value::Array &elements = summary.as_array();
        const Value::Array &incoming = v.as_array();
        for (size_t i = 0; i < incoming.size(); i++) {
            if (i < elements.size())
                fold(elements[i], incoming[i], direction);
            else
                elements.push_back(incoming[i]);
        }
    } else if (compare_values(v, summary) * direction > 0) {
        summary = v;
    }
}

// The position of the first of the least (direction -1) or greatest (+1)
// of values[from...] by `key` (an optional machine value), when every one
// has a key; nullopt otherwise, or for an empty range.
template <typename Key>
std::optional<size_t> extreme_by(const std::vector<Value> &values, size_t from, int direction,
                                 Key key) {
    if (from >= values.size())
        return std::nullopt;
    auto extreme = key(values[from]);
    if (!extreme)
        return std::nullopt;
    size_t best = from;
    for (size_t i = from + 1; i < values.size(); i++) {
        auto k = key(values[i]);
        if (!k)
            return std::nullopt;
        if (direction > 0 ? *k > *extreme : *k < *extreme) {
            best = i;
            extreme = k;
        }
    }
    return best;
}

// The same for a column of numbers with an ordering_double or of dates:
// a column of readings or times is folded by comparing machine values,
// and the fold takes only that value.
std::optional<size_t> extreme_value(const std::vector<Value> &values, size_t from, int direction) {
    if (from < values.size() && values[from].is(Value::Kind::Date))
        return extreme_by(values, from, direction, [](const Value &v) {
            return v.is(Value::Kind::Date) ? std::optional<UnixMicros>(v.as_date()) : std::nullopt;
        });
    return extreme_by(values, from, direction, [](const Value &v) {
        return v.is(Value::Kind::Number) ? v.as_number().ordering_double() : std::nullopt;
    });
}

void fold_field(Value &summary, const std::string &name, const std::vector<Value> &values,
                int direction) {
    if (values.empty())
        return;
    size_t from = 0;
    Value::Object &fields = summary.as_object();
    Value *existing = find_member(fields, fields.size(), name);
    if (existing == nullptr) {
        fields.push_back(Member{name, values[from++]});
        existing = &fields.back().value;
    }
    if (std::optional<size_t> i = extreme_value(values, from, direction)) {
        fold(*existing, values[*i], direction);
        return;
    }
    for (size_t i = from; i < values.size(); i++)
        fold(*existing, values[i], direction);
}

}  // namespace

void fold_min(Value &summary, const Value &v) {
    fold(summary, v, -1);
}

void fold_max(Value &summary, const Value &v) {
    fold(summary, v, +1);
}

void fold_min(Value &summary, const std::string &field, const std::vector<Value> &values) {
    fold_field(summary, field, values, -1);
}

void fold_max(Value &summary, const std::string &field, const std::vector<Value> &values) {
    fold_field(summary, field, values, +1);
}

Schema::Fit Schema::fit(const Value &measurement) const {
    return fit(root_, measurement);
}

void Schema::add(const Value &measurement) {
    add(root_, measurement);
}

void Schema::add_field(const std::string &name, const std::vector<Value> &values) {
    Node *node = child(root_, root_.fields.size(), name);
    if (node == nullptr)
        node = &root_.fields.emplace_back(name, Node{}).second;
    for (const Value &v : values)
        add(*node, v);
}

uint64_t Schema::fingerprint(const Node &node) {
    auto mix = [](uint64_t h, uint64_t x) { return (h ^ x) * 0x100000001b3ull; };
    uint64_t h = mix(0xcbf29ce484222325ull, static_cast<uint64_t>(node.type_class + 1));
    // Fields summed, so that their order does not count; elements in order.
    uint64_t fields = 0;
    for (const auto &[name, child] : node.fields)
        fields += mix(std::hash<std::string>()(name), fingerprint(child));
    h = mix(h, fields);
    for (const Node &element : node.elements)
        h = mix(h, fingerprint(element));
    return h;
}

template <typename N>
N *Schema::child(N &node, size_t hint, const std::string &key) {
    if (hint < node.fields.size() && node.fields[hint].first == key)
        return &node.fields[hint].second;
    for (auto &[name, child] : node.fields)
        if (name == key)
            return &child;
    return nullptr;
}

// An unseen node has no children: add() sets a node's class as it
// creates the node's children.
Schema::Fit Schema::fit(const Node &node, const Value &v) {
    if (node.type_class < 0)
        return Fit::New;
    if (node.type_class != type_class(v))
        return Fit::Conflict;
    Fit result = Fit::Known;
    auto meet = [&result](Fit f) {
        if (f != Fit::Known)
            result = f;
        return f != Fit::Conflict;
    };
    if (v.is(Value::Kind::Object)) {
        const Value::Object &members = v.as_object();
        for (size_t i = 0; i < members.size(); i++) {
            const Node *known = child(node, i, members[i].key);
            if (!meet(known == nullptr ? Fit::New : fit(*known, members[i].value)))
                return Fit::Conflict;
        }
    } else if (v.is(Value::Kind::Array)) {
        const Value::Array &elements = v.as_array();
        for (size_t i = 0; i < elements.size(); i++)
            if (!meet(i < node.elements.size() ? fit(node.elements[i], elements[i]) : Fit::New))
                return Fit::Conflict;
    }
    return result;
}

void Schema::add(Node &node, const Value &v) {
    node.type_class = type_class(v);
    if (v.is(Value::Kind::Object)) {
        const Value::Object &members = v.as_object();
        for (size_t i = 0; i < members.size(); i++) {
            Node *known = child(node, i, members[i].key);
            if (known == nullptr)
                known = &node.fields.emplace_back(members[i].key, Node{}).second;
            add(*known, members[i].value);
        }
    } else if (v.is(Value::Kind::Array)) {
        const Value::Array &elements = v.as_array();
        if (node.elements.size() < elements.size())
            node.elements.resize(elements.size());
        for (size_t i = 0; i < elements.size(); i++)
            add(node.elements[i], elements[i]);
    }
}

}  // namespace tscoll
