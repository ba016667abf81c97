# Warnings and sanitizers, set per target.
function(papshim_set_warnings target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wshadow -Wnon-virtual-dtor -Wpedantic>
    $<$<COMPILE_LANGUAGE:C>:-Wall -Wextra>)
  if(PAPSHIM_WERROR)
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX,C>:-Werror>)
  endif()
  if(PAPSHIM_SANITIZE)
    target_compile_options(${target} PRIVATE -fsanitize=${PAPSHIM_SANITIZE} -fno-omit-frame-pointer)
    target_link_options(${target} PRIVATE -fsanitize=${PAPSHIM_SANITIZE})
  endif()
endfunction()
