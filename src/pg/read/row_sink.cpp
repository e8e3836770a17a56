#include "pg/read/row_sink.hpp"

extern "C" {
#include "funcapi.h"
#include "utils/tuplestore.h"
}

#include "pg/guard.hpp"

namespace tscoll::pg {

TuplestoreSink::TuplestoreSink(FunctionCallInfo fcinfo) : fcinfo_(fcinfo) {
    pg_call([&] { InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC); });
}

TupleDesc TuplestoreSink::desc() const {
    return reinterpret_cast<ReturnSetInfo *>(fcinfo_->resultinfo)->setDesc;
}

void TuplestoreSink::put(const Datum *values, const bool *nulls) {
    auto *rsinfo = reinterpret_cast<ReturnSetInfo *>(fcinfo_->resultinfo);
    pg_call([&] {
        tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, const_cast<Datum *>(values),
                             const_cast<bool *>(nulls));
    });
}

}  // namespace tscoll::pg
