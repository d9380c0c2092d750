// OpenBLAS's thread restart (runtime/blas_kernels.h, shortenBlasSpin): the shorter spin is what
// OpenBLAS then runs with, the environment is left as it was, and products on the restarted
// threads are still right.
#include "attnscope/runtime/blas_kernels.h"
#include "runtime/blas_threads.h"

#include <ATen/ATen.h>
#include <catch2/catch.hpp>

#include <dlfcn.h>

#include <cstdlib>
#include <optional>
#include <string>

namespace test_blas_threads {

using namespace attnscope;

namespace {

// The variable's value, restored when the guard goes.
class EnvGuard {
public:
    explicit EnvGuard(const char* name) : name_(name) {
        if (const char* v = std::getenv(name)) saved_ = v;
        unsetenv(name);
    }
    ~EnvGuard() {
        if (saved_)
            setenv(name_, saved_->c_str(), 1);
        else
            unsetenv(name_);
    }
    EnvGuard(const EnvGuard&) = delete;
    EnvGuard& operator=(const EnvGuard&) = delete;

private:
    const char* name_;
    std::optional<std::string> saved_;
};

}  // namespace

TEST_CASE("shortenBlasSpin restarts OpenBLAS's threads with a 2^18-cycle spin and products stay right") {
    using Timeout = unsigned (*)();
    const auto timeout = reinterpret_cast<Timeout>(dlsym(RTLD_DEFAULT, "openblas_thread_timeout"));
    // scripts/dev.sh installs OpenBLAS's pthread build; without it the restart is a no-op.
    REQUIRE(timeout);
    REQUIRE(dlsym(RTLD_DEFAULT, "blas_thread_init"));
    const EnvGuard a("OPENBLAS_THREAD_TIMEOUT"), b("GOTO_THREAD_TIMEOUT");
    const int threads = blasThreads();
    shortenBlasSpin();
    CHECK(timeout() == 18u);
    CHECK(std::getenv("OPENBLAS_THREAD_TIMEOUT") == nullptr);
    CHECK(blasThreads() == threads);

    // A product big enough for OpenBLAS to split over its threads, against a double loop.
    const std::int64_t n = 384;
    const at::Tensor x = at::randn({n, n}, at::kFloat), y = at::randn({n, n}, at::kFloat);
    const at::Tensor got = at::mm(x, y);
    const auto xa = x.accessor<float, 2>(), ya = y.accessor<float, 2>();
    const auto ga = got.accessor<float, 2>();
    double worst = 0;
    for (std::int64_t i = 0; i < n; i += 7)
        for (std::int64_t j = 0; j < n; ++j) {
            double want = 0;
            for (std::int64_t k = 0; k < n; ++k) want += static_cast<double>(xa[i][k]) * ya[k][j];
            worst = std::max(worst, std::abs(ga[i][j] - want));
        }
    CHECK(worst < 1e-3);

    SECTION("a timeout the user set is kept") {
        setenv("OPENBLAS_THREAD_TIMEOUT", "26", 1);
        using ReadEnv = void (*)();
        reinterpret_cast<ReadEnv>(dlsym(RTLD_DEFAULT, "openblas_read_env"))();
        shortenBlasSpin();
        CHECK(timeout() == 26u);
        CHECK(std::string(std::getenv("OPENBLAS_THREAD_TIMEOUT")) == "26");
    }
}

}  // namespace test_blas_threads
