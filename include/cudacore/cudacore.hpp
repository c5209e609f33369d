// Everything cudacore offers, in one include.
#pragma once

#include "cudacore/cache_key.hpp"
#include "cudacore/cached_compile.hpp"
#include "cudacore/context.hpp"
#include "cudacore/device.hpp"
#include "cudacore/disk_program_cache.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/event.hpp"
#include "cudacore/memory_program_cache.hpp"
#include "cudacore/object_code.hpp"
#include "cudacore/program_cache.hpp"
#include "cudacore/stream.hpp"
#include "cudacore/system.hpp"
#include "cudacore/version.hpp"
