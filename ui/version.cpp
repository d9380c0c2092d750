#include "version.h"

const char* attnscopeVersion() { return ATTNSCOPE_VERSION; }
