/// @file
/// cudacore::mpi (optional; not in cudacore.hpp): code between ranks, compiling with all ranks,
/// each rank's GPU. Every call is collective and fails on every rank when one fails: docs/mpi.md.
#pragma once

#include "cudacore/mpi_compile.hpp"
#include "cudacore/mpi_devices.hpp"
#include "cudacore/mpi_transfer.hpp"
