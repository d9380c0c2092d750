// Precompiled for the Catch2 test executables (tests/CMakeLists.txt): Catch2's and nlohmann's
// single headers cost seconds in every test file, more under the sanitizers. Files still include
// what they use; Catch2's implementation (catch_impl.cpp) is compiled without it.
#pragma once
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>
