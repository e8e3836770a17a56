// Mostly PostgreSQL calls: copies_into_collection and the loop around
// NextCopyFromRawFields own no C++ object and call PostgreSQL directly;
// the C++ work of each row runs inside guarded().
#include "pg/write/copy_from.hpp"

extern "C" {
#include "access/table.h"
#include "catalog/namespace.h"
#include "catalog/pg_authid.h"
#include "catalog/pg_class.h"
#include "commands/copy.h"
#include "commands/copyfrom_internal.h"
#include "commands/defrem.h"
#include "commands/progress.h"
#include "commands/trigger.h"
#include "libpq/libpq.h"
#include "libpq/pqformat.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "parser/parse_node.h"
#include "tcop/utility.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/fmgrprotos.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/timestamp.h"
}

#include <algorithm>
#include <string_view>

#include "core/json_text.hpp"
#include "core/measurement.hpp"
#include "pg/guard.hpp"
#include "pg/pg_time.hpp"
#include "pg/settings.hpp"
#include "pg/types/jsonb_value.hpp"
#include "pg/write/bucket_store.hpp"
#include "pg/write/copy_parse.hpp"
#include "pg/write/insert.hpp"

namespace {

using tscoll::Value;

bool takes_options(List *options) {
    ListCell *lc;
    foreach (lc, options) {
        DefElem *option = lfirst_node(DefElem, lc);
        if (strcmp(option->defname, "format") == 0) {
            const char *format = defGetString(option);
            if (strcmp(format, "text") != 0 && strcmp(format, "csv") != 0 &&
                strcmp(format, "binary") != 0)
                return false;
        } else if (strcmp(option->defname, "force_not_null") == 0 ||
                   strcmp(option->defname, "force_null") == 0 ||
                   strcmp(option->defname, "freeze") == 0) {
            return false;
        }
    }
    return true;
}

// Only tscoll's own two triggers, and no column defaults on the view.
bool plain_view(Relation view) {
    if (!tscoll::pg::has_only_own_triggers(view))
        return false;
    TupleDesc desc = RelationGetDescr(view);
    return desc->constr == nullptr || desc->constr->num_defval == 0;
}

// Whether the COPY reads a typed field's column (doc/REFERENCE.md, Typed
// fields), one after doc: its text is read by the column type's input
// function on PostgreSQL's path.
bool copies_typed_columns(Relation view, List *attlist) {
    AttrNumber doc = get_attnum(RelationGetRelid(view), "doc");
    if (attlist == NIL)
        return RelationGetDescr(view)->natts > doc;
    ListCell *lc;
    foreach (lc, attlist)
        if (get_attnum(RelationGetRelid(view), strVal(lfirst(lc))) > doc)
            return true;
    return false;
}

// Whether the caller may read the COPY's server file or run its program,
// as COPY itself checks; when not, COPY's own path raises the error.
bool may_read_source(const CopyStmt *copy) {
    if (copy->filename == nullptr)
        return true;
    return has_privs_of_role(
        GetUserId(), copy->is_program ? ROLE_PG_EXECUTE_SERVER_PROGRAM : ROLE_PG_READ_SERVER_FILES);
}

// COPY <collection view> FROM STDIN, a file or a program, that this path
// takes; the view's OID or InvalidOid.
Oid copies_into_collection(const CopyStmt *copy) {
    if (!copy->is_from || copy->relation == nullptr || copy->whereClause != nullptr ||
        !takes_options(copy->options) || !may_read_source(copy))
        return InvalidOid;
    Oid relid = RangeVarGetRelid(copy->relation, NoLock, true);
    if (!OidIsValid(relid) || get_rel_relkind(relid) != RELKIND_VIEW)
        return InvalidOid;
    if (pg_class_aclcheck(relid, GetUserId(), ACL_INSERT) != ACLCHECK_OK)
        return InvalidOid;
    if (!tscoll::pg::guarded([&] { return tscoll::pg::find_collection(relid).has_value(); }))
        return InvalidOid;
    return relid;
}

// A JSON column's text as a value: read directly when it is plain JSON,
// else through jsonb_in, which words the errors.
Value json_value(const char *text) {
    if (std::optional<Value> v = tscoll::read_plain_json(std::string_view(text)))
        return std::move(*v);
    Jsonb *jsonb = tscoll::pg::pg_call(
        [&] { return DatumGetJsonbP(DirectFunctionCall1(jsonb_in, CStringGetDatum(text))); });
    return tscoll::pg::jsonb_to_value(jsonb);
}

// One binary row, read into `values` and `nulls` (the view's columns) by
// NextCopyFrom, as core values.
tscoll::MeasurementInput binary_row_input(const Datum *values, const bool *nulls,
                                          const std::vector<int> &columns,
                                          const tscoll::pg::CollectionInfo &info) {
    tscoll::MeasurementInput input;
    for (int column : columns) {
        if (nulls[column - 1])
            continue;
        Datum d = values[column - 1];
        if (column == info.view_time_column) {
            input.time = tscoll::pg::time_field_value(DatumGetTimestampTz(d));
            if (!input.time)
                tscoll::throw_bad_date(tscoll::CollectionFields{
                    info.view_name, info.time_field, info.meta_field, info.rounding_seconds});
            continue;
        }
        Value v =
            tscoll::pg::jsonb_to_value(tscoll::pg::pg_call([&] { return DatumGetJsonbP(d); }));
        if (column == info.view_doc_column)
            input.doc = std::move(v);
        else
            input.meta = std::move(v);
    }
    return input;
}

// One row's fields, in the order of `columns` (attribute numbers of the
// view: time 1, meta 2 when there is a meta field, then doc). The copy
// state names the field being read in errors, as COPY's own input does.
tscoll::MeasurementInput row_input(CopyFromState cstate, char **fields,
                                   const std::vector<int> &columns, TupleDesc desc,
                                   const tscoll::pg::CollectionInfo &info) {
    tscoll::MeasurementInput input;
    for (size_t i = 0; i < columns.size(); i++) {
        const char *text = fields[i];
        if (text == nullptr)
            continue;
        cstate->cur_attname = NameStr(TupleDescAttr(desc, columns[i] - 1)->attname);
        cstate->cur_attval = text;
        if (columns[i] == info.view_doc_column) {
            input.doc = json_value(text);
        } else if (columns[i] == 1) {
            TimestampTz t = tscoll::pg::pg_call([&] {
                return DatumGetTimestampTz(
                    DirectFunctionCall3(timestamptz_in, CStringGetDatum(text),
                                        ObjectIdGetDatum(InvalidOid), Int32GetDatum(-1)));
            });
            input.time = tscoll::pg::time_field_value(t);
            if (!input.time)
                tscoll::throw_bad_date(tscoll::CollectionFields{
                    info.view_name, info.time_field, info.meta_field, info.rounding_seconds});
        } else {
            input.meta = json_value(text);
        }
        cstate->cur_attname = nullptr;
        cstate->cur_attval = nullptr;
    }
    return input;
}

// COPY's own messages for a line with too many or too few fields.
[[noreturn]] void wrong_field_count(int got, const std::vector<int> &columns, TupleDesc desc) {
    if (got > static_cast<int>(columns.size()))
        ereport(ERROR, (errcode(ERRCODE_BAD_COPY_FILE_FORMAT),
                        errmsg("extra data after last expected column")));
    ereport(ERROR, (errcode(ERRCODE_BAD_COPY_FILE_FORMAT),
                    errmsg("missing data for column \"%s\"",
                           NameStr(TupleDescAttr(desc, columns[got] - 1)->attname))));
    pg_unreachable();
}

// What one COPY reads: the statement's state and the view's columns.
struct CopyInput {
    CopyFromState cstate;
    TupleDesc desc;
    std::vector<int> columns;  // attribute numbers of the view, as COPY lists them
};

// The next row's fields, or false at the end of the input.
bool next_row(const CopyInput &in, char ***fields) {
    int nfields = 0;
    if (!tscoll::pg::pg_call([&] { return NextCopyFromRawFields(in.cstate, fields, &nfields); }))
        return false;
    if (nfields != static_cast<int>(in.columns.size()))
        tscoll::pg::pg_call([&] { wrong_field_count(nfields, in.columns, in.desc); });
    return true;
}

// Rows parsed on a second thread are read this many at a time (or up to
// this much text): enough that handing them over costs little, few enough
// that the first batch starts early. Up to kReadAhead batches are in
// flight, enough that the parser works through a whole flush of the batch
// (while the backend writes buckets) and has the rows after it parsed:
// with 32, the backend waited for the parser at 40% of its takes on
// TSBS's 100 x 24 h (about 1 s of the COPY's 5), with 48 at 14% (0.35 s).
// The text the parser reads itself comes in pieces of about as many rows
// (TSBS's are 400 bytes): larger pieces put more prepared measurements in
// flight, which outgrow the caches.
constexpr size_t kParsedRows = 1024;
constexpr size_t kParsedBytes = 1 << 20;
constexpr size_t kTextBytes = 384 << 10;
constexpr size_t kReadAhead = 48;

// Reads rows for the parser, up to one batch. `ended` once the input has.
tscoll::CopyRows read_rows(const CopyInput &in, bool &ended) {
    tscoll::CopyRows rows(in.columns.size());
    char **fields = nullptr;
    while (rows.size() < kParsedRows && rows.bytes() < kParsedBytes) {
        if (!next_row(in, &fields)) {
            ended = true;
            break;
        }
        const StringInfoData &line = in.cstate->line_buf;
        rows.add(fields, line.data, static_cast<size_t>(line.len), in.cstate->cur_lineno);
    }
    return rows;
}

// Whether tscoll reads the COPY's text itself, on the parser's thread
// (core/copy_text.hpp): the text format with its default options, from
// the client, a file or a program, in a UTF-8 database.
bool reads_text_itself(CopyFromState cstate) {
    return !cstate->opts.binary && !cstate->opts.csv_mode &&
           cstate->opts.header_line == COPY_HEADER_FALSE && !cstate->need_transcoding &&
           GetDatabaseEncoding() == PG_UTF8 && strcmp(cstate->opts.delim, "\t") == 0 &&
           strcmp(cstate->opts.null_print, "\\N") == 0 &&
           (cstate->copy_src == COPY_FRONTEND || cstate->copy_src == COPY_FILE);
}

// The client's next CopyData message into cstate->fe_msgbuf; false at
// CopyDone. As PostgreSQL's own CopyGetData (static) reads them.
bool next_copy_message(CopyFromState cstate) {
    for (;;) {
        HOLD_CANCEL_INTERRUPTS();
        pq_startmsgread();
        int type = pq_getbyte();
        if (type == EOF)
            ereport(ERROR,
                    (errcode(ERRCODE_CONNECTION_FAILURE),
                     errmsg("unexpected EOF on client connection with an open transaction")));
        if (type != 'd' && type != 'c' && type != 'f' && type != 'H' && type != 'S')
            ereport(ERROR, (errcode(ERRCODE_PROTOCOL_VIOLATION),
                            errmsg("unexpected message type 0x%02X during COPY from stdin", type)));
        int limit = type == 'd' ? PQ_LARGE_MESSAGE_LIMIT : PQ_SMALL_MESSAGE_LIMIT;
        if (pq_getmessage(cstate->fe_msgbuf, limit))
            ereport(ERROR,
                    (errcode(ERRCODE_CONNECTION_FAILURE),
                     errmsg("unexpected EOF on client connection with an open transaction")));
        RESUME_CANCEL_INTERRUPTS();
        if (type == 'd')
            return true;
        if (type == 'c')
            return false;
        if (type == 'f')
            ereport(ERROR,
                    (errcode(ERRCODE_QUERY_CANCELED),
                     errmsg("COPY from stdin failed: %s", pq_getmsgstring(cstate->fe_msgbuf))));
        // Flush and Sync: libpq may send them not knowing the command was
        // a COPY.
    }
}

// Up to `max` bytes of the COPY's input; 0 at its end.
size_t read_input(CopyFromState cstate, char *into, size_t max) {
    if (cstate->raw_reached_eof)
        return 0;
    size_t n = 0;
    if (cstate->copy_src == COPY_FILE) {
        n = fread(into, 1, max, cstate->copy_file);
        if (ferror(cstate->copy_file))
            ereport(ERROR,
                    (errcode_for_file_access(), errmsg("could not read from COPY file: %m")));
        if (n == 0)
            cstate->raw_reached_eof = true;
    } else {
        StringInfo message = cstate->fe_msgbuf;
        while (n < max) {
            if (message->cursor >= message->len) {
                if (!next_copy_message(cstate)) {
                    cstate->raw_reached_eof = true;
                    break;
                }
                continue;
            }
            size_t take = std::min(static_cast<size_t>(message->len - message->cursor), max - n);
            pq_copymsgbytes(message, into + n, static_cast<int>(take));
            n += take;
        }
    }
    cstate->bytes_processed += n;
    pgstat_progress_update_param(PROGRESS_COPY_BYTES_PROCESSED, cstate->bytes_processed);
    return n;
}

// The next piece of the COPY's text, up to kTextBytes.
std::string read_text(const CopyInput &in, bool &ended) {
    std::string text(kTextBytes, '\0');
    size_t n = 0;
    while (n < text.size()) {
        size_t got = tscoll::pg::pg_call(
            [&] { return read_input(in.cstate, text.data() + n, text.size() - n); });
        if (got == 0) {
            ended = true;
            break;
        }
        n += got;
    }
    text.resize(n);
    return text;
}

// After the end-of-data marker, the client's input up to CopyDone is
// read and dropped, as PostgreSQL does.
void skip_rest(const CopyInput &in) {
    if (in.cstate->copy_src != COPY_FRONTEND)
        return;
    std::string rest(kTextBytes, '\0');
    while (tscoll::pg::pg_call([&] { return read_input(in.cstate, rest.data(), rest.size()); }) > 0)
        continue;
}

// The row's line, for COPY's error context.
void show_line(CopyFromState cstate, const tscoll::CopyRows &rows, size_t row) {
    cstate->cur_lineno = rows.line_number(row);
    std::string_view line = rows.line(row);
    tscoll::pg::pg_call([&] {
        resetStringInfo(&cstate->line_buf);
        appendBinaryStringInfo(&cstate->line_buf, line.data(), static_cast<int>(line.size()));
    });
    cstate->line_buf_valid = true;
}

// The text, which the reader found is not UTF-8: PostgreSQL's error.
[[noreturn]] void not_utf8(std::string_view text) {
    pg_verify_mbstr(PG_UTF8, text.data(), static_cast<int>(text.size()), false);
    ereport(ERROR, (errcode(ERRCODE_CHARACTER_NOT_IN_REPERTOIRE),
                    errmsg("invalid byte sequence for encoding \"UTF8\"")));
    pg_unreachable();
}

// PostgreSQL's error for a line the text reader found a problem in, with
// the context COPY's own reader gives it: the line, once it was read.
[[noreturn]] void raise_line_problem(const CopyInput &in, const tscoll::CopyRows &rows,
                                     size_t row) {
    using tscoll::CopyLineProblem;
    CopyFromState cstate = in.cstate;
    cstate->cur_lineno = rows.line_number(row);
    cstate->line_buf_valid = false;
    CopyLineProblem problem = rows.problem(row);
    if (problem == CopyLineProblem::FieldCount) {
        show_line(cstate, rows, row);
        wrong_field_count(static_cast<int>(rows.problem_detail(row)), in.columns, in.desc);
    }
    if (problem == CopyLineProblem::FieldEncoding)
        show_line(cstate, rows, row);
    if (problem == CopyLineProblem::FieldEncoding || problem == CopyLineProblem::LineEncoding)
        not_utf8(rows.problem_text(row));
    if (problem == CopyLineProblem::CarriageReturn)
        ereport(ERROR, (errcode(ERRCODE_BAD_COPY_FILE_FORMAT),
                        errmsg("literal carriage return found in data"),
                        errhint("Use \"\\r\" to represent carriage return.")));
    if (problem == CopyLineProblem::Newline)
        ereport(ERROR,
                (errcode(ERRCODE_BAD_COPY_FILE_FORMAT), errmsg("literal newline found in data"),
                 errhint("Use \"\\n\" to represent newline.")));
    if (problem == CopyLineProblem::TooLong)
        ereport(ERROR, (errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
                        errmsg("COPY line is longer than %zu bytes",
                               tscoll::CopyTextReader::kMaxLineBytes)));
    if (problem == CopyLineProblem::MarkerCorrupt)
        ereport(ERROR,
                (errcode(ERRCODE_BAD_COPY_FILE_FORMAT), errmsg("end-of-copy marker corrupt")));
    ereport(ERROR, (errcode(ERRCODE_BAD_COPY_FILE_FORMAT),
                    errmsg("end-of-copy marker does not match previous newline style")));
    pg_unreachable();
}

// The parsed rows into the batch, in order, up to the first that fails.
// COPY's error context names each row's line while it is added.
uint64 add_parsed_rows(const CopyInput &in, tscoll::CopyRows &rows,
                       std::vector<tscoll::pg::ParsedRow> &parsed,
                       tscoll::pg::MeasurementBatch &batch) {
    using Outcome = tscoll::pg::ParsedRow::Outcome;
    CopyFromState cstate = in.cstate;
    uint64 read_up_to = cstate->cur_lineno;
    cstate->line_buf_valid = false;  // it holds a line read since
    if (rows.size() == 0 && !parsed.empty() && parsed[0].outcome == Outcome::Failed)
        std::rethrow_exception(parsed[0].error);  // the parser failed before any row
    for (size_t r = 0; r < rows.size(); r++) {
        tscoll::pg::ParsedRow &row = parsed[r];
        cstate->cur_lineno = rows.line_number(r);
        if (row.outcome == Outcome::BadLine)
            tscoll::pg::pg_call([&] { raise_line_problem(in, rows, r); });
        if (row.outcome == Outcome::Prepared) {
            if (row.spelling == tscoll::pg::MetaSpellings::kNone)
                batch.add(std::move(*row.prepared));
            else
                batch.add(std::move(*row.prepared), row.spelling);
        } else {
            show_line(cstate, rows, r);
            if (row.outcome == Outcome::Failed)
                std::rethrow_exception(row.error);
            std::vector<char *> fields;
            for (size_t c = 0; c < rows.columns(); c++)
                fields.push_back(const_cast<char *>(rows.field(r, c)));
            batch.add(row_input(cstate, fields.data(), in.columns, in.desc, batch.collection()));
            cstate->line_buf_valid = false;
        }
        batch.flush_when_full();
    }
    // The last line read, for errors while the next rows are read: COPY's
    // reader read ahead, tscoll's reader reads on the parser's thread.
    if (rows.size() > 0)
        read_up_to = std::max<uint64>(read_up_to, rows.line_number(rows.size() - 1));
    cstate->cur_lineno = read_up_to;
    return rows.size();
}

// Text or CSV rows of JSON columns (no time column, whose text
// timestamptz_in reads): the JSON parsed and the measurements prepared on
// a second thread (copy_parse.hpp) while this one reads the input ahead
// and stores the measurements. The text format with its default options
// is read on that thread too, from the input as it comes; other input is
// read here by COPY's own reader, which raises an error of the input's
// format (quoting, encoding) when it reads the line: before an error of
// an earlier row that is being parsed. A COPY of one batch or less has no
// thread.
uint64 copy_parsed_rows(const CopyInput &in, tscoll::pg::MeasurementBatch &batch) {
    tscoll::pg::CopyShape shape;
    for (int column : in.columns)
        shape.is_doc.push_back(column == batch.collection().view_doc_column);
    shape.fields = batch.fields();
    shape.max_measurement_size = static_cast<uint64_t>(tscoll::pg::max_measurement_size);
    const bool text = reads_text_itself(in.cstate);
    const size_t columns = in.columns.size();
    bool ended = false;
    std::string first_text;
    tscoll::CopyRows first_rows(columns);
    if (text)
        first_text = read_text(in, ended);
    else
        first_rows = read_rows(in, ended);
    if (ended) {
        tscoll::pg::ParserState state(columns);
        if (text)
            first_rows = tscoll::pg::rows_of_text(first_text, true, state);
        std::vector<tscoll::pg::ParsedRow> parsed =
            tscoll::pg::parse_rows(first_rows, shape, state);
        return add_parsed_rows(in, first_rows, parsed, batch);
    }
    tscoll::pg::CopyParser parser(std::move(shape), columns);
    if (text)
        parser.submit_text(std::move(first_text), false);
    else
        parser.submit(std::move(first_rows));
    uint64 processed = 0;
    while (!ended || parser.in_flight() > 0) {
        bool read_ahead = parser.in_flight() < kReadAhead && !parser.ready();
        if (!ended && (parser.in_flight() == 0 || read_ahead)) {
            if (!text) {
                tscoll::CopyRows rows = read_rows(in, ended);
                if (rows.size() > 0)
                    parser.submit(std::move(rows));
            } else if (parser.text_done()) {
                ended = true;
            } else {
                std::string piece = read_text(in, ended);
                parser.submit_text(std::move(piece), ended);
            }
            continue;
        }
        auto [rows, parsed] = parser.take();
        processed += add_parsed_rows(in, rows, parsed, batch);
    }
    if (text)
        skip_rest(in);
    return processed;
}

// Any other text or CSV rows, one at a time.
uint64 copy_rows(const CopyInput &in, tscoll::pg::MeasurementBatch &batch) {
    uint64 processed = 0;
    char **fields = nullptr;
    while (next_row(in, &fields)) {
        batch.add(row_input(in.cstate, fields, in.columns, in.desc, batch.collection()));
        batch.flush_when_full();
        processed++;
    }
    return processed;
}

// Binary rows, each decoded by NextCopyFrom in a context reset per row.
uint64 copy_binary_rows(const CopyInput &in, tscoll::pg::MeasurementBatch &batch) {
    using tscoll::pg::pg_call;
    int natts = in.desc->natts;
    Datum *values = nullptr;
    bool *nulls = nullptr;
    MemoryContext row_context = nullptr;
    pg_call([&] {
        values = static_cast<Datum *>(palloc0(sizeof(Datum) * natts));
        nulls = static_cast<bool *>(palloc0(sizeof(bool) * natts));
        row_context = AllocSetContextCreate(CurrentMemoryContext, "tscoll binary COPY row",
                                            ALLOCSET_DEFAULT_SIZES);
    });
    uint64 processed = 0;
    for (;;) {
        MemoryContext caller = MemoryContextSwitchTo(row_context);
        bool more = false;
        try {
            more = pg_call([&] { return NextCopyFrom(in.cstate, nullptr, values, nulls); });
            if (more)
                batch.add(binary_row_input(values, nulls, in.columns, batch.collection()));
        } catch (...) {
            MemoryContextSwitchTo(caller);
            throw;
        }
        MemoryContextSwitchTo(caller);
        pg_call([&] { MemoryContextReset(row_context); });
        if (!more)
            return processed;
        batch.flush_when_full();
        processed++;
    }
}

}  // namespace

