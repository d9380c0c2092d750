// A model file: may include io.
#pragma once
#include "io/reader.h"
