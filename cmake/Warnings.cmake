function(rpm_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wconversion
                         -Wno-sign-conversion
                         # GCC 12 reports false positives from inside Boost.Asio's
                         # socket move constructors; nothing of ours trips it.
                         -Wno-maybe-uninitialized)
  if(RPM_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()
