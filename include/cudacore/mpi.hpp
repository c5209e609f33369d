/// @file
/// cudacore::mpi: moving ObjectCode between ranks (mpi_transfer.hpp), compiling programs with all
/// ranks (mpi_compile.hpp), picking each rank's GPU (mpi_devices.hpp). The optional component
/// cudacore::mpi; cudacore.hpp does not include it. Every call needs MPI initialized, is
/// collective over `comm`, and fails on every rank when one fails (MpiError for MPI's own
/// errors); code travels serialized and checked. The contract: docs/mpi.md.
#pragma once

#include "cudacore/mpi_compile.hpp"
#include "cudacore/mpi_devices.hpp"
#include "cudacore/mpi_transfer.hpp"
