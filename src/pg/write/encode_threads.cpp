#include "pg/write/encode_threads.hpp"

#include <pthread.h>
#include <signal.h>

#include <exception>
#include <system_error>
#include <thread>

namespace tscoll::pg {

namespace {

// Below this many measurements, starting a thread costs more than it saves.
constexpr uint64_t kMeasurementsForTwoThreads = 4096;

void encode_range(const std::vector<const Bucket *> &buckets, size_t from, size_t to,
                  std::vector<EncodedBucket> &out) {
    for (size_t i = from; i < to; i++)
        out[i] = EncodedBucket{buckets[i]->encode(), buckets[i]->control()};
}

// Where the measurements split in two halves.
size_t half_of(const std::vector<const Bucket *> &buckets, uint64_t measurements) {
    uint64_t seen = 0;
    for (size_t i = 0; i < buckets.size(); i++) {
        seen += buckets[i]->count();
        if (2 * seen >= measurements)
            return i + 1;
    }
    return buckets.size();
}

}  // namespace

std::vector<EncodedBucket> encode_buckets(const std::vector<const Bucket *> &buckets) {
    std::vector<EncodedBucket> out(buckets.size());
    uint64_t measurements = 0;
    for (const Bucket *b : buckets)
        measurements += b->count();
    size_t split = half_of(buckets, measurements);
    if (measurements < kMeasurementsForTwoThreads || split >= buckets.size()) {
        encode_range(buckets, 0, buckets.size(), out);
        return out;
    }
    // The thread starts with every signal blocked: PostgreSQL's handlers
    // belong to the backend's own thread.
    sigset_t all, caller;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &caller);
    std::exception_ptr failure;
    std::thread second;
    try {
        second = std::thread([&] {
            try {
                encode_range(buckets, split, buckets.size(), out);
            } catch (...) {
                failure = std::current_exception();
            }
        });
    } catch (const std::system_error &) {
        split = buckets.size();  // no thread to be had: all here
    }
    pthread_sigmask(SIG_SETMASK, &caller, nullptr);
    try {
        encode_range(buckets, 0, split, out);
    } catch (...) {
        if (second.joinable())
            second.join();
        throw;
    }
    if (second.joinable())
        second.join();
    if (failure)
        std::rethrow_exception(failure);
    return out;
}

}  // namespace tscoll::pg
