# The library's sources, one list per layer of src/layers.txt (each uses only the layers it names
# there).
# Private headers live beside the code that owns them and are included by layer path
# ("runtime/library_box.hpp"), so a dependency between layers is visible in the include line.
set(CUDACORE_LOADER_SOURCES
  src/loader/dynamic_library.cpp
  src/loader/driver_api.cpp
  src/loader/device_queries.cpp
  src/loader/compiler_apis.cpp
  src/loader/compiler_calls_at_exit.cpp
  src/loader/signal_imports.cpp
  src/loader/nvvm_api.cpp
  src/loader/nvfatbin_api.cpp
  src/loader/nvml_api.cpp
  src/loader/gl_context_query.cpp)
set(CUDACORE_ERRORS_SOURCES
  src/errors/errors.cpp
  src/errors/compile_errors.cpp
  src/errors/errors_driver_status.cpp
  src/errors/warnings.cpp
  src/errors/driver_log.cpp)
set(CUDACORE_SUPPORT_SOURCES
  src/support/atomic_file.cpp
  src/support/serialized_file.cpp
  src/support/cache_directory.cpp
  src/support/child_process.cpp
  src/support/parent_death.cpp
  src/support/removed_on_signal.cpp
  src/support/system_call_error.cpp
  src/support/termination_signals.cpp
  src/support/owned_folder.cpp
  src/support/private_folder.cpp
  src/support/temporary_directory.cpp
  src/support/watched_environment.cpp
  src/support/version.cpp
  src/support/thread_block_pool.cpp
  src/support/thread_exit.cpp
  src/support/parallel_steps.cpp
  src/support/owning_handle.cpp
  src/support/tracing.cpp
  src/support/tracing_handles.cpp
  src/support/payload_codec.cpp
  src/support/sha256.cpp)
set(CUDACORE_CODE_SOURCES
  src/code/program_options.cpp
  src/code/program_options_device_arch.cpp
  src/code/cuda_home.cpp
  src/code/program.cpp
  src/code/compile_options.cpp
  src/code/cancellation.cpp
  src/code/compiler_build.cpp
  src/code/compiler_environment.cpp
  src/code/compiler_identity.cpp
  src/code/compile_hints.cpp
  src/code/compile_request.cpp
  src/code/nvvm_compile.cpp
  src/code/nvrtc_compile.cpp
  src/code/debug_source.cpp
  src/code/linker_options.cpp
  src/code/linker.cpp
  src/code/driver_link_context.cpp
  src/code/nvjitlink_run.cpp
  src/code/worker_messages.cpp
  src/code/snapshot_compile.cpp
  src/code/object_code.cpp
  src/code/object_code_serialization.cpp
  src/code/code_inspection.cpp
  src/code/cxx_global_names.cpp
  src/code/ptx_unused_globals.cpp
  src/code/generated_headers.cpp
  src/code/fatbin.cpp
  src/code/object_code_identity.cpp
  src/code/kernel_parameter_count.cpp
  src/code/code_validation.cpp
  src/code/header_trace.cpp
  src/code/header_bundle_code.cpp
  src/code/cache_key.cpp
  src/code/path_key.cpp
  src/code/project_search.cpp
  src/code/program_key_memo.cpp
  src/code/code_keys.cpp
  src/code/checked_compile.cpp)
# Headers: what a C++ compile reads (the include search, the snapshot a cached compile is given
# from memory), header bundles and their folders, PCH folders. Below code, which compiles.
set(CUDACORE_HEADERS_SOURCES
  src/headers/pch_directory.cpp
  src/headers/include_directives.cpp
  src/headers/header_bundle.cpp
  src/headers/includer_folder_rule.cpp
  src/headers/bundle_folder.cpp
  src/headers/standard_headers.cpp
  src/headers/standard_header_stubs.cpp
  src/headers/header_bundle_format.cpp
  src/headers/header_closure.cpp
  src/headers/embedded_header_bundle.cpp
  src/headers/include_lookups.cpp
  src/headers/compile_snapshot.cpp)
