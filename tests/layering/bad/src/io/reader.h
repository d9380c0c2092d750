// A deliberately broken tree: io must not include models.
#pragma once
#include "models/family.h"
