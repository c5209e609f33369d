# The library's sources, one list per layer of the design (each depends only on those above it).
# Private headers live beside the code that owns them and are included by layer path
# ("runtime/library_box.hpp"), so a dependency between layers is visible in the include line.
set(CUDACORE_LOADER_SOURCES
  src/loader/dynamic_library.cpp
  src/loader/driver_api.cpp
  src/loader/compiler_apis.cpp
  src/loader/nvvm_api.cpp
  src/loader/nvml_api.cpp)
set(CUDACORE_ERRORS_SOURCES
  src/errors/errors.cpp
  src/errors/warnings.cpp)
set(CUDACORE_SUPPORT_SOURCES
  src/support/atomic_file.cpp
  src/support/child_process.cpp
  src/support/temporary_directory.cpp
  src/support/version.cpp
  src/support/thread_block_pool.cpp
  src/support/parallel_steps.cpp)
set(CUDACORE_CODE_SOURCES
  src/code/program_options.cpp
  src/code/program.cpp
  src/code/nvvm_compile.cpp
  src/code/nvrtc_compile.cpp
  src/code/pch_directory.cpp
  src/code/linker_options.cpp
  src/code/linker.cpp
  src/code/nvjitlink_run.cpp
  src/code/object_code.cpp
  src/code/object_code_serialization.cpp
  src/code/code_inspection.cpp
  src/code/compiler_versions.cpp
  src/code/object_code_identity.cpp
  src/code/kernel_parameter_count.cpp
  src/code/code_validation.cpp)
set(CUDACORE_CACHE_SOURCES
  src/cache/cache_key.cpp
  src/cache/memory_program_cache.cpp
  src/cache/disk_program_cache.cpp
  src/cache/shard_counters.cpp
  src/cache/cached_compile.cpp
  src/cache/include_directives.cpp
  src/cache/include_lookups.cpp
  src/cache/compile_many.cpp)
set(CUDACORE_RUNTIME_SOURCES
  src/runtime/system.cpp
  src/runtime/device.cpp
  src/runtime/device_properties.cpp
  src/runtime/system_info.cpp
  src/runtime/context.cpp
  src/runtime/stream.cpp
  src/runtime/event.cpp
  src/runtime/library_box.cpp
  src/runtime/launch_streams.cpp
  src/runtime/deferred_release.cpp
  src/runtime/object_code_loading.cpp
  src/runtime/checked_load.cpp
  src/runtime/code_arch_fit.cpp
  src/runtime/kernel.cpp
  src/runtime/launch.cpp
  src/runtime/multi_device.cpp
  src/runtime/identity.cpp
  src/runtime/capture_registry.cpp)
set(CUDACORE_MEMORY_SOURCES
  src/memory/memory_resource.cpp
  src/memory/device_memory_resource.cpp
  src/memory/pinned_memory_resource.cpp
  src/memory/managed_memory_resource.cpp
  src/memory/buffer.cpp
  src/memory/buffer_box_arena.cpp
  src/memory/module_globals.cpp
  src/memory/ipc_memory_pool.cpp
  src/memory/pool_access.cpp
  src/memory/peer_copy.cpp
  src/memory/buffer_identity.cpp
  src/memory/caching_memory_resource.cpp)
# Sharing pools, buffers and events between processes; the channel and descriptors need no GPU.
set(CUDACORE_IPC_SOURCES
  src/ipc/ipc_descriptor.cpp
  src/ipc/ipc_channel.cpp
  src/ipc/ipc_memory.cpp
  src/ipc/ipc_event.cpp)
set(CUDACORE_GRAPH_SOURCES
  src/graph/graph.cpp
  src/graph/graph_exec.cpp
  src/graph/graph_builder.cpp
  src/graph/graph_memory_resource.cpp
  src/memory/memory_pool.cpp
  src/memory/memory_option_checks.cpp
  src/memory/owned_pool.cpp
  src/memory/virtual_memory_resource.cpp
  src/memory/pinned_memory_pool_resource.cpp
  src/memory/pool_allocation.cpp
  src/memory/synchronous_memory_resource.cpp
  src/memory/managed_memory.cpp
  src/memory/registered_host_memory.cpp
  src/memory/batched_copy.cpp
  src/memory/dlpack.cpp)
set(CUDACORE_SOURCES
  ${CUDACORE_LOADER_SOURCES} ${CUDACORE_ERRORS_SOURCES} ${CUDACORE_SUPPORT_SOURCES}
  ${CUDACORE_CODE_SOURCES} ${CUDACORE_CACHE_SOURCES} ${CUDACORE_RUNTIME_SOURCES}
  ${CUDACORE_MEMORY_SOURCES} ${CUDACORE_IPC_SOURCES} ${CUDACORE_GRAPH_SOURCES})
# Green contexts (runtime: SM partitions), tensor maps (memory: TMA descriptors of a Buffer) and
# strided memory views (memory: typed layouts over a Buffer, giving tensor maps).
list(APPEND CUDACORE_SOURCES src/runtime/green_context.cpp src/memory/tensor_map.cpp
     src/memory/strided_memory_view.cpp)
