# Writes the bytes of INPUT as a comma-separated list of C++ integer literals into OUTPUT, to be
# included inside an array initializer (the batched-copy kernels' fatbin).
#   cmake -DINPUT=file -DOUTPUT=file.inc -P embed_bytes.cmake
file(READ "${INPUT}" hex HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
string(REGEX REPLACE "(0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,)" "\\1\n" bytes "${bytes}")
get_filename_component(name "${INPUT}" NAME)
file(WRITE "${OUTPUT}.tmp" "// Generated at build time from ${name} by cmake/embed_bytes.cmake.\n${bytes}\n")
file(RENAME "${OUTPUT}.tmp" "${OUTPUT}")
