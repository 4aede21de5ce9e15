# `make fuzz` (PD_FUZZ=ON, with clang): libFuzzer drivers for the scene parser with --set
# overrides, the mesh readers (PLY, OBJ, STL through Assimp and our checks) and the frame reader,
# all under AddressSanitizer + UndefinedBehaviorSanitizer (docs/validation.md, "Fuzzing").
if(NOT CMAKE_C_COMPILER_ID MATCHES "Clang")
  message(FATAL_ERROR "PD_FUZZ needs clang (libFuzzer): configure with CC=clang")
endif()
foreach(target scene mesh frame)
  add_executable(fuzz_${target} ${CMAKE_SOURCE_DIR}/fuzz/fuzz_main.c
                                ${CMAKE_SOURCE_DIR}/fuzz/fuzz_targets.c)
  target_include_directories(fuzz_${target} PRIVATE ${CMAKE_SOURCE_DIR}/src)
  target_compile_definitions(fuzz_${target} PRIVATE PD_FUZZ_TARGET=pd_fuzz_${target})
  target_link_options(fuzz_${target} PRIVATE -fsanitize=fuzzer)
  target_link_libraries(fuzz_${target} PRIVATE peridot)
endforeach()
