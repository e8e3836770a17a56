#include "core/summary.hpp"

#include "core/compare.hpp"

namespace tscoll {

namespace {

Value *find_member(Value::Object &object, const std::string &key) {
    for (Member &m : object)
        if (m.key == key)
            return &m.value;
    return nullptr;
}

// direction: -1 keeps minima, +1 keeps maxima.
void fold(Value &summary, const Value &v, int direction) {
    if (summary.is(Value::Kind::Object) && v.is(Value::Kind::Object)) {
        Value::Object &fields = summary.as_object();
        for (const Member &m : v.as_object()) {
            if (Value *existing = find_member(fields, m.key))
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

}  // namespace

void fold_min(Value &summary, const Value &v) {
    fold(summary, v, -1);
}

void fold_max(Value &summary, const Value &v) {
    fold(summary, v, +1);
}

bool Schema::compatible(const Value &measurement) const {
    return compatible(root_, measurement);
}

void Schema::add(const Value &measurement) {
    add(root_, measurement);
}

bool Schema::compatible(const Node &node, const Value &v) {
    if (node.type_class < 0)
        return true;
    if (node.type_class != type_class(v))
        return false;
    if (v.is(Value::Kind::Object)) {
        for (const Member &m : v.as_object())
            for (const auto &[key, child] : node.fields)
                if (key == m.key && !compatible(child, m.value))
                    return false;
    } else if (v.is(Value::Kind::Array)) {
        const Value::Array &elements = v.as_array();
        for (size_t i = 0; i < elements.size() && i < node.elements.size(); i++)
            if (!compatible(node.elements[i], elements[i]))
                return false;
    }
    return true;
}

void Schema::add(Node &node, const Value &v) {
    node.type_class = type_class(v);
    if (v.is(Value::Kind::Object)) {
        for (const Member &m : v.as_object()) {
            Node *child = nullptr;
            for (auto &[key, existing] : node.fields)
                if (key == m.key)
                    child = &existing;
            if (child == nullptr)
                child = &node.fields.emplace_back(m.key, Node{}).second;
            add(*child, m.value);
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
