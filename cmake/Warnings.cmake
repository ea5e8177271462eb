# The warnings every target of rpm compiles with; a list of its own so that
# tests/docs/ compiles the documentation's snippets with the same ones.
set(RPM_WARNING_FLAGS -Wall -Wextra -Wpedantic -Wshadow -Wconversion
    -Wno-sign-conversion
    # GCC 12 reports false positives from inside Boost.Asio's
    # socket move constructors; nothing of ours trips it.
    -Wno-maybe-uninitialized)
if(RPM_WERROR)
  list(APPEND RPM_WARNING_FLAGS -Werror)
endif()

function(rpm_warnings target)
  target_compile_options(${target} PRIVATE ${RPM_WARNING_FLAGS})
endfunction()
