# Thin wrappers so every dyn library and tool is declared the same way.

# The MLIR/LLVM libraries dyn links: the shared libMLIR/libLLVM for quick
# development links, or static components for self-contained bundles.
#
# Static mode (for the self-contained bundle the GPU machine gets): Debian's
# MLIR CMake targets point at the shared libraries, so final binaries link
# every static MLIR/LLVM archive in one group and the linker keeps only what
# is used; static libraries in between link nothing.
if(NOT DYN_LINK_MLIR_DYLIB)
  file(GLOB DYN_MLIR_ARCHIVES ${LLVM_LIBRARY_DIR}/libMLIR*.a)
  file(GLOB DYN_LLVM_ARCHIVES ${LLVM_LIBRARY_DIR}/libLLVM*.a)
  set(DYN_STATIC_MLIR_LINK -Wl,--start-group ${DYN_MLIR_ARCHIVES} ${DYN_LLVM_ARCHIVES}
      -Wl,--end-group z zstd pthread dl m -Wl,--exclude-libs,ALL -Wl,--gc-sections)
endif()

function(dyn_link_mlir target visibility)
  if(DYN_LINK_MLIR_DYLIB)
    target_link_libraries(${target} ${visibility} MLIR LLVM)
  else()
    get_target_property(type ${target} TYPE)
    if(NOT type STREQUAL "STATIC_LIBRARY")
      target_link_libraries(${target} ${visibility} ${DYN_STATIC_MLIR_LINK})
    endif()
  endif()
endfunction()

# add_dyn_library(name SRCS... [DEPENDS tblgen targets] [LINK dyn libs] [MLIR_LIBS static mlir libs])
function(add_dyn_library name)
  cmake_parse_arguments(ARG "" "" "DEPENDS;LINK;MLIR_LIBS" ${ARGN})
  add_library(${name} STATIC ${ARG_UNPARSED_ARGUMENTS})
  add_library(Dyn::${name} ALIAS ${name})
  if(ARG_DEPENDS)
    add_dependencies(${name} ${ARG_DEPENDS})
  endif()
  target_include_directories(${name} PUBLIC
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
    $<BUILD_INTERFACE:${PROJECT_BINARY_DIR}/include>
    $<INSTALL_INTERFACE:include>)
  target_link_libraries(${name} PUBLIC ${ARG_LINK})
  dyn_link_mlir(${name} PUBLIC ${ARG_MLIR_LIBS})
  install(TARGETS ${name} EXPORT DynTargets ARCHIVE DESTINATION lib LIBRARY DESTINATION lib)
endfunction()

# dyn_tablegen_passes(name doc): a Passes.td's declarations (registerDyn<name>Passes) and its doc page, copied
# into docs/ by the dyn-doc target (doc "Passes" -> docs/passes.md, others -> docs/dialects/<doc>.md).
function(dyn_tablegen_passes name doc)
  set(LLVM_TARGET_DEFINITIONS Passes.td)
  mlir_tablegen(Passes.h.inc -gen-pass-decls -name ${name})
  add_public_tablegen_target(${name}PassIncGen)
  tablegen(MLIR ${doc}.md -gen-pass-doc)
  add_custom_target(${name}PassDocGen DEPENDS ${CMAKE_CURRENT_BINARY_DIR}/${doc}.md)
  set_property(GLOBAL APPEND PROPERTY DYN_DOC_FILES ${CMAKE_CURRENT_BINARY_DIR}/${doc}.md)
  set_property(GLOBAL APPEND PROPERTY DYN_DOC_TARGETS ${name}PassDocGen)
endfunction()

# dyn_tablegen_ops(Dialect prefix): ops, dialect, enums and docs from <Prefix>Ops.td.
function(dyn_tablegen_ops prefix dialect)
  set(LLVM_TARGET_DEFINITIONS ${prefix}Ops.td)
  mlir_tablegen(${prefix}Ops.h.inc -gen-op-decls)
  mlir_tablegen(${prefix}Ops.cpp.inc -gen-op-defs)
  mlir_tablegen(${prefix}Dialect.h.inc -gen-dialect-decls -dialect=${dialect})
  mlir_tablegen(${prefix}Dialect.cpp.inc -gen-dialect-defs -dialect=${dialect})
  mlir_tablegen(${prefix}Enums.h.inc -gen-enum-decls)
  mlir_tablegen(${prefix}Enums.cpp.inc -gen-enum-defs)
  mlir_tablegen(${prefix}Attrs.h.inc -gen-attrdef-decls -attrdefs-dialect=${dialect})
  mlir_tablegen(${prefix}Attrs.cpp.inc -gen-attrdef-defs -attrdefs-dialect=${dialect})
  add_public_tablegen_target(Dyn${prefix}IncGen)
  # Op documentation, copied into docs/dialects by the dyn-doc target.
  set(LLVM_TARGET_DEFINITIONS ${prefix}Ops.td)
  tablegen(MLIR ${prefix}Ops.md -gen-dialect-doc -dialect=${dialect})
  add_custom_target(Dyn${prefix}DocGen DEPENDS ${CMAKE_CURRENT_BINARY_DIR}/${prefix}Ops.md)
  set_property(GLOBAL APPEND PROPERTY DYN_DOC_FILES ${CMAKE_CURRENT_BINARY_DIR}/${prefix}Ops.md)
  set_property(GLOBAL APPEND PROPERTY DYN_DOC_TARGETS Dyn${prefix}DocGen)
endfunction()
