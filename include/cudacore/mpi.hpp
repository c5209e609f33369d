/// @file
/// cudacore::mpi (optional; not in cudacore.hpp): moving code between ranks, compiling with all
/// ranks, picking each rank's GPU. Every call needs MPI initialised, is collective over `comm`
/// and fails on every rank when one fails (MpiError for MPI's errors). Contract: docs/mpi.md.
#pragma once

#include "cudacore/mpi_compile.hpp"
#include "cudacore/mpi_devices.hpp"
#include "cudacore/mpi_transfer.hpp"
