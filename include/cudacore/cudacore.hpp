/// @file
/// Everything libcudacore offers, in one include: the layers' headers, lowest layer first
/// (src/layers.txt). The remote tier (cudacore/remote_program_cache.hpp, cudacore::remote) and
/// MPI (cudacore/mpi.hpp, cudacore::mpi) are libraries of their own, included by name.
#pragma once

// errors
#include "cudacore/compile_errors.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/warnings.hpp"

// support
#include "cudacore/tracing.hpp"
#include "cudacore/tracing_handles.hpp"
#include "cudacore/version.hpp"

// headers
#include "cudacore/embedded_header_bundle.hpp"
#include "cudacore/header_bundle.hpp"
#include "cudacore/standard_headers.hpp"

// code
#include "cudacore/cache_key.hpp"
#include "cudacore/cancellation.hpp"
#include "cudacore/code_inspection.hpp"
#include "cudacore/compile_options.hpp"
#include "cudacore/fatbin.hpp"
#include "cudacore/generated_headers.hpp"
#include "cudacore/linker.hpp"
#include "cudacore/linker_options.hpp"
#include "cudacore/object_code.hpp"
#include "cudacore/program.hpp"
#include "cudacore/program_options.hpp"

// cache
#include "cudacore/cache_activity.hpp"
#include "cudacore/cache_artefact.hpp"
#include "cudacore/cached_compile.hpp"
#include "cudacore/compile_many.hpp"
#include "cudacore/disk_program_cache.hpp"
#include "cudacore/fatbin_compile.hpp"
#include "cudacore/memory_program_cache.hpp"
#include "cudacore/program_cache.hpp"
#include "cudacore/tiered_program_cache.hpp"

// runtime
#include "cudacore/cache_preference.hpp"
#include "cudacore/checked_load.hpp"
#include "cudacore/checkpoint.hpp"
#include "cudacore/context.hpp"
#include "cudacore/context_limits.hpp"
#include "cudacore/context_peer_access.hpp"
#include "cudacore/current_context_scope.hpp"
#include "cudacore/device.hpp"
#include "cudacore/device_properties.hpp"
#include "cudacore/device_scope.hpp"
#include "cudacore/event.hpp"
#include "cudacore/green_context.hpp"
#include "cudacore/grid_sizing.hpp"
#include "cudacore/identity.hpp"
#include "cudacore/kernel.hpp"
#include "cudacore/launch.hpp"
#include "cudacore/launch_check.hpp"
#include "cudacore/launch_config.hpp"
#include "cudacore/load_options.hpp"
#include "cudacore/loaded_library.hpp"
#include "cudacore/pointer_attributes.hpp"
#include "cudacore/primary_context.hpp"
#include "cudacore/profiler.hpp"
#include "cudacore/stream.hpp"
#include "cudacore/stream_attributes.hpp"
#include "cudacore/system.hpp"
#include "cudacore/system_info.hpp"
#include "cudacore/system_topology.hpp"

// memory
#include "cudacore/batched_copy.hpp"
#include "cudacore/buffer.hpp"
#include "cudacore/buffer_slice.hpp"
#include "cudacore/caching_memory_resource.hpp"
#include "cudacore/device_memory_resource.hpp"
#include "cudacore/legacy_pinned_memory_resource.hpp"
#include "cudacore/managed_attach.hpp"
#include "cudacore/managed_memory.hpp"
#include "cudacore/managed_memory_resource.hpp"
#include "cudacore/memory_location.hpp"
#include "cudacore/memory_pool.hpp"
#include "cudacore/memory_resource.hpp"
#include "cudacore/peer_copy.hpp"
#include "cudacore/physical_allocation.hpp"
#include "cudacore/pinned_memory_pool_resource.hpp"
#include "cudacore/pinned_memory_resource.hpp"
#include "cudacore/registered_host_memory.hpp"
#include "cudacore/synchronous_memory_resource.hpp"
#include "cudacore/virtual_address_range.hpp"
#include "cudacore/virtual_memory_mapping.hpp"
#include "cudacore/virtual_memory_resource.hpp"

// graph
#include "cudacore/graph.hpp"
#include "cudacore/graph_allocation_nodes.hpp"
#include "cudacore/graph_builder.hpp"
#include "cudacore/graph_conditional.hpp"
#include "cudacore/graph_exec.hpp"
#include "cudacore/graph_memory_resource.hpp"
#include "cudacore/graph_node.hpp"
#include "cudacore/graph_node_params.hpp"
#include "cudacore/graph_update_error.hpp"
#include "cudacore/kernel_arguments.hpp"
#include "cudacore/stream_memory_operations.hpp"

// ipc
#include "cudacore/ipc.hpp"
#include "cudacore/ipc_channel.hpp"
#include "cudacore/ipc_descriptor.hpp"
#include "cudacore/physical_allocation_ipc.hpp"

// views
#include "cudacore/array_copy.hpp"
#include "cudacore/array_format.hpp"
#include "cudacore/cuda_array.hpp"
#include "cudacore/mipmapped_array.hpp"
#include "cudacore/surface.hpp"
#include "cudacore/tensor_map.hpp"
#include "cudacore/texture.hpp"

// interop
#include "cudacore/dlpack.hpp"
#include "cudacore/graphics_resource.hpp"
#include "cudacore/strided_memory_view.hpp"