# The cache: the memory tier, the tiered cache and what the tiers share (counters, entry trust,
# artefacts) in src/cache; the disk tier in src/cache/disk, the compile drivers over any cache in
# src/cache/compile. The remote tier is a layer and a library of its own (src/remote/remote.cmake).
set(CUDACORE_CACHE_SOURCES
  src/cache/program_cache.cpp
  src/cache/cache_activity.cpp
  src/cache/sha256_seal.cpp
  src/cache/seal_secret.cpp
  src/cache/entry_trust.cpp
  src/cache/memory_program_cache.cpp
  src/cache/tiered_program_cache.cpp
  src/cache/cache_artefact_format.cpp
  src/cache/cache_artefact.cpp
  src/cache/disk/disk_program_cache.cpp
  src/cache/disk/disk_program_cache_opening.cpp
  src/cache/disk/disk_program_cache_entry.cpp
  src/cache/disk/disk_files.cpp
  src/cache/disk/disk_shards.cpp
  src/cache/disk/disk_shard_repair.cpp
  src/cache/disk/disk_eviction.cpp
  src/cache/disk/disk_program_cache_maintenance.cpp
  src/cache/disk/shard_counters.cpp
  src/cache/compile/cached_compile.cpp
  src/cache/compile/compile_many.cpp
  src/cache/compile/fatbin_compile.cpp)
set(CUDACORE_RUNTIME_SOURCES
  src/runtime/system.cpp
  src/runtime/release/reset_tolerance.cpp
  src/runtime/release/launch_streams.cpp
  src/runtime/release/deferred_release.cpp
  src/runtime/release/release_after_uses.cpp
  src/runtime/release/capture_registry.cpp
  src/runtime/system_compiler_versions.cpp
  src/runtime/device.cpp
  src/runtime/device_lookup.cpp
  src/runtime/pointer_attributes.cpp
  src/runtime/device_properties.cpp
  src/runtime/system_info.cpp
  src/runtime/system_info_readings.cpp
  src/runtime/system_topology.cpp
  src/runtime/system_topology_format.cpp
  src/runtime/context.cpp
  src/runtime/context_options.cpp
  src/runtime/context_objects.cpp
  src/runtime/context_creation.cpp
  src/runtime/context_limits.cpp
  src/runtime/cache_preference.cpp
  src/runtime/primary_context.cpp
  src/runtime/context_peer_access.cpp
  src/runtime/current_context_scope.cpp
  src/runtime/stream.cpp
  src/runtime/stream_attributes.cpp
  src/runtime/profiler.cpp
  src/runtime/event.cpp
  src/runtime/library_box.cpp
  src/runtime/loaded_library.cpp
  src/runtime/load_options.cpp
  src/runtime/object_code_loading.cpp
  src/runtime/driver_link_context.cpp
  src/runtime/checked_load.cpp
  src/runtime/code_arch_fit.cpp
  src/runtime/kernel.cpp
  src/runtime/launch.cpp
  src/runtime/launch_config.cpp
  src/runtime/launch_check.cpp
  src/runtime/grid_sizing.cpp
  src/runtime/device_peers.cpp
  src/runtime/device_scope.cpp
  src/runtime/identity.cpp
  src/runtime/green_context.cpp
  src/runtime/checkpoint.cpp)
