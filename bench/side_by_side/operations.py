"""The rows of the side-by-side table, in table order: ids (the C++ program's), names, plans."""

# (operation id, what the table calls it). The ids are the C++ program's.
OPERATIONS = [
    ("compile_small", "compile small kernel to cubin"),
    ("compile_cuda_std", "compile <cuda/std> kernel to cubin"),
    ("memory_cache_hit_small", "memory cache hit, small"),
    ("disk_cache_hit_small", "disk cache hit, small"),
    ("memory_cache_hit_cuda_std", "memory cache hit, <cuda/std>"),
    ("disk_cache_hit_cuda_std", "disk cache hit, <cuda/std>"),
    ("object_code_from_bytes", "ObjectCode from cubin bytes"),
    ("get_kernel_first", "first get_kernel (load), cubin bytes from elsewhere"),
    ("get_kernel_first_compiled", "first get_kernel (load), code compiled in this process"),
    ("get_kernel_repeated", "repeated get_kernel"),
    ("launch_empty_enqueue", "launch empty kernel (enqueue)"),
    ("launch_8_args_enqueue", "launch 8-argument kernel (enqueue)"),
    ("launch_sync_roundtrip", "launch + synchronize"),
    ("event_create", "event create"),
    ("event_create_destroy", "event create + destroy"),
    ("event_elapsed_time", "event elapsed time"),
    ("alloc_free_1mib", "allocate + free 1 MiB (stream-ordered)"),
    ("slice_copy_64kib", "copy 64 KiB between parts of two buffers (slices)"),
    ("pointer_attributes", "attributes of an address (one query)"),
    ("serialize_roundtrip", "serialize + deserialize"),
    ("compile_cuda_std_32_specializations", "compile 32 specializations of the <cuda/std> kernel"),
    ("compile_cuda_std_second_kernel", "compile a second <cuda/std> kernel (same headers)"),
]
GPU_OPERATIONS = {
    "get_kernel_first", "get_kernel_first_compiled", "get_kernel_repeated", "launch_empty_enqueue",
    "launch_8_args_enqueue", "launch_sync_roundtrip", "event_create", "event_create_destroy", "event_elapsed_time",
    "alloc_free_1mib", "slice_copy_64kib", "pointer_attributes",
}
SYSTEMS = ["raw", "cudacore", "cuda.core", "CuPy"]

# Warm-up and timed repetitions per operation (Python side; the C++ program has its own, alike).
PLANS = {
    "compile_small": (2, 20),
    "compile_cuda_std": (1, 6),
    "memory_cache_hit_small": (20, 300),
    "disk_cache_hit_small": (20, 300),
    "memory_cache_hit_cuda_std": (20, 300),
    "disk_cache_hit_cuda_std": (20, 300),
    "object_code_from_bytes": (10, 300),
    "get_kernel_first": (5, 200),
    "get_kernel_first_compiled": (3, 60),
    "get_kernel_repeated": (5, 300),
    "launch_empty_enqueue": (10, 300),
    "launch_8_args_enqueue": (10, 300),
    "launch_sync_roundtrip": (20, 500),
    "event_create": (5, 300),
    "event_create_destroy": (5, 300),
    "event_elapsed_time": (5, 300),
    "alloc_free_1mib": (5, 300),
    "slice_copy_64kib": (5, 300),
    "pointer_attributes": (5, 300),
    "serialize_roundtrip": (10, 300),
    "compile_cuda_std_32_specializations": (1, 3),
    "compile_cuda_std_second_kernel": (1, 6),
}
# Graphs (graphs.cpp, graphs.py): graphs of 1, 16 and 256 empty-kernel nodes. Launches and
# replays are enqueue-only and per kernel; capture + instantiate is per graph.
GRAPH_SIZES = (1, 16, 256)
for _n in GRAPH_SIZES:
    OPERATIONS.append((f"launch_{_n}_kernels", f"{_n} empty-kernel launches, per kernel"))
for _n in GRAPH_SIZES:
    OPERATIONS.append((f"graph_replay_{_n}", f"replay {_n}-node graph, per kernel"))
for _n in GRAPH_SIZES:
    OPERATIONS.append((f"graph_capture_instantiate_{_n}", f"capture + instantiate {_n}-node graph"))
for _n in GRAPH_SIZES:
    GPU_OPERATIONS |= {f"launch_{_n}_kernels", f"graph_replay_{_n}", f"graph_capture_instantiate_{_n}"}
    PLANS[f"launch_{_n}_kernels"] = (10, 300)
    PLANS[f"graph_replay_{_n}"] = (10, 300)
    PLANS[f"graph_capture_instantiate_{_n}"] = (5, 200)
del _n
# Per-node update (graphs.cpp, graphs.py): a one-node graph of the 8-argument kernel, given a new
# first argument before each launch, through a per-node update or by instantiating again.
OPERATIONS.append(("graph_node_update_launch", "per-node kernel update + launch"))
OPERATIONS.append(("graph_instantiate_launch", "instantiate again + launch"))
GPU_OPERATIONS |= {"graph_node_update_launch", "graph_instantiate_launch"}
PLANS["graph_node_update_launch"] = (10, 300)
PLANS["graph_instantiate_launch"] = (3, 100)
# Signals between two streams (signals.cpp): enqueue-only, per pair; no cuda.core or CuPy side.
OPERATIONS += [
    ("event_record_wait_pair", "event record + wait pair"),
    ("stream_write_wait_pair", "stream write + wait pair"),
    ("stream_write_wait_pair_buffer", "stream write + wait pair, word as a Buffer"),
]
GPU_OPERATIONS |= {"event_record_wait_pair", "stream_write_wait_pair",
                   "stream_write_wait_pair_buffer"}
PLANS.update({"event_record_wait_pair": (10, 300), "stream_write_wait_pair": (10, 300),
              "stream_write_wait_pair_buffer": (10, 300)})
