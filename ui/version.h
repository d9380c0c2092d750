#pragma once

// The project version ("0.1.0"), from CMake's project(VERSION).
const char* attnscopeVersion();