set(CUDACORE_MEMORY_SOURCES
  src/memory/memory_resource.cpp
  src/memory/device_memory_resource.cpp
  src/memory/legacy_pinned_memory_resource.cpp
  src/memory/managed_memory_resource.cpp
  src/memory/managed_attach.cpp
  src/memory/buffer.cpp
  src/memory/buffer_box_arena.cpp
  src/memory/buffer_slice.cpp
  src/memory/ipc_memory_pool.cpp
  src/memory/device_memory_resource_access.cpp
  src/memory/memory_access.cpp
  src/memory/memory_location.cpp
  src/memory/peer_copy.cpp
  src/memory/buffer_identity.cpp
  src/memory/caching_memory_resource.cpp
  src/memory/memory_pool.cpp
  src/memory/memory_pool_from_handle.cpp
  src/memory/memory_option_checks.cpp
  src/memory/owned_pool.cpp
  src/memory/device_memory_resource_owned_pool.cpp
  src/memory/vmm/virtual_memory_resource.cpp
  src/memory/vmm/physical_allocation.cpp
  src/memory/vmm/virtual_address_range.cpp
  src/memory/vmm/virtual_memory_mapping.cpp
  src/memory/vmm/virtual_memory_checks.cpp
  src/memory/pinned_memory_pool_resource.cpp
  src/memory/pool_allocation.cpp
  src/memory/synchronous_memory_resource.cpp
  src/memory/managed_memory.cpp
  src/memory/registered_host_memory.cpp
  src/memory/batched_copy.cpp
  src/memory/device_memory.cpp
  src/memory/primary_context_reset.cpp
  src/memory/object_code_globals.cpp)
# Sharing pools, buffers and events between processes; the channel and descriptors need no GPU.
set(CUDACORE_IPC_SOURCES
  src/ipc/ipc_descriptor.cpp
  src/ipc/ipc_channel.cpp
  src/ipc/ipc.cpp
  src/ipc/ipc_ordinary_memory.cpp
  src/ipc/ipc_event.cpp
  src/ipc/physical_allocation_ipc.cpp)
set(CUDACORE_GRAPH_SOURCES
  src/graph/graph.cpp
  src/graph/graph_node.cpp
  src/graph/graph_conditional.cpp
  src/graph/graph_update_error.cpp
  src/graph/kernel_arguments.cpp
  src/graph/graph_allocation_nodes.cpp
  src/graph/graph_node_params.cpp
  src/graph/graph_params.cpp
  src/graph/graph_structure.cpp
  src/graph/graph_exec.cpp
  src/graph/graph_exec_nodes.cpp
  src/graph/graph_exec_params.cpp
  src/graph/graph_builder.cpp
  src/graph/stream_capture.cpp
  src/graph/graph_memory_resource.cpp
  src/graph/stream_memory_operations.cpp)
# Views of memory that are not memory resources: CUDA arrays and their copies, textures,
# surfaces, tensor maps.
set(CUDACORE_VIEWS_SOURCES
  src/views/tensor_map.cpp
  src/views/array_format.cpp
  src/views/cuda_array.cpp
  src/views/mipmapped_array.cpp
  src/views/array_copy.cpp
  src/views/texture.cpp
  src/views/surface.cpp)
# Exchange with other libraries: DLPack tensors and the strided views over them, OpenGL resources.
set(CUDACORE_INTEROP_SOURCES
  src/interop/dlpack.cpp
  src/interop/strided_memory_view.cpp
  src/interop/graphics_resource.cpp)
# The layers, lowest first, as src/layers.txt states them (the one statement of the layers and of
# what each may use): each with sources here is an object library of its own
# (cudacore_layer_<layer>, made from CUDACORE_<LAYER>_SOURCES), so scripts/check-layer-symbols.py
# sees which layer defines each symbol. mpi and remote have no list here: each is a library of its
# own.
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/layers.txt)
file(STRINGS ${CMAKE_CURRENT_LIST_DIR}/layers.txt cudacore_layer_lines REGEX "^[a-z]+:")
set(CUDACORE_LAYERS)
foreach(line IN LISTS cudacore_layer_lines)
  string(REGEX MATCH "^[a-z]+" layer "${line}")
  string(TOUPPER ${layer} layer_upper)
  if(DEFINED CUDACORE_${layer_upper}_SOURCES)
    list(APPEND CUDACORE_LAYERS ${layer})
  endif()
endforeach()
