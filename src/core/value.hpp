// A measurement value as the core sees it: JSON's types, plus the two BSON
// types a measurement can carry that JSON lacks: dates (the time field and
// {"$date": ...} values) and ObjectIds (generated _ids). Numbers keep their
// exact decimal text (jsonb's numeric), so no value is ever rounded on its
// way through the core.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "core/date.hpp"
#include "core/number.hpp"
#include "core/objectid.hpp"

namespace tscoll {

struct Member;

class Number {
  public:
    explicit Number(std::string text) : text(std::move(text)) {}
    // A number whose form (exact()) is known from what it is made of.
    static Number of(int64_t i);
    // d must be finite; its text is its shortest.
    static Number of(double d);

    // The exact decimal text, e.g. "12", "1e-7", "12.50". Written again
    // only with the same value (another display scale): exact() is kept.
    std::string text;

    // exact_number(text), worked out once: writers ask it of each number
    // several times (its BSON size, the control's bounds, the codec).
    ExactNumber exact() const;
    // The double that reading the text as float8 gives, when the number is
    // exactly an integer or a double.
    std::optional<double> float8() const;
    // A double that orders the number exactly among the numbers that have
    // one: an integer or a double (exactly its text) of magnitude below
    // 2^53, where every integer is exactly a double; nullopt otherwise.
    std::optional<double> ordering_double() const;

    bool operator==(const Number &o) const { return text == o.text; }

  private:
    enum class Form : uint8_t { Unknown, Integer, Real, Neither };
    mutable Form form_ = Form::Unknown;
    mutable int64_t integer_ = 0;
    mutable double real_ = 0;
};

class Value {
  public:
    using Array = std::vector<Value>;
    using Object = std::vector<Member>;  // key order as given
    enum class Kind { Null, Bool, Number, String, Array, Object, Date, ObjectId };

    Value() = default;
    static Value null() { return Value(); }
    static Value boolean(bool b) { return Value(std::in_place_type<bool>, b); }
    static Value number(std::string text) {
        return Value(std::in_place_type<Number>, std::move(text));
    }
    static Value number(int64_t n) { return Value(std::in_place_type<Number>, Number::of(n)); }
    static Value real(double d) { return Value(std::in_place_type<Number>, Number::of(d)); }
    static Value string(std::string s) {
        return Value(std::in_place_type<std::string>, std::move(s));
    }
    static Value array(Array a = {}) { return Value(std::in_place_type<Array>, std::move(a)); }
    static Value object(Object o = {}) { return Value(std::in_place_type<Object>, std::move(o)); }
    static Value date(UnixMicros t) { return Value(std::in_place_type<DateValue>, DateValue{t}); }
    static Value objectid(const ObjectId &id) { return Value(std::in_place_type<ObjectId>, id); }

    Kind kind() const { return static_cast<Kind>(v_.index()); }
    bool is(Kind k) const { return kind() == k; }
    // The name MongoDB uses for this type in error messages.
    const char *type_name() const;

    bool as_bool() const { return std::get<bool>(v_); }
    const Number &as_number() const { return std::get<Number>(v_); }
    Number &as_number() { return std::get<Number>(v_); }
    const std::string &as_string() const { return std::get<std::string>(v_); }
    const Array &as_array() const { return std::get<Array>(v_); }
    const Object &as_object() const { return std::get<Object>(v_); }
    UnixMicros as_date() const { return std::get<DateValue>(v_).micros; }
    const ObjectId &as_objectid() const { return std::get<ObjectId>(v_); }
    Array &as_array() { return std::get<Array>(v_); }
    Object &as_object() { return std::get<Object>(v_); }

    // For an object: the member's value, or nullptr.
    const Value *find(std::string_view key) const;
    // For an object: appends a member (keys are not checked for uniqueness).
    void add(std::string key, Value value);

    // The number as an integer when it is one exactly and fits, else nullopt.
    std::optional<int64_t> as_exact_int64() const;

  private:
    struct DateValue {
        UnixMicros micros;
    };
    using Storage =
        std::variant<std::monostate, bool, Number, std::string, Array, Object, DateValue, ObjectId>;
    // Built in place: values are made by the million on the write path.
    template <typename T, typename... Args>
    explicit Value(std::in_place_type_t<T> type, Args &&...args)
        : v_(type, std::forward<Args>(args)...) {}
    Storage v_;
};

struct Member {
    std::string key;
    Value value;
};

// Values as written: key order and number texts count ("1.0" is not
// "1"). Two values spelled alike are equal; equal values may be spelled
// differently. A cheap first test before comparing values by meaning.
size_t spelling_hash(const Value &v);
bool spelled_alike(const Value &a, const Value &b);

// The value as JSON text (dates as {"$date": "<canonical>"}, ObjectIds as
// their hex string), e.g. for a literal in generated SQL.
std::string to_json_text(const Value &v);

}  // namespace tscoll
