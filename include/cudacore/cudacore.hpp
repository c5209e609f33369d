// Everything cudacore offers, in one include.
#pragma once

#include "cudacore/context.hpp"
#include "cudacore/device.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/event.hpp"
#include "cudacore/object_code.hpp"
#include "cudacore/stream.hpp"
#include "cudacore/system.hpp"
#include "cudacore/version.hpp"
