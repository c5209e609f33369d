/// @file
/// cudacore::mpi: moving ObjectCode between the ranks of an MPI job (mpi_transfer.hpp),
/// compiling a list of programs with all ranks together (mpi_compile.hpp), and picking each rank's
/// GPU (mpi_devices.hpp). This header includes all three.
///
/// An optional component: library target cudacore::mpi (find_package(cudacore COMPONENTS mpi)),
/// built when CMake finds MPI. cudacore.hpp does not include this header and the core library
/// never depends on MPI.
///
/// Contract shared by every function here:
///   - MPI must be initialized (MPI_Init / MPI_Init_thread) and not finalized; otherwise
///     InvalidArgumentError, before any communication.
///   - Every function is collective over `comm`: all its ranks call it, in the same order, with
///     the same root and options (as for any MPI collective). Calls on one communicator must not
///     overlap (from several threads); different communicators are independent.
///   - Failures are agreed: when any rank fails (a compile error, a corrupted message, a bad
///     argument on the root), every rank throws, none is left waiting. The failing rank throws its
///     own exception; the others throw one of the same kind (CompileError with the failing
///     program's name, full log and options; SerializationError; CacheError;
///     InvalidArgumentError; otherwise Error) whose message names the failing rank. An error of
///     MPI itself is MpiError (with the default MPI_ERRORS_ARE_FATAL handler, MPI aborts first).
///   - Code travels in ObjectCode's serialized form (magic, version, XXH3-64 checksum; see
///     object_code.hpp): broadcast() sends it in the parts of serialize_parts() (the code bytes
///     straight from the ObjectCode, received into the new ObjectCode's own storage, no copy; the
///     checksum computed piece by piece as the bytes go out and come in, and sent after them),
///     all_gather() as pack(). Every receiver checks it; a received ObjectCode holds no driver
///     state and loads lazily like any other. Messages of any size are sent in chunks of at most
///     TransferOptions::chunk_bytes (MPI counts are `int`).
#pragma once

#include "cudacore/mpi_compile.hpp"
#include "cudacore/mpi_devices.hpp"
#include "cudacore/mpi_transfer.hpp"
