#include "core/json_text.hpp"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace tscoll {

namespace {

constexpr int kMaxDepth = 100;

class Reader {
  public:
    Reader(std::string_view text, SkippableMember *skip)
        : p_(text.data()), end_(text.data() + text.size()), skip_(skip) {}

    // False when the text is not plain JSON (see the header).
    bool read(Value &out) {
        skip_space();
        if (!value(out, 0))
            return false;
        skip_space();
        return p_ == end_;
    }

  private:
    void skip_space() {
        while (p_ < end_ && (*p_ == ' ' || *p_ == '\t' || *p_ == '\n' || *p_ == '\r'))
            p_++;
    }

    bool literal(std::string_view word) {
        if (static_cast<size_t>(end_ - p_) < word.size() ||
            std::string_view(p_, word.size()) != word)
            return false;
        p_ += word.size();
        // "truex" is not true followed by garbage for us: PostgreSQL decides.
        return p_ == end_ || !((*p_ >= 'a' && *p_ <= 'z') || (*p_ >= 'A' && *p_ <= 'Z') ||
                               (*p_ >= '0' && *p_ <= '9') || *p_ == '_');
    }

    bool value(Value &out, int depth) {
        if (p_ == end_ || depth >= kMaxDepth)
            return false;
        switch (*p_) {
            case '{':
                return object(out, depth);
            case '[':
                return array(out, depth);
            case '"': {
                std::string s;
                if (!string(s))
                    return false;
                out = Value::string(std::move(s));
                return true;
            }
            case 't':
                out = Value::boolean(true);
                return literal("true");
            case 'f':
                out = Value::boolean(false);
                return literal("false");
            case 'n':
                out = Value::null();
                return literal("null");
            default:
                return number(out);
        }
    }

    // -?(0|[1-9][0-9]*)(.[0-9]+)? : numeric prints these as written, but
    // for a minus zero.
    bool number(Value &out) {
        const char *start = p_;
        if (p_ < end_ && *p_ == '-')
            p_++;
        const char *digits = p_;
        if (p_ == end_ || *p_ < '0' || *p_ > '9')
            return false;
        if (*p_ == '0')
            p_++;
        else
            while (p_ < end_ && *p_ >= '0' && *p_ <= '9')
                p_++;
        bool nonzero = std::any_of(digits, p_, [](char c) { return c != '0'; });
        if (p_ < end_ && *p_ == '.') {
            p_++;
            const char *fraction = p_;
            while (p_ < end_ && *p_ >= '0' && *p_ <= '9')
                p_++;
            if (p_ == fraction)
                return false;
            nonzero = nonzero || std::any_of(fraction, p_, [](char c) { return c != '0'; });
        }
        if (p_ < end_ && (*p_ == 'e' || *p_ == 'E' || (*p_ >= '0' && *p_ <= '9')))
            return false;
        if (*start == '-' && !nonzero)
            return false;
        out = Value::number(std::string(start, p_));
        return true;
    }

    bool string(std::string &out) {
        p_++;  // the opening quote
        for (;;) {
            const char *run = p_;
            while (p_ < end_ && *p_ != '"' && *p_ != '\\' &&
                   static_cast<unsigned char>(*p_) >= 0x20)
                p_++;
            out.append(run, p_);
            if (p_ == end_ || static_cast<unsigned char>(*p_) < 0x20)
                return false;
            if (*p_ == '"') {
                p_++;
                return true;
            }
            if (++p_ == end_)
                return false;
            switch (*p_++) {
                case '"':
                    out += '"';
                    break;
                case '\\':
                    out += '\\';
                    break;
                case '/':
                    out += '/';
                    break;
                case 'b':
                    out += '\b';
                    break;
                case 'f':
                    out += '\f';
                    break;
                case 'n':
                    out += '\n';
                    break;
                case 'r':
                    out += '\r';
                    break;
                case 't':
                    out += '\t';
                    break;
                default:
                    return false;  // \u and anything invalid
            }
        }
    }

    bool array(Value &out, int depth) {
        p_++;
        Value::Array elements;
        skip_space();
        if (p_ < end_ && *p_ == ']') {
            p_++;
            out = Value::array();
            return true;
        }
        for (;;) {
            skip_space();
            Value element;
            if (!value(element, depth + 1))
                return false;
            elements.push_back(std::move(element));
            skip_space();
            if (p_ == end_)
                return false;
            if (*p_ == ']') {
                p_++;
                out = Value::array(std::move(elements));
                return true;
            }
            if (*p_++ != ',')
                return false;
        }
    }