namespace tscoll::pg {

bool copy_into_collection(PlannedStmt *pstmt, const char *query_string, QueryCompletion *qc) {
    if (!IsA(pstmt->utilityStmt, CopyStmt))
        return false;
    CopyStmt *copy = castNode(CopyStmt, pstmt->utilityStmt);
    Oid view_oid = copies_into_collection(copy);
    if (!OidIsValid(view_oid))
        return false;
    Relation view = table_open(view_oid, RowExclusiveLock);
    if (!plain_view(view) || copies_typed_columns(view, copy->attlist)) {
        table_close(view, RowExclusiveLock);
        return false;
    }
    PreventCommandIfReadOnly("COPY FROM");
    PreventCommandIfParallelMode("COPY FROM");

    ParseState *pstate = make_parsestate(nullptr);
    pstate->p_sourcetext = query_string;
    CopyFromState cstate = BeginCopyFrom(pstate, view, nullptr, copy->filename, copy->is_program,
                                         nullptr, copy->attlist, copy->options);
    bool binary = cstate->opts.binary;
    TupleDesc desc = RelationGetDescr(view);
    uint64 processed = 0;

    ErrorContextCallback context;
    context.callback = CopyFromErrorCallback;
    context.arg = cstate;
    context.previous = error_context_stack;
    error_context_stack = &context;
    guarded([&] {
        CopyInput in{cstate, desc, {}};
        ListCell *lc;
        foreach (lc, cstate->attnumlist)
            in.columns.push_back(lfirst_int(lc));
        MeasurementBatch batch(view_oid);
        bool json_only = std::find(in.columns.begin(), in.columns.end(),
                                   batch.collection().view_time_column) == in.columns.end();
        if (binary)
            processed = copy_binary_rows(in, batch);
        else if (json_only)
            processed = copy_parsed_rows(in, batch);
        else
            processed = copy_rows(in, batch);
        error_context_stack = context.previous;
        batch.finish();
    });
    error_context_stack = context.previous;
    EndCopyFrom(cstate);
    free_parsestate(pstate);
    table_close(view, NoLock);
    if (qc != nullptr)
        SetQueryCompletion(qc, CMDTAG_COPY, processed);
    return true;
}

}  // namespace tscoll::pg
