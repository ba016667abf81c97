# Layers the build enforces.  papshim is built in layers, each a directory
# and a target, each allowed to include only itself and the layers below:
#
#   shim/        papshim_core        sees shim, predictor, config, algorithms, common
#   predictor/   papshim_predictor   sees predictor, config, algorithms, common
#   config/      papshim_config      sees config, algorithms, common
#   algorithms/  papshim_algorithms  sees algorithms, common (papshim_executor too)
#   common/      papshim_common      sees common
#
# papshim_layer_view(TARGET DIR...) gives TARGET an include root holding
# only links to the named directories (<build>/layers/TARGET/DIR -> source),
# and no include root shows the whole source tree.  So an include across
# the layers upwards, say "shim/clock.h" from predictor/, does not compile.
function(papshim_layer_view target)
  set(view ${PROJECT_BINARY_DIR}/layers/${target})
  file(MAKE_DIRECTORY ${view})
  foreach(dir IN LISTS ARGN)
    if(NOT IS_SYMLINK ${view}/${dir})
      file(CREATE_LINK ${PROJECT_SOURCE_DIR}/${dir} ${view}/${dir} SYMBOLIC)
    endif()
  endforeach()
  get_target_property(kind ${target} TYPE)
  if(kind STREQUAL "INTERFACE_LIBRARY")
    target_include_directories(${target} INTERFACE $<BUILD_INTERFACE:${view}>)
  else()
    target_include_directories(${target} PUBLIC $<BUILD_INTERFACE:${view}>)
  endif()
endfunction()