    bool object(Value &out, int depth) {
        p_++;
        Value::Object members;
        members.reserve(16);
        skip_space();
        if (p_ < end_ && *p_ == '}') {
            p_++;
            out = Value::object();
            return true;
        }
        for (;;) {
            skip_space();
            Member &m = members.emplace_back();  // read in place
            if (p_ == end_ || *p_ != '"' || !string(m.key))
                return false;
            skip_space();
            if (p_ == end_ || *p_++ != ':')
                return false;
            skip_space();
            if (depth == 0 && skip_ != nullptr && m.key == skip_->key) {
                if (!skippable(members))
                    return false;
            } else if (!value(m.value, depth + 1)) {
                return false;
            }
            skip_space();
            if (p_ == end_)
                return false;
            if (*p_ == '}') {
                p_++;
                out = Value::object(in_jsonb_order(std::move(members)));
                return true;
            }
            if (*p_++ != ',')
                return false;
        }
    }

    // The skippable member's value, which `members` ends with: left
    // unread (and taken off) when its text was seen, read otherwise.
    bool skippable(Value::Object &members) {
        if (skip_->text) {
            skip_->repeated = true;
            return false;
        }
        const char *start = p_;
        if (!value_end())
            return false;
        skip_->text = std::string_view(start, static_cast<size_t>(p_ - start));
        if (skip_->seen(*skip_->text)) {
            skip_->skipped = true;
            members.pop_back();
            return true;
        }
        p_ = start;
        return value(members.back().value, 1);
    }

    // Moves past a value without building it, by its structure alone
    // (strings, brackets): a text that passes is only trusted when it is
    // one read before.
    bool value_end() {
        if (p_ == end_)
            return false;
        if (*p_ == '"')
            return string_end();
        if (*p_ != '{' && *p_ != '[') {
            while (p_ < end_ && *p_ != ',' && *p_ != '}' && *p_ != ']' && *p_ != ' ' &&
                   *p_ != '\t' && *p_ != '\n' && *p_ != '\r')
                p_++;
            return true;
        }
        int open = 0;
        while (p_ < end_) {
            char c = *p_;
            if (c == '"') {
                if (!string_end())
                    return false;
                continue;
            }
            p_++;
            if (c == '{' || c == '[')
                open++;
            else if ((c == '}' || c == ']') && --open == 0)
                return true;
        }
        return false;
    }

    bool string_end() {
        for (p_++; p_ < end_; p_++) {
            if (*p_ == '\\') {
                p_++;
                continue;
            }
            if (*p_ == '"') {
                p_++;
                return true;
            }
        }
        return false;
    }

    // jsonb's order: shorter keys first, then bytewise; of a repeated key,
    // the last value. Sorted by index, so that each member moves once.
    static Value::Object in_jsonb_order(Value::Object members) {
        auto before = [](const std::string &a, const std::string &b) {
            return a.size() != b.size() ? a.size() < b.size() : a < b;
        };
        bool ordered = std::adjacent_find(members.begin(), members.end(),
                                          [&](const Member &a, const Member &b) {
                                              return !before(a.key, b.key);
                                          }) == members.end();
        if (ordered)
            return members;
        std::vector<uint32_t> order(members.size());
        for (uint32_t i = 0; i < order.size(); i++)
            order[i] = i;
        std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
            const std::string &ka = members[a].key, &kb = members[b].key;
            return before(ka, kb) || (ka == kb && a < b);
        });
        Value::Object sorted;
        sorted.reserve(order.size());
        for (size_t i = 0; i < order.size(); i++) {
            // Of equal keys (adjacent, by index), only the last is kept.
            if (i + 1 < order.size() && members[order[i]].key == members[order[i + 1]].key)
                continue;
            sorted.push_back(std::move(members[order[i]]));
        }
        return sorted;
    }

    const char *p_;
    const char *end_;
    SkippableMember *skip_;
};

}  // namespace

std::optional<Value> read_plain_json(std::string_view text) {
    return read_plain_json(text, nullptr);
}

std::optional<Value> read_plain_json(std::string_view text, SkippableMember *skip) {
    Value out;
    if (!Reader(text, skip).read(out))
        return std::nullopt;
    return out;
}

}  // namespace tscoll
