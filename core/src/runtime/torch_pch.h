// Precompiled for attnscope_core's sources (see core/CMakeLists.txt). Inference-only ATen API.
#pragma once
#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>
