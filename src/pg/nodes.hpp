// PostgreSQL node trees from C++: PostgreSQL 15 declares tree walkers and
// mutators without parameters, and copyObject with typeof; C++ needs these
// spelled out.
#pragma once

extern "C" {
#include "postgres.h"
#include "nodes/nodes.h"
}

namespace tscoll::pg {

template <typename Context>
auto walker(bool (*f)(Node *, Context *)) {
    return reinterpret_cast<bool (*)()>(reinterpret_cast<void (*)()>(f));
}

template <typename Context>
auto mutator(Node *(*f)(Node *, Context *)) {
    return reinterpret_cast<Node *(*)()>(reinterpret_cast<void (*)()>(f));
}

template <typename T>
T *copy_node(const T *node) {
    return static_cast<T *>(copyObjectImpl(node));
}

}  // namespace tscoll::pg
