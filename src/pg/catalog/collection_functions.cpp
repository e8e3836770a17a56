// SQL functions behind tscoll.create_collection*() and the bucket table's
// derived columns.
extern "C" {
#include "postgres.h"
#include "datatype/timestamp.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/timestamp.h"
}

#include "core/collection_options.hpp"
#include "core/date.hpp"
#include "core/error.hpp"
#include "pg/catalog/collection.hpp"
#include "pg/guard.hpp"
#include "pg/types/jsonb_value.hpp"
#include "pg/pg_time.hpp"

namespace {

Jsonb *validate_options(Jsonb *options) {
    tscoll::CollectionOptions parsed =
        tscoll::parse_create_options(tscoll::pg::jsonb_to_value(options));
    return tscoll::pg::value_to_jsonb(tscoll::to_flat_value(parsed));
}

// The string at control -> bound -> field, or nullptr.
const JsonbValue *control_string(Jsonb *control, const char *bound, const char *field,
                                 JsonbValue *storage) {
    if (!JB_ROOT_IS_OBJECT(control))
        return nullptr;
    JsonbValue summary;
    if (!getKeyJsonValueFromContainer(&control->root, bound, strlen(bound), &summary) ||
        summary.type != jbvBinary)
        return nullptr;
    if (!getKeyJsonValueFromContainer(summary.val.binary.data, field, strlen(field), storage) ||
        storage->type != jbvString)
        return nullptr;
    return storage;
}

}  // namespace

// tscoll._validate_options(options jsonb) RETURNS jsonb: MongoDB
// create-command options in, the validated options (flat, defaults filled
// in) out.
TSCOLL_FUNCTION(tscoll_validate_options) {
    Jsonb *options = PG_GETARG_JSONB_P(0);
    PG_RETURN_JSONB_P(validate_options(options));
}

// tscoll._apply_coll_mod(options jsonb, changes jsonb) RETURNS jsonb: the
// stored (flat) options and MongoDB collMod changes in;
// {"options": <flat>, "bucketingChanged": bool, "index": <change> | null,
// "addedFields": {<new typed fields>}} out.
TSCOLL_FUNCTION(tscoll_apply_coll_mod) {
    // Detoasting can raise an error: done before any C++ object lives.
    Jsonb *options = PG_GETARG_JSONB_P(0);
    Jsonb *changes = PG_GETARG_JSONB_P(1);
    tscoll::CollMod mod =
        tscoll::apply_coll_mod(tscoll::from_flat_value(tscoll::pg::jsonb_to_value(options)),
                               tscoll::pg::jsonb_to_value(changes));
    tscoll::Value result = tscoll::Value::object();
    result.add("options", tscoll::to_flat_value(mod.options));
    result.add("bucketingChanged", tscoll::Value::boolean(mod.bucketing_changed));
    result.add("index", mod.index ? *mod.index : tscoll::Value::null());
    tscoll::Value added = tscoll::Value::object();
    for (const tscoll::TypedField &f : mod.added_fields)
        added.add(f.name, tscoll::Value::string(f.type));
    result.add("addedFields", std::move(added));
    PG_RETURN_JSONB_P(tscoll::pg::value_to_jsonb(result));
}

namespace tscoll::pg {

TimestampTz control_time(Jsonb *control, const char *bound, const char *field) {
    // A tail's max is its until (control.tail.until), when it has one.
    bool tail_max = strcmp(bound, "max") == 0;
    JsonbValue storage;
    const JsonbValue *text =
        tail_max ? control_string(control, "tail", "until", &storage) : nullptr;
    if (text == nullptr)
        text =
            control_string(control, strcmp(bound, "latest") == 0 ? "max" : bound, field, &storage);
    std::optional<tscoll::UnixMicros> t;
    if (text != nullptr)
        t = tscoll::parse_canonical_date(
            std::string_view(text->val.string.val, text->val.string.len));
    if (!t)
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("invalid bucket control: \"%s.%s\" must be a date in the form "
                               "YYYY-MM-DDTHH:MM:SS.fffZ",
                               bound, field)));
    TimestampTz result = to_timestamptz(*t);
    if (!IS_VALID_TIMESTAMP(result))
        ereport(ERROR, (errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
                        errmsg("invalid bucket control: \"%s.%s\" is out of range", bound, field)));
    return result;
}

}  // namespace tscoll::pg

// tscoll._control_time(control jsonb, bound text, time_field text)
// RETURNS timestamptz: control.<bound>.<time field>, which must be a date in
// the canonical form; 'max' of a tail is its control.tail.until and
// 'latest' is control.max (control_time). Immutable: the form carries its own time
// zone (Z).
TSCOLL_FUNCTION(tscoll_control_time) {
    Jsonb *control = PG_GETARG_JSONB_P(0);
    const char *bound = text_to_cstring(PG_GETARG_TEXT_PP(1));
    const char *field = text_to_cstring(PG_GETARG_TEXT_PP(2));
    PG_RETURN_TIMESTAMPTZ(tscoll::pg::control_time(control, bound, field));
}
