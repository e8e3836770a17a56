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

// Where the work splits in two halves, by the measurements of each item.
size_t half_of(const std::vector<uint64_t> &measurements, uint64_t total) {
    uint64_t seen = 0;
    for (size_t i = 0; i < measurements.size(); i++) {
        seen += measurements[i];
        if (2 * seen >= total)
            return i + 1;
    }
    return measurements.size();
}

// work(from, to) over items [0, n) of `measurements` each: the later half
// on a second thread when there is enough to share. The thread starts with
// every signal blocked (PostgreSQL's handlers belong to the backend's
// thread); its exception is raised here after the join; a thread that
// cannot be had leaves all the work here.
template <typename Work>
void on_two_threads(const std::vector<uint64_t> &measurements, Work work) {
    uint64_t total = 0;
    for (uint64_t m : measurements)
        total += m;
    size_t n = measurements.size();
    size_t split = half_of(measurements, total);
    if (total < kMeasurementsForTwoThreads || split >= n) {
        work(0, n);
        return;
    }
    sigset_t all, caller;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &caller);
    std::exception_ptr failure;
    std::thread second;
    try {
        second = std::thread([&] {
            try {
                work(split, n);
            } catch (...) {
                failure = std::current_exception();
            }
        });
    } catch (const std::system_error &) {
        split = n;  // no thread to be had: all here
    }
    pthread_sigmask(SIG_SETMASK, &caller, nullptr);
    try {
        work(0, split);
    } catch (...) {
        if (second.joinable())
            second.join();
        throw;
    }
    if (second.joinable())
        second.join();
    if (failure)
        std::rethrow_exception(failure);
}

}  // namespace

std::vector<EncodedBucket> encode_buckets(const std::vector<const Bucket *> &buckets) {
    std::vector<EncodedBucket> out(buckets.size());
    std::vector<uint64_t> measurements;
    for (const Bucket *b : buckets)
        measurements.push_back(b->count());
    on_two_threads(measurements, [&](size_t from, size_t to) {
        for (size_t i = from; i < to; i++)
            out[i] = EncodedBucket{buckets[i]->encode(), buckets[i]->control()};
    });
    return out;
}

void pack_buckets(const std::vector<Bucket *> &buckets) {
    std::vector<uint64_t> measurements;
    for (const Bucket *b : buckets)
        measurements.push_back(b->data().count());
    on_two_threads(measurements, [&](size_t from, size_t to) {
        for (size_t i = from; i < to; i++)
            buckets[i]->pack();
    });
}

}  // namespace tscoll::pg
