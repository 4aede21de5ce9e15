# Run by `make install` (cmake --install) after the module is copied: records in the installed
# module where the shared library went, so that `import peridot` finds it without PERIDOT_LIB.
# PD_PYTHON_DIR, PD_LIBDIR and PD_SOVERSION are set by the install(CODE) before it.
set(site ${PD_PYTHON_DIR})
if(NOT IS_ABSOLUTE ${site})
  set(site ${CMAKE_INSTALL_PREFIX}/${site})
endif()
set(libdir ${PD_LIBDIR})
if(NOT IS_ABSOLUTE ${libdir})
  set(libdir ${CMAKE_INSTALL_PREFIX}/${libdir})
endif()
message(STATUS "Installing: $ENV{DESTDIR}${site}/peridot/_installed.py")
file(WRITE $ENV{DESTDIR}${site}/peridot/_installed.py
     "# written by make install: the library this module was installed with\n"
     "LIBRARY = '${libdir}/libperidot.so.${PD_SOVERSION}'\n")
