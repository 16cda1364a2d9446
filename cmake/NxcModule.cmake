# nxc_add_module: compile defn functions ahead of time as part of a CMake build.
#
#   include(path/to/nxc/cmake/NxcModule.cmake)
#   nxc_add_module(NAME mlp SOURCE model.nx
#                  FUNCTIONS "predict({f32[64,32], f32[32], f32[32,10], f32[10]}, f32[4,64])"
#                  [TARGET aarch64-linux-gnu] [CPU cortex-a72] [FEATURES +neon] [NXC /path/to/nxc])
#   target_link_libraries(app PRIVATE mlp)
#
# Runs `nxc aot` whenever SOURCE changes and defines an INTERFACE target NAME
# that adds the generated header's directory and links libNAME.a and libnxrt.a.
# TARGET/CPU/FEATURES default to NXC_TARGET/NXC_CPU/NXC_FEATURES (set them in a
# toolchain file); NXC defaults to NXC_EXECUTABLE, else `nxc` on the PATH.
function(nxc_add_module)
  cmake_parse_arguments(ARG "" "NAME;SOURCE;TARGET;CPU;FEATURES;NXC" "FUNCTIONS" ${ARGN})
  if(NOT ARG_NAME OR NOT ARG_SOURCE OR NOT ARG_FUNCTIONS)
    message(FATAL_ERROR "nxc_add_module needs NAME, SOURCE and FUNCTIONS")
  endif()
  foreach(var TARGET CPU FEATURES)
    if(NOT ARG_${var} AND NXC_${var})
      set(ARG_${var} ${NXC_${var}})
    endif()
  endforeach()
  if(NOT ARG_NXC)
    if(NXC_EXECUTABLE)
      set(ARG_NXC ${NXC_EXECUTABLE})
    else()
      find_program(ARG_NXC nxc REQUIRED)
    endif()
  endif()
  get_filename_component(source ${ARG_SOURCE} ABSOLUTE)
  set(out ${CMAKE_CURRENT_BINARY_DIR}/nxc/${ARG_NAME})
  set(cmd ${ARG_NXC} aot ${source} --name ${ARG_NAME} -o ${out})
  foreach(fn IN LISTS ARG_FUNCTIONS)
    list(APPEND cmd --fn "${fn}")
  endforeach()
  if(ARG_TARGET)
    list(APPEND cmd --target ${ARG_TARGET})
  endif()
  if(ARG_CPU)
    list(APPEND cmd --cpu ${ARG_CPU})
  endif()
  if(ARG_FEATURES)
    list(APPEND cmd --features ${ARG_FEATURES})
  endif()
  add_custom_command(
    OUTPUT ${out}/${ARG_NAME}.h ${out}/lib${ARG_NAME}.a ${out}/libnxrt.a
    COMMAND ${cmd}
    DEPENDS ${source}
    COMMENT "nxc aot ${ARG_SOURCE} -> ${ARG_NAME}"
    VERBATIM)
  add_custom_target(${ARG_NAME}_nxc DEPENDS ${out}/${ARG_NAME}.h ${out}/lib${ARG_NAME}.a ${out}/libnxrt.a)
  add_library(${ARG_NAME} INTERFACE)
  add_dependencies(${ARG_NAME} ${ARG_NAME}_nxc)
  target_include_directories(${ARG_NAME} INTERFACE ${out})
  target_link_libraries(${ARG_NAME} INTERFACE ${out}/lib${ARG_NAME}.a ${out}/libnxrt.a)
endfunction()
