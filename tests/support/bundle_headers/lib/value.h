// A header for the embedded bundle test (tests/CMakeLists.txt bundles it).
#pragma once
#include "detail.h"
#define EMBEDDED_VALUE (EMBEDDED_DETAIL + 1)
