# Writes OUT, the C++ initializers of relaxc's embedded Python peers (tools/relaxc/python_peer.cc):
# one `{"NAME.py", R"relax_peer(SOURCE)relax_peer"},` line per DIR/*.py, sorted by name.
# Run as: cmake -DDIR=<peers folder> -DOUT=<header> -P embed_scripts.cmake
file(GLOB scripts LIST_DIRECTORIES false "${DIR}/*.py")
list(SORT scripts)
set(text "// Generated from ${DIR}/*.py by embed_scripts.cmake; do not edit.\n")
foreach(f IN LISTS scripts)
  file(READ "${f}" body)
  string(FIND "${body}" ")relax_peer\"" clash)
  if(NOT clash EQUAL -1)
    message(FATAL_ERROR "${f} contains ')relax_peer\"', the raw-string delimiter of its embedding")
  endif()
  get_filename_component(name "${f}" NAME)
  string(APPEND text "{\"${name}\", R\"relax_peer(${body})relax_peer\"},\n")
endforeach()
# Rewritten only when it changes, so an unchanged script rebuilds nothing.
file(WRITE "${OUT}.tmp" "${text}")
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUT}.tmp")
